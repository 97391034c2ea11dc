import Foundation
import OrbitPostgres

/// Memberships (spec: Members): who is in a community and with which role. The last admin can
/// neither leave, be removed, nor be demoted (also a database rule: `members_last_admin`).
package struct MemberService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// The order of members: those still in first, then by role (admins first), then by who
    /// joined first.
    static let memberOrder = Paging.Keyset(
        "members", [.flag("m.left_at IS NOT NULL"), .label("m.role", type: "member_role"), .time("m.joined_at"), .id("m.id")], newestFirst: false)

    /// Members of a community, active ones first, then by role and join date (the acting user
    /// must be a member), `limit` at a time after `cursor`.
    /// - Parameter includeFormer: also list people who left. Their profile is no longer shared
    ///   with the community (users' row security), so their `display_name` is null.
    /// - Parameter guestsOnly: only guests (people without an account whom members added).
    package func list(
        of community: CommunityID, includeFormer: Bool = false, guestsOnly: Bool = false, limit: Int = 100, cursor: String? = nil,
        as actor: UserID
    ) async throws -> Page<Member> {
        try Validate.limit(limit, in: 1...500)
        let after = try Self.memberOrder.decode(cursor)
        return try await runner.asUserReading(actor) { connection in
            let rows = try await runner.queryAsMember(
                actor, of: community, on: connection,
                """
                SELECT \(unescaped: Member.columns), \(unescaped: Self.memberOrder.columns)
                FROM members m LEFT JOIN users u ON u.id = m.user_id
                WHERE m.community_id = \(community) AND (\(includeFormer) OR m.left_at IS NULL) AND (NOT \(guestsOnly) OR u.is_guest)
                  AND \(try Self.memberOrder.after(after))
                ORDER BY \(unescaped: Self.memberOrder.order)
                LIMIT \(limit + 1)
                """
            )
            return try Self.memberOrder.page(rows, limit: limit, item: Member.init(row:))
        }
    }

    /// The user ids of those a new split among everyone takes, for a member: the community's
    /// members who are in it and active (an inactive member is left out of new splits).
    package func activeUserIDs(of community: CommunityID, as actor: UserID) async throws -> [UserID] {
        try await runner.asUserReading(actor) { connection in
            return try await runner.queryAsMember(
                actor, of: community, on: connection,
                "SELECT user_id FROM members WHERE community_id = \(community) AND left_at IS NULL AND active ORDER BY joined_at, id"
            ).map { try $0.decode("user_id", as: UserID.self) }
        }
    }

    /// Sets whether a member is in new splits among everyone (`active`) and their default weight
    /// in a split by shares (1 to 1,000): admins for anyone, a member for themselves, any member
    /// for a guest. Old splits and balances stay as they are.
    package func setSplitDefaults(
        of user: UserID, in community: CommunityID, active: Bool? = nil, defaultWeight: Int? = nil, as actor: UserID
    ) async throws -> Member {
        if let defaultWeight, !(1...1000).contains(defaultWeight) {
            throw ServiceError.invalidInput(field: "default_weight", reason: "must be between 1 and 1000")
        }
        return try await runner.asUser(actor) { connection in
            let role = try await runner.requireMember(actor, of: community, on: connection)
            let member = try await activeMember(user, of: community, on: connection)
            guard role == .admin || user == actor || member.isGuest else {
                throw ServiceError.forbidden(rule: "only admins set another member's part in new splits")
            }
            guard active != nil || defaultWeight != nil else { return member }
            // A guest's row is written by no member's policy: the SQL function checks the caller.
            try await connection.query(
                member.isGuest
                    ? "SELECT orbit.set_guest_split_defaults(\(member.id), \(active), \(defaultWeight.map(Int32.init)))"
                    : """
                    UPDATE members SET active = coalesce(\(active), active), default_weight = coalesce(\(defaultWeight.map(Int32.init)), default_weight)
                    WHERE id = \(member.id)
                    """)
            return try await self.member(user, of: community, on: connection)
        }
    }

    /// Operator: which of `users` are active members of `community` (and it is not deleted), for
    /// the live updates' fan-out.
    package func activeMembersAsOperator(of community: CommunityID, among users: [UserID]) async throws -> [UserID] {
        try await runner.asOperator { connection in
            try await connection.query(
                """
                SELECT m.user_id FROM members m JOIN communities c ON c.id = m.community_id
                WHERE m.community_id = \(community) AND m.left_at IS NULL AND c.deleted_at IS NULL AND m.user_id = ANY(\(users.map(\.uuid)))
                """
            ).map { try $0.decode("user_id", as: UserID.self) }
        }
    }

    /// Operator: members of any community.
    package func listAsOperator(of community: CommunityID, includeFormer: Bool = true) async throws -> [Member] {
        try await runner.asOperator { connection in
            _ = try await CommunityService.community(community, on: connection)
            return try await connection.query(
                """
                SELECT \(unescaped: Member.columns) FROM members m JOIN users u ON u.id = m.user_id
                WHERE m.community_id = \(community) AND (\(includeFormer) OR m.left_at IS NULL)
                ORDER BY m.left_at IS NOT NULL, m.role, m.joined_at, m.id
                """
            ).map(Member.init(row:))
        }
    }

    /// Adds `user` to a community (admins). Someone who left is reactivated in their old row.
    package func add(_ user: UserID, to community: CommunityID, role: MemberRole = .member, as actor: UserID) async throws -> Member {
        try await runner.asUser(
            actor, auditingRefusal: .init(action: "member.added", community: community, target: ("user", user.uuid))
        ) {
            connection in
            // The actor's role and the user's membership, past or present, in one round trip.
            let results = try await connection.pipeline([
                "SELECT role::text AS role FROM members WHERE community_id = \(community) AND user_id = \(actor) AND left_at IS NULL",
                "SELECT id, left_at FROM members WHERE community_id = \(community) AND user_id = \(user)",
            ])
            guard let actorRole = try results[0].first?.decode("role", as: String.self) else {
                throw ServiceError.notFound("Community \(community)")
            }
            guard actorRole == MemberRole.admin.rawValue else { throw ServiceError.forbidden(rule: "only admins can add members") }
            let existing = try results[1].first.map { try $0.decode((MemberID, Date?).self) }
            if let existing, existing.1 == nil {
                throw ServiceError.conflict("User \(user) is already a member of community \(community).")
            }
            // One round trip: the membership (a former one reactivated in its old row), the member
            // as listed, and the audit entry.
            let id = existing?.0 ?? MemberID.random()
            let write: PostgresQuery =
                existing != nil
                ? """
                UPDATE members SET left_at = NULL, role = \(role.rawValue)::member_role, joined_at = now(), invited_by = \(actor)
                WHERE id = \(id)
                """
                : """
                INSERT INTO members (id, community_id, user_id, role, invited_by)
                VALUES (\(id), \(community), \(user), \(role.rawValue)::member_role, \(actor))
                """
            let written: [PostgresRows]
            do {
                written = try await connection.pipeline([
                    write,
                    Self.memberQuery(user, of: community),
                    try runner.auditStatement(
                        "member.added", by: actor, community: community, target: ("member", id.uuid),
                        metadata: ["user_id": user.description, "role": role.rawValue, "rejoined": existing == nil ? "false" : "true"]),
                ])
            } catch let error as PostgresError where error.constraint == "members_user_id_fkey" {
                throw ServiceError.notFound("User \(user)")
            } catch let error as PostgresError where error.constraint == "members_guest_one_community" {
                // sql/157_guests.sql: a guest is a member of the one community that added them.
                throw ServiceError.conflict("User \(user) is a guest of another community: add a guest of your own instead.")
            }
            guard let row = written[1].first else { throw ServiceError.notFound("Member \(user) of community \(community)") }
            return try Member(row: row)
        }
    }

    /// Removes a member (admins). The last admin cannot be removed.
    package func remove(_ user: UserID, from community: CommunityID, as actor: UserID) async throws {
        try await runner.asUser(
            actor, auditingRefusal: .init(action: "member.removed", community: community, target: ("user", user.uuid))
        ) {
            connection in
            try await runner.requireAdmin(actor, of: community, rule: "only admins can remove members", on: connection)
            let member = try await activeMember(user, of: community, on: connection)
            // A guest goes only once settled, which their own removal checks.
            guard !member.isGuest else {
                throw ServiceError.conflict("\(member.displayName ?? "This member") is a guest: remove them as a guest, once settled.")
            }
            try await requireAnotherAdmin(besides: member, on: connection)
            try await connection.query("UPDATE members SET left_at = now() WHERE id = \(member.id)")
            try await runner.audit(
                "member.removed", by: actor, community: community, target: ("member", member.id.uuid),
                metadata: ["user_id": user.description], on: connection
            )
        }
    }

    /// The acting user leaves a community. The last admin cannot leave.
    package func leave(_ community: CommunityID, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            let member = try await activeMember(actor, of: community, on: connection)
            try await requireAnotherAdmin(besides: member, on: connection)
            // Logged first: once the row says left, the community is no longer the actor's.
            try await runner.audit("member.left", by: actor, community: community, target: ("member", member.id.uuid), on: connection)
            try await connection.query("UPDATE members SET left_at = now() WHERE id = \(member.id)")
        }
    }

    /// Changes a member's role (admins). The last admin cannot be demoted.
    package func setRole(_ role: MemberRole, of user: UserID, in community: CommunityID, as actor: UserID) async throws -> Member {
        try await runner.asUser(
            actor, auditingRefusal: .init(action: "member.role_changed", community: community, target: ("user", user.uuid))
        ) {
            connection in
            try await runner.requireAdmin(actor, of: community, rule: "only admins can change member roles", on: connection)
            let member = try await activeMember(user, of: community, on: connection)
            guard member.role != role else { return member }
            guard !member.isGuest else { throw ServiceError.conflict("A guest cannot be an admin: they have no account to sign in with.") }
            if role == .member { try await requireAnotherAdmin(besides: member, on: connection) }
            try await connection.query("UPDATE members SET role = \(role.rawValue)::member_role WHERE id = \(member.id)")
            try await runner.audit(
                "member.role_changed", by: actor, community: community, target: ("member", member.id.uuid),
                metadata: ["user_id": user.description, "from": member.role.rawValue, "to": role.rawValue], on: connection
            )
            return try await self.member(user, of: community, on: connection)
        }
    }

    func member(_ user: UserID, of community: CommunityID, on connection: PostgresConnection) async throws -> Member {
        guard let row = try await connection.query(Self.memberQuery(user, of: community)).first else {
            throw ServiceError.notFound("Member \(user) of community \(community)")
        }
        return try Member(row: row)
    }

    /// `member(_:of:on:)`'s statement, for a pipeline.
    static func memberQuery(_ user: UserID, of community: CommunityID) -> PostgresQuery {
        "SELECT \(unescaped: Member.columns) FROM members m JOIN users u ON u.id = m.user_id WHERE m.community_id = \(community) AND m.user_id = \(user)"
    }

    func activeMember(_ user: UserID, of community: CommunityID, on connection: PostgresConnection) async throws -> Member {
        let member = try await member(user, of: community, on: connection)
        guard member.leftAt == nil else { throw ServiceError.notFound("Member \(user) of community \(community)") }
        return member
    }

    /// A clear error before the database's own check (`members_last_admin`), which also holds
    /// against concurrent changes.
    func requireAnotherAdmin(besides member: Member, on connection: PostgresConnection) async throws {
        guard member.role == .admin else { return }
        let others: Int64 = try await connection.query(
            """
            SELECT count(*) AS n FROM members
            WHERE community_id = \(member.communityID) AND role = 'admin' AND left_at IS NULL AND id <> \(member.id)
            """
        ).single().decode("n")
        guard others > 0 else {
            throw ServiceError.conflict("A community needs at least one admin: make another member an admin first.")
        }
    }

    /// The acting user's own membership of `community`, with their notification preferences.
    package func mine(in community: CommunityID, as actor: UserID) async throws -> MyMembership {
        try await runner.asUser(actor) { connection in try await Self.mine(actor, in: community, on: connection) }
    }

    /// Changes the acting user's own membership: their nickname in the community (`.some(nil)`
    /// clears it), which notification types they get (`false` turns one off; keys laid over
    /// the current ones), and where the community is in their list ("my groups": `pinned`, and
    /// `position` among the pinned, 0–9999, `.some(nil)` clearing it; unpinning clears it,
    /// whatever `position` says).
    package func updateMine(
        in community: CommunityID, nickname: String?? = nil, notificationPrefs: [NotificationType: Bool]? = nil, pinned: Bool? = nil,
        position: Int?? = nil, as actor: UserID
    ) async throws -> MyMembership {
        let nickname = try nickname.map { try $0.map { try Validate.text($0, field: "nickname", limit: 100) } }
        if case .some(.some(let position)) = position, !(0...9999).contains(position) {
            throw ServiceError.invalidInput(field: "position", reason: "must be between 0 and 9999")
        }
        return try await runner.asUser(actor) { connection in
            let current = try await Self.mine(actor, in: community, on: connection)
            var prefs = current.notificationPrefs
            for (type, on) in notificationPrefs ?? [:] { prefs[type.rawValue] = on }
            let pin = pinned ?? current.pinned
            let place: Int? = pin ? (position ?? current.position) : nil
            try await connection.query(
                """
                UPDATE members SET nickname = CASE WHEN \(nickname != nil) THEN \(nickname ?? nil) ELSE nickname END,
                    notification_prefs = \(try PostgresJSON(encoding: prefs)), pinned = \(pin), pin_position = \(place)
                WHERE id = \(current.member.id)
                """
            )
            return try await Self.mine(actor, in: community, on: connection)
        }
    }

    static func mine(_ user: UserID, in community: CommunityID, on connection: PostgresConnection) async throws -> MyMembership {
        guard
            let row = try await connection.query(
                """
                SELECT \(unescaped: Member.columns), m.notification_prefs, m.pinned, m.pin_position FROM members m JOIN users u ON u.id = m.user_id
                WHERE m.community_id = \(community) AND m.user_id = \(user) AND m.left_at IS NULL
                """
            ).first
        else { throw ServiceError.notFound("Community \(community)") }
        return MyMembership(
            member: try Member(row: row),
            notificationPrefs: try row.decode("notification_prefs", as: PostgresJSON.self).decode([String: Bool].self),
            pinned: try row.decode("pinned"), position: try row.decode("pin_position", as: Int32?.self).map(Int.init)
        )
    }
}
