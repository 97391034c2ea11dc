package import Foundation
package import OrbitPostgres

/// Chores, points and rewards for households (issue 23, docs/chores.md). Admins (parents) set
/// chores and rewards, review completions, resolve redemptions and adjust points; an assignee,
/// or a parent for their child, marks a chore done; children, signed in on a paired device
/// (`Principal.child`), see and do their own. The database keeps the invariants (sql/210_chores.sql):
/// the services check the permission matrix first, to say which rule refused.
package struct ChoreService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// What an admin gives to set a chore. `assignees` are user ids or family member ids.
    package struct NewChore: Sendable {
        package var title: String
        package var description: String?
        package var points: Int
        package var difficulty: ChoreDifficulty
        package var category: String?
        package var dueAt: Date?
        package var recurrenceRule: String?
        package var requiresApproval: Bool
        /// Today and how many days before an occurrence may be marked done (0 to 31).
        package var completionWindowDays: Int
        package var assignees: [UUID]
        /// Whether marking it done needs a photo (docs/chores.md, "Photo proof").
        package var requiresPhoto: Bool

        package init(
            title: String, description: String? = nil, points: Int, difficulty: ChoreDifficulty = .easy, category: String? = nil,
            dueAt: Date? = nil, recurrenceRule: String? = nil, requiresApproval: Bool = true,
            completionWindowDays: Int = ChoreService.defaultCompletionWindowDays, assignees: [UUID], requiresPhoto: Bool = false
        ) {
            self.requiresPhoto = requiresPhoto
            self.title = title
            self.description = description
            self.points = points
            self.difficulty = difficulty
            self.category = category
            self.dueAt = dueAt
            self.recurrenceRule = recurrenceRule
            self.requiresApproval = requiresApproval
            self.completionWindowDays = completionWindowDays
            self.assignees = assignees
        }
    }

    /// A chore's completion window unless its parent sets another: today and the week before.
    package static let defaultCompletionWindowDays = 7

    static let adminRule = "only admins (parents) set chores and rewards, review completions and adjust points"
    static let parentRule =
        "admins set and review anyone's chores and rewards; a parent who is not an admin, only their own children's (every assignee their child)"

    /// Requires that `actor` may set, change or review chores of `holders` in `community`: an
    /// admin anyone's; another member only when every one of them is their own family member.
    /// - Parameter role: the actor's role there, when already known (else it is read, and someone
    ///   not a member finds nothing).
    func requireMaySet(
        for holders: [Holder], in community: CommunityID, as actor: UserID, role: MemberRole? = nil, on connection: PostgresConnection
    ) async throws {
        let known = role
        let role = if let known { known } else { try await runner.requireMember(actor, of: community, on: connection) }
        guard role != .admin else { return }
        let children = Set(
            try await connection.query("SELECT unnest(orbit.parent_family_member_ids()) AS id").map { try $0.decode("id", as: FamilyMemberID.self) })
        let ownChildren = holders.allSatisfy { holder in
            if case .familyMember(let child) = holder { children.contains(child) } else { false }
        }
        guard !holders.isEmpty, ownChildren else { throw ServiceError.forbidden(rule: Self.parentRule) }
    }

    /// Sets a chore (admins), assigned to members and family members of members.
    package func create(_ new: NewChore, in community: CommunityID, as actor: UserID) async throws -> Chore {
        let title = try Validate.text(new.title, field: "title", limit: 200)
        let description = try new.description.map { try Validate.text($0, field: "description", limit: 2000, multiline: true) }
        let category = try new.category.map { try Validate.text($0, field: "category", limit: 50) }
        guard (1...1000).contains(new.points) else { throw ServiceError.invalidInput(field: "points", reason: "must be from 1 to 1000") }
        guard (1...50).contains(Set(new.assignees).count) else {
            throw ServiceError.invalidInput(field: "assignees", reason: "must name from 1 to 50 people (user or family member ids)")
        }
        guard (0...31).contains(new.completionWindowDays) else {
            throw ServiceError.invalidInput(field: "completion_window_days", reason: "must be from 0 (today only) to 31")
        }
        if let rule = new.recurrenceRule {
            _ = try RecurrenceRule.parsed(rule)
            guard new.dueAt != nil else {
                throw ServiceError.invalidInput(field: "due_at", reason: "is required with a recurrence rule (the first occurrence)")
            }
        }
        return try await runner.asUser(actor, auditingRefusal: .init(action: "chore.created", community: community)) { connection in
            let role = try await runner.requireMember(actor, of: community, on: connection)
            let holders = try await resolve(new.assignees, on: connection)
            try await requireMaySet(for: holders, in: community, as: actor, role: role, on: connection)
            let zone = new.recurrenceRule == nil ? nil : try await runner.timeZone(of: community, on: connection).identifier
            let endsAt = try Self.lastOccurrence(rule: new.recurrenceRule, start: new.dueAt, zone: zone)
            let id: ChoreID = try await connection.query(
                """
                INSERT INTO chores (community_id, title, description, points, difficulty, category, due_at, recurrence_rule,
                    recurrence_timezone, requires_approval, completion_window_days, recurrence_ends_at, created_by, requires_photo)
                VALUES (\(community), \(title), \(description), \(Int32(new.points)), \(new.difficulty.rawValue), \(category), \(new.dueAt),
                    \(new.recurrenceRule), \(zone), \(new.requiresApproval), \(Int16(new.completionWindowDays)), \(endsAt), \(actor),
                    \(new.requiresPhoto))
                RETURNING id
                """
            ).single().decode("id")
            for holder in holders {
                try await connection.query(
                    "INSERT INTO chore_assignees (chore_id, user_id, family_member_id) VALUES (\(id), \(holder.userID), \(holder.familyMemberID))")
            }
            try await runner.audit(
                "chore.created", by: actor, community: community, target: ("chore", id.uuid), metadata: ["title": title], on: connection)
            guard let chore = try await chore(id, on: connection) else { throw ServiceError.changedMeanwhile }
            return chore
        }
    }

    /// The order of a community's chores: those with a due time first, soonest first; then the
    /// others, oldest first.
    static let choreOrder = Paging.Keyset(
        "chores", [.flag("c.due_at IS NULL"), .time("coalesce(c.due_at, c.created_at)"), .time("c.created_at"), .id("c.id")], newestFirst: false)

    /// A page of the community's live chores (archived ones too with `archived`), or those of one
    /// holder (`for`), with the occurrence a completion now counts for. A child sees only their
    /// own, never archived ones.
    package func list(
        in community: CommunityID, for holderID: UUID? = nil, archived: Bool = false, limit: Int = 100, cursor: String? = nil,
        as principal: Principal
    ) async throws -> Page<Chore> {
        try Validate.limit(limit, in: 1...200)
        let after = try Self.choreOrder.decode(cursor)
        let archived: Bool = if case .user = principal { archived } else { false }
        return try await runner.run(as: principal) { connection in
            try await runner.requireAccess(principal, to: community, on: connection)
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Chore.columns), \(unescaped: Self.choreOrder.columns) FROM chores c
                WHERE c.community_id = \(community) AND (\(archived) OR c.archived_at IS NULL)
                  AND (\(holderID)::uuid IS NULL OR EXISTS (SELECT FROM chore_assignees a WHERE a.chore_id = c.id AND a.holder_id = \(holderID)))
                  AND \(try Self.choreOrder.after(after))
                ORDER BY \(unescaped: Self.choreOrder.order) LIMIT \(limit + 1)
                """)
            var page = try Self.choreOrder.page(rows, limit: limit, item: Chore.init(row:))
            page.items = try await withOccurrences(page.items, on: connection)
            return page
        }
    }

    /// One chore, as `principal` sees it.
    package func get(_ id: ChoreID, as principal: Principal) async throws -> Chore {
        try await runner.run(as: principal) { connection in
            guard let chore = try await chore(id, on: connection) else { throw ServiceError.notFound("Chore \(id)") }
            return chore
        }
    }

    /// Marks an occurrence of a chore done (the current one unless `occurrence` names another):
    /// by `holderID` (an assignee; the actor themselves when nil), recorded by the actor — the
    /// assignee, the child's parent, an admin for a family member, or the child on their
    /// device. Approved at once when the chore needs no approval. `photo` is the proof: an image
    /// uploaded to the community (required when the chore says so), which the parents see before
    /// they approve.
    package func complete(
        _ id: ChoreID, occurrence: Date? = nil, by holderID: UUID? = nil, note: String? = nil, photo: MediaID? = nil, as principal: Principal
    ) async throws -> ChoreCompletion {
        let note = try note.map { try Validate.text($0, field: "note", limit: 1000, multiline: true) }
        return try await runner.run(as: principal) { connection in
            guard let chore = try await chore(id, on: connection) else { throw ServiceError.notFound("Chore \(id)") }
            let holder: Holder
            switch principal {
            case .child(let session):
                guard holderID == nil || holderID == session.child.uuid else {
                    throw ServiceError.forbidden(rule: "a child marks only their own chores done")
                }
                holder = .familyMember(session.child)
            case .user(let actor):
                holder = try await resolve([holderID ?? actor.uuid], on: connection)[0]
                try await requireMayAct(for: holder, as: actor, in: chore.communityID, on: connection)
            }
            guard chore.assignees.contains(holder) else { throw ServiceError.conflict(field: "by", reason: "is not assigned this chore") }
            if chore.requiresPhoto, photo == nil {
                throw ServiceError.conflict(field: "photo_media_id", reason: "is required: this chore is marked done with a photo")
            }
            let now = runner.now()
            let at = try occurrence.map { try Self.requireOccurrence($0, of: chore) } ?? Self.currentOccurrence(of: chore, now: now)
            guard let at else { throw ServiceError.conflict("That chore has no occurrence left.") }
            let zone = Self.zone(of: chore)
            if chore.recurrenceRule != nil, CivilDate(containing: at, in: zone) > CivilDate(containing: now, in: zone) {
                throw ServiceError.conflict(field: "occurrence", reason: "is on a day still to come: a chore is done on its day or after")
            }
            // No free points from the past: today and the window's days before, in the chore's zone.
            if chore.recurrenceRule != nil || chore.dueAt != nil,
                CivilDate(containing: at, in: zone) < CivilDate(containing: now, in: zone).adding(days: -chore.completionWindowDays)
            {
                throw ServiceError.conflict(
                    field: "occurrence",
                    reason: chore.completionWindowDays == 0
                        ? "is before today: this chore is marked done on its day only"
                        : "is more than \(chore.completionWindowDays) days ago: this chore's occurrences are marked done within \(chore.completionWindowDays) days"
                )
            }
            let recordedBy: UserID? = if case .user(let actor) = principal { actor } else { nil }
            return try ChoreCompletion(
                row: try await connection.query(
                    """
                    INSERT INTO chore_completions (chore_id, occurrence_at, user_id, family_member_id, recorded_by, note, completed_at, photo_media_id)
                    VALUES (\(id), \(at), \(holder.userID), \(holder.familyMemberID), \(recordedBy), \(note), \(now), \(photo))
                    RETURNING \(unescaped: ChoreCompletion.columns)
                    """
                ).single())
        }
    }

    /// Approves (credits the points, once) or rejects a pending completion (admins; a parent who is
    /// not one, their own child's).
    package func review(_ id: ChoreCompletionID, approve: Bool, as actor: UserID) async throws -> ChoreCompletion {
        try await decide(
            as: actor, lookup: "SELECT community_id, user_id, family_member_id FROM chore_completions WHERE id = \(id)", missing: "Completion \(id)",
            update: """
                UPDATE chore_completions SET status = \(approve ? "approved" : "rejected"), reviewed_by = \(actor), reviewed_at = now()
                WHERE id = \(id) AND status = 'pending' RETURNING \(unescaped: ChoreCompletion.columns)
                """,
            decided: "That completion was already reviewed.", action: approve ? "chore.approved" : "chore.rejected",
            target: ("chore_completion", id.uuid), ChoreCompletion.init(row:))
    }

    /// An admin's decision on a row that waits for one (a completion to review, a redemption to
    /// resolve): `lookup` selects the row's `community_id` and holder (no row: `missing` is not
    /// found), the actor must be an admin there or the holder's parent, `update` (an UPDATE … WHERE still undecided RETURNING) makes
    /// the decision or `decided` is the conflict, and the decision is audited as `action`.
    func decide<Result: Sendable>(
        as actor: UserID, lookup: PostgresQuery, missing: String, update: PostgresQuery, decided: String, action: String,
        target: (type: String, id: UUID), _ decode: (PostgresRow) throws -> Result
    ) async throws -> Result {
        try await runner.asUser(actor) { connection in
            guard let row = try await connection.query(lookup).first else { throw ServiceError.notFound(missing) }
            let community = try row.decode("community_id", as: CommunityID.self)
            try await requireMaySet(for: [try Holder(row: row)], in: community, as: actor, on: connection)
            guard let row = try await connection.query(update).first else { throw ServiceError.conflict(decided) }
            try await runner.audit(action, by: actor, community: community, target: target, on: connection)
            return try decode(row)
        }
    }

    /// The order of completions: newest first.
    static let completionOrder = Paging.Keyset.timeAndID("chore-completions", time: "completed_at")

    /// A page of completions of the community's chores, newest first; `pending` ones only when
    /// asked. A child sees their own.
    package func completions(
        in community: CommunityID, pendingOnly: Bool = false, limit: Int = 100, cursor: String? = nil, as principal: Principal
    ) async throws -> Page<ChoreCompletion> {
        try Validate.limit(limit, in: 1...200)
        let after = try Self.completionOrder.decode(cursor)
        return try await runner.run(as: principal) { connection in
            try await runner.requireAccess(principal, to: community, on: connection)
            let rows = try await connection.query(
                """
                SELECT \(unescaped: ChoreCompletion.columns), \(unescaped: Self.completionOrder.columns) FROM chore_completions
                WHERE community_id = \(community) AND (NOT \(pendingOnly) OR status = 'pending') AND \(try Self.completionOrder.after(after))
                ORDER BY \(unescaped: Self.completionOrder.order) LIMIT \(limit + 1)
                """)
            return try Self.completionOrder.page(rows, limit: limit, item: ChoreCompletion.init(row:))
        }
    }

    /// One completion the principal can see (a child sees their own).
    package func completion(_ id: ChoreCompletionID, as principal: Principal) async throws -> ChoreCompletion {
        try await runner.run(as: principal) { connection in
            guard let row = try await connection.query("SELECT \(unescaped: ChoreCompletion.columns) FROM chore_completions WHERE id = \(id)").first
            else { throw ServiceError.notFound("Completion \(id)") }
            return try ChoreCompletion(row: row)
        }
    }

    // MARK: - Shared checks

    /// One chore the actor can see, or nil.
    func chore(_ id: ChoreID, on connection: PostgresConnection) async throws -> Chore? {
        try await chores("SELECT \(unescaped: Chore.columns) FROM chores c WHERE c.id = \(id)", on: connection).first
    }

    /// The chores `query` selects (`Chore.columns` of `c`), with their current occurrence and
    /// whether it is done.
    func chores(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> [Chore] {
        try await withOccurrences(try await connection.query(query).map(Chore.init(row:)), on: connection)
    }

    /// `chores` with their current occurrence and whether it is done.
    func withOccurrences(_ chores: [Chore], on connection: PostgresConnection) async throws -> [Chore] {
        var chores = chores
        let now = runner.now()
        for index in chores.indices {
            chores[index].nextOccurrenceAt = try Self.currentOccurrence(of: chores[index], now: now)
        }
        let pending = chores.filter { $0.nextOccurrenceAt != nil }
        if !pending.isEmpty {
            let rows = try await connection.query(
                """
                SELECT chore_id, occurrence_at FROM chore_completions
                WHERE status <> 'rejected' AND chore_id = ANY(\(pending.map { $0.id.uuid })) AND occurrence_at = ANY(\(pending.compactMap { $0.nextOccurrenceAt }))
                """)
            var done: [ChoreID: [Date]] = [:]
            for row in rows {
                let (chore, at) = try row.decode((ChoreID, Date).self)
                done[chore, default: []].append(at)
            }
            for index in chores.indices {
                if let at = chores[index].nextOccurrenceAt {
                    chores[index].nextOccurrenceDone = done[chores[index].id]?.contains { abs($0.timeIntervalSince(at)) < 0.001 } ?? false
                }
            }
        }
        return chores
    }

    /// Whether `actor` may act for `holder` (mark a chore done, redeem): themselves, their own
    /// family member, or any member's family member when an admin.
    func requireMayAct(for holder: Holder, as actor: UserID, in community: CommunityID, on connection: PostgresConnection) async throws {
        let role = try await runner.requireMember(actor, of: community, on: connection)
        switch holder {
        case .user(let user) where user == actor:
            return
        case .familyMember(let child):
            if role == .admin { return }
            if try await FamilyService.isGuardian(of: child, on: connection) { return }
        default:
            break
        }
        throw ServiceError.forbidden(rule: "people act for themselves; a parent for their own child, an admin for any child")
    }

    /// Which of users and family members each id is; an unknown id is refused, naming it.
    func resolve(_ ids: [UUID], on connection: PostgresConnection) async throws -> [Holder] {
        let found = try await runner.holders(ids, field: "assignees", on: connection)
        return Array(Set(ids)).sorted { $0.uuidString < $1.uuidString }.compactMap { found[$0] }
    }

    // MARK: - Occurrences

    /// The zone a chore's occurrences are in: the one it was set in (UTC without one).
    static func zone(of chore: Chore) -> TimeZone {
        chore.recurrenceTimezone.flatMap(TimeZone.init(identifier:)) ?? TimeZone(secondsFromGMT: 0) ?? .current
    }

    /// A chore's series: its rule from its first occurrence, in its zone. A COUNT rule whose last
    /// occurrence is known is the same rule UNTIL that instant, which the series expands from
    /// the period before the window asked for, not from its first occurrence.
    static func series(of chore: Chore) throws -> RecurringSeries? {
        guard let text = chore.recurrenceRule, let start = chore.dueAt else { return nil }
        var rule = try RecurrenceRule.parsed(text)
        if rule.count != nil, let end = chore.recurrenceEndsAt {
            rule.count = nil
            rule.until = .instant(end)
        }
        return series(rule, start: start, zone: zone(of: chore))
    }

    static func series(_ rule: RecurrenceRule, start: Date, zone: TimeZone) -> RecurringSeries {
        let wall = Int(start.timeIntervalSince1970.rounded(.down)) + zone.secondsFromGMT(for: start)
        return RecurringSeries(rule: rule, start: LocalDateTime(secondsAsIfUTC: wall), timeZone: zone)
    }

    /// The last occurrence of a rule that ends (COUNT or UNTIL); nil for an endless one.
    static func lastOccurrence(rule text: String?, start: Date?, zone identifier: String?) throws -> Date? {
        guard let text, let start else { return nil }
        let rule = try RecurrenceRule.parsed(text)
        guard rule.count != nil || rule.until != nil else { return nil }
        let zone = identifier.flatMap(TimeZone.init(identifier:)) ?? TimeZone(secondsFromGMT: 0) ?? .current
        // COUNT is at most 10,000; an UNTIL of a daily rule is some thousands of days at most.
        // A rule that ends before it produces anything ends at its start.
        return series(rule, start: start, zone: zone).occurrences(limit: rule.count ?? 100_000).last ?? start
    }

    /// The occurrences of a recurring chore in [from, to), in the zone it was set in.
    static func occurrences(of chore: Chore, from: Date?, to: Date?, limit: Int) throws -> [Date] {
        guard let series = try series(of: chore) else { return [] }
        let found = series.occurrences(from: from, to: to, limit: limit)
        guard let to else { return found }
        return found.filter { $0 < to }
    }

    /// The occurrence a completion made now counts for: a one-off chore's only one (its due
    /// time, or its creation); a recurring chore's first occurrence on or after the start of
    /// today in its zone (today's, even when late; otherwise the next). nil when none is left.
    static func currentOccurrence(of chore: Chore, now: Date) throws -> Date? {
        guard chore.recurrenceRule != nil else { return chore.dueAt ?? chore.createdAt }
        let zone = zone(of: chore)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return try occurrences(of: chore, from: calendar.startOfDay(for: now), to: nil, limit: 1).first
    }

    /// `at`, if it is an occurrence of the chore.
    static func requireOccurrence(_ at: Date, of chore: Chore) throws -> Date {
        let matches =
            chore.recurrenceRule == nil
            ? [chore.dueAt ?? chore.createdAt].filter { abs($0.timeIntervalSince(at)) < 0.001 }
            : try occurrences(of: chore, from: at, to: at.addingTimeInterval(1), limit: 1)
        guard let match = matches.first else {
            throw ServiceError.conflict(field: "occurrence", reason: "is not an occurrence of this chore")
        }
        return match
    }
}

extension RequestRunner {
    /// `community`'s time zone (`settings.timezone`; UTC without one).
    func timeZone(of community: CommunityID, on connection: PostgresConnection) async throws -> TimeZone {
        let zone = try await connection.query("SELECT settings ->> 'timezone' AS timezone FROM communities WHERE id = \(community)")
            .first?.decode("timezone", as: String?.self)
        return CommunitySettings(timezone: zone ?? nil).timeZone
    }
}
