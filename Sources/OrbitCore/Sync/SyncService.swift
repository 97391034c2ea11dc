package import Foundation
import OrbitPostgres

/// The change feed of a community (issue 20, docs/sync.md): its current state, then every change
/// after it, in windows a follower resumes from without ever skipping a commit.
///
/// The log records which entity each transaction changed, with the transaction's id. A cursor
/// carries the snapshot up to which the follower has everything (`since`); a pull takes a new
/// snapshot and delivers the changes of the transactions visible in it but not in `since`. A
/// transaction still running is visible in neither, so it comes in a later window, whenever it
/// commits, however long it ran and in whatever order writers commit; a long transaction holds
/// back nothing but itself. The log holds no data: each page reads the entities as the follower
/// (row-level security) the way their GETs do, so `data` is what the follower may see now, and an
/// entity they can no longer see is a `delete`.
package struct SyncService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// Reads each entity of a page with its own query, as before issue 38 (for `orbit-bench
    /// sync` to measure the difference in one run); otherwise a page's entities of a kind are
    /// read with one query where the kind allows it.
    @TaskLocal package static var loadsOneAtATime = false

    /// The entities of the feed, in the order the initial state lists them.
    static let entities: [SyncEntity] = [
        .community, .member, .event, .rsvp, .post, .comment, .media, .expense, .dues, .duesPayment, .notification, .conversation, .message,
        // Added later, so at the end: a cursor in the middle of the state names its entity by
        // position here, and one a phone holds must still mean the same one.
        .familyMember, .recurringCharge, .exchangeRate, .chore, .choreCompletion, .reward, .rewardRedemption, .points, .expenseCategory,
        .paymentHandle,
    ]

    /// What the user's own feed lists (`GET /users/me/changes`): what belongs to them and to no
    /// community. A cursor in its state names its entity by position here.
    static let ownEntities: [SyncEntity] = [.user, .device, .familyMember, .notification, .paymentHandle]

    /// One page of `community`'s feed for `actor`: from the start (no cursor: the current state,
    /// then changes) or after `cursor` (a `next_cursor` of an earlier page).
    /// - Throws: `ServiceError.gone` when the cursor is older than the log's retention (resync
    ///   from scratch); `invalidInput` for a cursor this server did not make.
    package func changes(of community: CommunityID, cursor: String? = nil, limit: Int = 500, as actor: UserID) async throws -> ChangePage {
        try await changes(of: community, cursor: cursor, limit: limit, as: .user(actor))
    }

    /// The feed as a user or a signed-in child reads it: a child's device syncs its chores,
    /// completions, rewards, redemptions and points in the one community it was paired for
    /// (`SyncEntity.childEntities`, under row-level security as the child).
    package func changes(of community: CommunityID, cursor: String? = nil, limit: Int = 500, as actor: Principal) async throws -> ChangePage {
        try Validate.limit(limit, in: 1...1000)
        let position = try SyncCursor(cursor)
        // One snapshot for the whole page: membership, the log and every entity as of one
        // moment. (Read statement by statement, a member leaving between the membership check
        // and the reads turned their entities into deletes, which a rejoin never undid.)
        return try await runner.inOneSnapshot(as: actor) { connection in
            // Someone no longer in the community (left, removed, or it was deleted) is told to
            // drop it all: one tombstone for the community, and a cursor at the start, so that
            // if they come back (rejoin, or the community is restored) they get all of it again.
            guard try await Self.isMember(actor, of: community, on: connection) else {
                return ChangePage(
                    changes: [Change(entity: .community, id: community.uuid, op: .delete, data: nil)],
                    nextCursor: SyncCursor.start.encoded, hasMore: false)
            }
            return try await page(of: .community(community), at: position, limit: limit, actor, on: connection)
        }
    }

    /// One page of the user's own feed (`GET /users/me/changes`): their account, their devices,
    /// their family members and their notifications of no community; everything else they see
    /// is in their communities' feeds. Its cursors are its own (a community's is refused here).
    package func ownChanges(cursor: String? = nil, limit: Int = 500, as actor: UserID) async throws -> ChangePage {
        try Validate.limit(limit, in: 1...1000)
        let position = try SyncCursor(cursor, own: true)
        return try await runner.inOneSnapshot(as: .user(actor)) { connection in
            try await page(of: .own(actor), at: position, limit: limit, .user(actor), on: connection)
        }
    }

    /// Whose feed a page is of.
    enum Feed {
        case community(CommunityID)
        /// A user's own (`ownEntities`).
        case own(UserID)

        /// The community whose entities the page reads; nil for a user's own.
        var community: CommunityID? {
            if case .community(let community) = self { community } else { nil }
        }

        var isOwn: Bool { community == nil }
    }

    private func page(of feed: Feed, at position: SyncCursor, limit: Int, _ actor: Principal, on connection: PostgresConnection) async throws
        -> ChangePage
    {
        switch position {
        case .start:
            let mark = try await Self.snapshot(on: connection)
            return try await state(of: feed, mark: mark, entity: 0, after: nil, limit: limit, actor, on: connection)
        case .state(let mark, let entity, let after):
            try await Self.requireKept(since: mark, on: connection)
            return try await state(of: feed, mark: mark, entity: entity, after: after, limit: limit, actor, on: connection)
        case .log(let since, let window):
            try await Self.requireKept(since: since, on: connection)
            return try await log(of: feed, since: since, window: window, limit: limit, actor, on: connection)
        }
    }

    private static func snapshot(on connection: PostgresConnection) async throws -> String {
        try await connection.query("SELECT pg_current_snapshot()::text AS snapshot").single().decode("snapshot")
    }

    /// Refuses a cursor that may lack a change compaction removed. What a follower at `since`
    /// lacks belongs to transactions not visible in `since`, all at or after its xmin; compaction
    /// records the newest transaction it removed changes of. (A cursor in the middle of a window
    /// is judged by its `since` too: the window's snapshot is newer than what is still to come.)
    private static func requireKept(since: String, on connection: PostgresConnection) async throws {
        let kept = try await connection.query(
            "SELECT pg_snapshot_xmin(\(since)::pg_snapshot) > orbit.changes_compacted_through() AS kept"
        ).single().decode("kept", as: Bool.self)
        guard kept else {
            throw ServiceError.gone(
                "This cursor is older than the change log keeps (\(retentionDays) days): sync the community again from the start, without a cursor.")
        }
    }

    /// A member, or a child whose device was paired for the community (and is not revoked).
    private static func isMember(_ principal: Principal, of community: CommunityID, on connection: PostgresConnection) async throws -> Bool {
        switch principal {
        case .user(let user):
            return try await connection.query(
                """
                SELECT FROM members m JOIN communities c ON c.id = m.community_id
                WHERE m.community_id = \(community) AND m.user_id = \(user) AND m.left_at IS NULL AND c.deleted_at IS NULL
                """
            ).first != nil
        case .child:
            return try await connection.query("SELECT \(community)::uuid = ANY(orbit.child_community_ids()) AS member").single().decode(
                "member", as: Bool.self)
        }
    }

    /// The entities `principal` syncs in `feed`, in the order the state lists them.
    static func entities(for principal: Principal, in feed: Feed) -> [SyncEntity] {
        switch (principal, feed) {
        case (.user, .community): entities
        case (.user, .own): ownEntities
        case (.child, _): SyncEntity.childEntities
        }
    }

    /// The current state, entity by entity, in id order. When it is all listed, the log follows
    /// from `mark` (the oldest transaction running when the listing began): every transaction at
    /// or after it may have changed what was read, so its changes come next (an entity already
    /// read in its new state comes again; harmless), and every one before it had ended.
    private func state(
        of feed: Feed, mark: String, entity start: Int, after first: UUID?, limit: Int, _ actor: Principal, on connection: PostgresConnection
    ) async throws -> ChangePage {
        let entities = Self.entities(for: actor, in: feed)
        var changes: [Change] = []
        var index = start
        var after = first
        while index < entities.count, changes.count < limit {
            let entity = entities[index]
            let wanted = limit - changes.count
            let ids: [UUID]
            switch feed {
            case .community(let community):
                ids = try await entity.currentIDs(in: community, after: after, limit: wanted, reader: actor, on: connection)
            case .own(let user):
                ids = try await entity.ownIDs(of: user, after: after, limit: wanted, on: connection)
            }
            // One query for the page's entities of a kind, where the kind allows it.
            let loaded = Self.loadsOneAtATime ? nil : try await entity.loadAll(ids, in: feed.community, reader: actor, runner: runner, on: connection)
            for id in ids {
                let data: (any Encodable & Sendable)?
                if let loaded {
                    data = loaded[id]
                } else {
                    data = try await entity.load(id, in: feed.community, reader: actor, runner: runner, on: connection)
                }
                if let data { changes.append(Change(entity: entity, id: id, op: .upsert, data: data)) }
            }
            if ids.count < wanted {
                index += 1
                after = nil
            } else {
                after = ids.last
            }
        }
        guard index < entities.count else {
            // Listed as of at least `mark`: the log goes on from there.
            return ChangePage(
                changes: changes, nextCursor: SyncCursor.log(since: mark, window: nil).encoded(own: feed.isOwn), hasMore: true)
        }
        return ChangePage(
            changes: changes, nextCursor: SyncCursor.state(mark: mark, entity: index, after: after).encoded(own: feed.isOwn), hasMore: true)
    }

    /// The changes of the transactions visible in the window's snapshot (`target`: a new one
    /// unless a window is being paged) but not in `since`, after (xid, seq); each entity once per
    /// page, where its last change is, in the state it has now.
    private func log(
        of feed: Feed, since: String, window: SyncCursor.Window?, limit: Int, _ actor: Principal, on connection: PostgresConnection
    ) async throws -> ChangePage {
        // A window being paged keeps its snapshot; a new one starts now.
        let target = if let window { window.target } else { try await Self.snapshot(on: connection) }
        let cursor = (xid: window?.xid ?? 0, seq: window?.seq ?? -1)
        // Everything below `since`'s xmin is visible in it: the scan starts there. A community's
        // rows (`idx_changes_feed`), or a user's own (no community: `idx_changes_own`): each its
        // own statement text, so that each keeps its plan, an index scan in (xid, seq) order
        // that stops at the page's end.
        let scope: PostgresQuery =
            switch feed {
            case .community(let community): "c.community_id = \(community)"
            case .own(let user): "c.community_id IS NULL AND c.user_id = \(user)"
            }
        // That plan, whatever the statistics say (`orderedScanOnly`), in the same round trip.
        let results = try await connection.pipeline(
            Self.orderedScanOnly + [
                """
                SELECT c.xid::text AS xid, c.seq, c.entity, c.entity_id
                FROM changes c
                WHERE \(scope) AND c.xid >= pg_snapshot_xmin(\(since)::pg_snapshot)
                  AND pg_visible_in_snapshot(c.xid, \(target)::pg_snapshot) AND NOT pg_visible_in_snapshot(c.xid, \(since)::pg_snapshot)
                  AND (c.xid, c.seq) > (\(String(cursor.xid))::xid8, \(cursor.seq)::bigint)
                  AND c.entity = ANY(\(Self.entities(for: actor, in: feed).map(\.rawValue)))
                ORDER BY c.xid, c.seq
                LIMIT \(limit + 1)
                """
            ] + Self.anyPlan)
        let rows = results[Self.orderedScanOnly.count]
        var last = cursor
        var order: [(entity: SyncEntity, id: UUID)] = []
        var position: [String: Int] = [:]
        for row in rows.prefix(limit) {
            let (xidText, seq, name, id) = try row.decode((String, Int64, String, UUID).self)
            guard let xid = UInt64(xidText) else { continue }
            last = (xid, seq)
            guard let entity = SyncEntity(rawValue: name) else { continue }
            position["\(name)/\(id)"] = order.count
            order.append((entity, id))
        }
        // Each entity once, where its last change is; read with one query per kind where the
        // kind allows it.
        let latest = order.enumerated().filter { position["\($0.element.entity.rawValue)/\($0.element.id)"] == $0.offset }.map(\.element)
        var batches: [SyncEntity: [UUID: any Encodable & Sendable]] = [:]
        for (entity, entries) in Dictionary(grouping: latest, by: \.entity) where !Self.loadsOneAtATime {
            batches[entity] = try await entity.loadAll(entries.map(\.id), in: feed.community, reader: actor, runner: runner, on: connection)
        }
        var changes: [Change] = []
        var listed = Set(position.keys)
        for entry in latest {
            let data: (any Encodable & Sendable)?
            if let batch = batches[entry.entity] {
                data = batch[entry.id]
            } else {
                data = try await entry.entity.load(entry.id, in: feed.community, reader: actor, runner: runner, on: connection)
            }
            changes.append(Change(entity: entry.entity, id: entry.id, op: data == nil ? .delete : .upsert, data: data))
            guard data == nil else { continue }
            // What goes with a deleted entity (a post's comments, an event's RSVPs) goes too.
            for (entity, id) in try await entry.entity.dependents(of: entry.id, on: connection)
            where listed.insert("\(entity.rawValue)/\(id)").inserted {
                changes.append(Change(entity: entity, id: id, op: .delete, data: nil))
            }
        }
        guard rows.count > limit else {
            // The window is done: the follower has everything visible in `target`.
            return ChangePage(
                changes: changes, nextCursor: SyncCursor.log(since: target, window: nil).encoded(own: feed.isOwn), hasMore: false)
        }
        let next = SyncCursor.Window(target: target, xid: last.xid, seq: last.seq)
        return ChangePage(changes: changes, nextCursor: SyncCursor.log(since: since, window: next).encoded(own: feed.isOwn), hasMore: true)
    }

    /// The log's page is read in (xid, seq) order from its index and stops at the page's end;
    /// no other plan reads less. Where the statistics do not know of the window's changes yet
    /// (a community that grew since the table's last ANALYZE), the planner, believing there were
    /// next to none, read every change left in the window for every page instead and sorted
    /// them (a bitmap scan of the policies' OR, or the `xid` index): a backlog in quadratic time,
    /// 100,000 changes at 50 ms a page instead of 1 (docs/sync.md, "Reading the log"). Turned
    /// off, those plans are priced out rather than forbidden. They hold for that statement, and
    /// for the policy helpers it may be the first on its connection to call, whose cached plans
    /// are lookups by key either way; `anyPlan` undoes them for the entities' reads.
    static let orderedScanOnly: [PostgresQuery] = [
        "SET LOCAL enable_bitmapscan = off", "SET LOCAL enable_sort = off", "SET LOCAL enable_incremental_sort = off",
    ]
    static let anyPlan: [PostgresQuery] = [
        "SET LOCAL enable_bitmapscan TO DEFAULT", "SET LOCAL enable_sort TO DEFAULT", "SET LOCAL enable_incremental_sort TO DEFAULT",
    ]

    /// How long the log keeps a change.
    package static let retentionDays = 30
}
