import Foundation
package import OrbitCore
package import OrbitPostgres

/// The sync feed under concurrent writers (issues 20 and 38): several writers run transactions
/// of random length that overlap (creates, edits, soft and hard deletes, members leaving and
/// coming back, users and children renamed, some rolled back), more transactions are held open
/// all along (their ids in every snapshot, so cursors carry many), and retention compacts the
/// log at random moments, often while a follower is in the middle of a window. Two followers
/// pull again and again with random page sizes: the admin, and a member the writers remove and
/// bring back. A follower told its cursor is gone (410) starts over, as an app does. At the end
/// each follower's copy must equal what a fresh sync returns (the entities as their GETs return
/// them to it), entity by entity. Used by `SyncSoakTests` and `orbit-bench sync`.
package enum SyncSoak {
    package struct Report: Sendable, CustomStringConvertible {
        package var committed = 0
        package var rolledBack = 0
        /// Transactions that failed (a deadlock, a row a racing writer deleted) and were rolled back.
        package var failed = 0
        /// Transactions held open for a while alongside the writers.
        package var held = 0
        package var pulls = 0
        package var changesPulled = 0
        /// Times retention compacted the log during the round, and times a follower was told
        /// its cursor was gone and started over.
        package var compactions = 0
        package var resyncs = 0
        /// Times the member who comes and goes was told to drop the community.
        package var dropped = 0
        package var entitiesCompared = 0
        /// "follower: entity/id" keys where a follower's copy and a fresh sync differ; empty when it holds.
        package var mismatches: [String] = []

        package init() {}

        package mutating func add(_ other: Report) {
            committed += other.committed
            rolledBack += other.rolledBack
            failed += other.failed
            held += other.held
            pulls += other.pulls
            changesPulled += other.changesPulled
            compactions += other.compactions
            resyncs += other.resyncs
            dropped += other.dropped
            entitiesCompared += other.entitiesCompared
            mismatches += other.mismatches
        }

        package var description: String {
            "\(committed) transactions committed, \(rolledBack) rolled back, \(failed) failed, \(held) held open; \(pulls) pulls, "
                + "\(changesPulled) changes pulled, \(compactions) compactions, \(resyncs) resyncs after 410, \(dropped) times dropped; "
                + "\(entitiesCompared) entities compared, \(mismatches.count) differ"
        }
    }

    /// One round: a community with four members (one with a child who has a share of an
    /// expense), `writers` writers of `transactions` each, `held` transactions held open at a
    /// time, two followers. `configuration` connects as a superuser (the writers use raw SQL, as
    /// any writer could, so the feed is tested below the service layer; retention is done as the
    /// job does it).
    package static func round(
        services: OrbitServices, configuration: PostgresConfiguration, writers: Int = 4, transactions: Int = 25, held: Int = 8,
        seed: UInt64
    ) async throws -> Report {
        let suffix = String(seed, radix: 36) + "-" + UUID().uuidString.prefix(8).lowercased()
        let admin = try await services.users.create(email: "soak-admin-\(suffix)@example.com", displayName: "Admin").id
        let community = try await services.communities.create(name: "Soak \(suffix)", as: admin).id
        var others: [UserID] = []
        for index in 1...3 {
            let user = try await services.users.create(email: "soak-\(index)-\(suffix)@example.com", displayName: "Member \(index)").id
            _ = try await services.members.add(user, to: community, as: admin)
            others.append(user)
        }
        let child = try await services.family.add(name: "Kid", as: others[1])
        _ = try await services.expenses.addExpense(
            in: community, description: "Tickets", total: try Money(parsing: "30.00", currency: .usd), paidBy: admin,
            split: .equal([.user(admin), .user(others[1]), .familyMember(child.id)]), as: admin)
        // The admin stays in the community; the others come and go, the first of them following.
        let done = Flag()
        let members = [admin] + others
        let rotating = others[0]
        enum Part { case writer(Report), holder(Report), follower(Report, Copy) }
        var report = Report()
        var followers: [Copy] = []
        try await withThrowingTaskGroup(of: Part.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    try await PostgresConnection.withConnection(configuration) { connection in
                        var random = SplitMix64(seed: seed &* 31 &+ UInt64(writer))
                        var report = Report()
                        for _ in 0..<transactions {
                            try await write(
                                on: connection, community: community, members: members, child: child.id.uuid, random: &random, report: &report)
                        }
                        return .writer(report)
                    }
                }
            }
            for holder in 0..<held {
                group.addTask {
                    var random = SplitMix64(seed: seed &* 131 &+ UInt64(holder))
                    let report = try await hold(configuration, community: community, author: admin, until: done, random: &random)
                    return .holder(report)
                }
            }
            for (index, user) in [admin, rotating].enumerated() {
                group.addTask {
                    var random = SplitMix64(seed: seed ^ (0x5EED &+ UInt64(index)))
                    var report = Report()
                    var follower = Copy(user: user, community: community)
                    // The admin's follower also runs retention now and then, between its pages.
                    try await PostgresConnection.withConnection(configuration) { connection in
                        let retention = index == 0 ? Retention(connection: connection) : nil
                        while !(await done.isSet) {
                            try await follower.pull(services, limit: 1 + random.below(40), report: &report, retention: retention, random: &random)
                        }
                    }
                    return .follower(report, follower)
                }
            }
            var finishedWriters = 0
            while let part = try await group.next() {
                switch part {
                case .writer(let part):
                    report.add(part)
                    finishedWriters += 1
                    if finishedWriters == writers { await done.set() }
                case .holder(let part):
                    report.add(part)
                case .follower(let part, let copy):
                    report.add(part)
                    followers.append(copy)
                }
            }
        }
        // Everything is committed; the member who comes and goes is back (so that what they are
        // compared with is the whole community), and one more pull brings each follower up to date.
        try await PostgresConnection.withConnection(configuration) { connection in
            try await connection.query("UPDATE members SET left_at = NULL WHERE community_id = \(community) AND user_id = \(rotating)")
        }
        for var follower in followers {
            var random = SplitMix64(seed: seed)
            try await follower.pull(services, limit: 50, report: &report, retention: nil, random: &random)
            var fresh = Copy(user: follower.user, community: community)
            var ignored = Report()
            try await fresh.pull(services, limit: 200, report: &ignored, retention: nil, random: &random)
            let keys = Set(follower.rows.keys).union(fresh.rows.keys)
            report.entitiesCompared += keys.count
            let who = follower.user == admin ? "admin" : "rotating member"
            report.mismatches += keys.filter { follower.rows[$0] != fresh.rows[$0] }.sorted().map {
                "\(who): \($0) \(difference(follower.rows[$0], fresh.rows[$0]))"
            }
        }
        return report
    }

    /// Where a copy differs from a fresh sync, for the report.
    private static func difference(_ copy: String?, _ fresh: String?) -> String {
        guard let copy, let fresh else { return copy == nil ? "(missing from the copy)" : "(in the copy, not in a fresh sync)" }
        let common = zip(copy, fresh).prefix { $0 == $1 }.count
        return "(copy: …\(copy.dropFirst(max(0, common - 20)).prefix(60))… fresh: …\(fresh.dropFirst(max(0, common - 20)).prefix(60))…)"
    }

    /// Transactions held open, one after another until `done`: each writes a post (so it has a
    /// transaction id, in every snapshot taken while it runs), stays open up to 300 ms, then
    /// commits (or, one time in five, rolls back).
    private static func hold(
        _ configuration: PostgresConfiguration, community: CommunityID, author: UserID, until done: Flag, random: inout SplitMix64
    ) async throws -> Report {
        var report = Report()
        try await PostgresConnection.withConnection(configuration) { connection in
            while !(await done.isSet) {
                try await connection.query("BEGIN")
                try await connection.query(
                    "INSERT INTO posts (community_id, author_id, content) VALUES (\(community), \(author), \("held \(random.below(1000))"))")
                try await Task.sleep(for: .milliseconds(random.below(300)))
                try await connection.query(random.below(5) == 0 ? "ROLLBACK" : "COMMIT")
                report.held += 1
            }
        }
        return report
    }

    /// The retention job, run as if 30 days after one of the last moments a follower began a
    /// page — so it often compacts the log up to between where a follower's window began and
    /// where it is now — whatever transactions are running.
    struct Retention {
        let connection: PostgresConnection
        var moments: [Date] = []

        mutating func mark() async throws {
            moments.append(try await connection.query("SELECT clock_timestamp() AS now").single().decode("now"))
            if moments.count > 4 { moments.removeFirst() }
        }

        func compact(_ services: OrbitServices, random: inout SplitMix64) async throws {
            guard !moments.isEmpty else { return }
            let moment = moments[random.below(moments.count)]
            var later = services
            later.now = { moment.addingTimeInterval(Double(SyncService.retentionDays) * 86_400) }
            _ = try await later.lifecycle.runRetention()
        }
    }

    /// One writer transaction: 1 to 3 random operations, held open for up to 20 ms, then
    /// committed (or, one time in ten, rolled back). A failure rolls back and is counted.
    private static func write(
        on connection: PostgresConnection, community: CommunityID, members: [UserID], child: UUID, random: inout SplitMix64,
        report: inout Report
    ) async throws {
        try await connection.query("BEGIN")
        do {
            for _ in 0...random.below(3) {
                let actor = members[random.below(members.count)]
                try await operation(
                    random.below(12), on: connection, community: community, actor: actor, members: members, child: child, random: &random)
            }
            try await connection.query("SELECT pg_sleep(\(Double(random.below(20)) / 1000))")
            if random.below(10) == 0 {
                try await connection.query("ROLLBACK")
                report.rolledBack += 1
            } else {
                try await connection.query("COMMIT")
                report.committed += 1
            }
        } catch is PostgresError {
            // A deadlock between writers, or a row a racing writer removed: this transaction is
            // lost, as a real client's would be (counted); the feed must simply not show it.
            try await connection.query("ROLLBACK")
            report.failed += 1
        }
    }

    private static func operation(
        _ kind: Int, on connection: PostgresConnection, community: CommunityID, actor: UserID, members: [UserID], child: UUID,
        random: inout SplitMix64
    ) async throws {
        let post: UUID? = try await connection.query(
            "SELECT id FROM posts WHERE community_id = \(community) AND deleted_at IS NULL ORDER BY id OFFSET \(random.below(8)) LIMIT 1"
        ).first?.decode("id")
        switch kind {
        case 0, 1:
            try await connection.query(
                "INSERT INTO posts (community_id, author_id, content) VALUES (\(community), \(actor), \("post \(random.below(1000))"))")
        case 2:
            if let post { try await connection.query("UPDATE posts SET content = \("edited \(random.below(1000))") WHERE id = \(post)") }
        case 3:
            if let post { try await connection.query("UPDATE posts SET deleted_at = now() WHERE id = \(post)") }
        case 4:
            if let post {
                try await connection.query(
                    "INSERT INTO comments (post_id, author_id, content) VALUES (\(post), \(actor), \("comment \(random.below(1000))"))")
            }
        case 5:
            try await connection.query(
                """
                UPDATE comments SET deleted_at = now() WHERE id = (
                    SELECT c.id FROM comments c JOIN posts p ON p.id = c.post_id
                    WHERE p.community_id = \(community) AND c.deleted_at IS NULL ORDER BY c.id LIMIT 1)
                """)
        case 6:
            if let post {
                try await connection.query(
                    "INSERT INTO reactions (post_id, user_id, type) VALUES (\(post), \(actor), 'like') ON CONFLICT (post_id, user_id) DO NOTHING")
            }
        case 7:
            // A hard delete.
            if let post { try await connection.query("DELETE FROM reactions WHERE post_id = \(post) AND user_id = \(actor)") }
        case 8:
            try await connection.query(
                "INSERT INTO events (community_id, created_by, title, starts_at) VALUES (\(community), \(actor), \("event \(random.below(100))"), now() + interval '1 day')"
            )
        case 9:
            // A member (never the admin, members[0]) leaves or comes back.
            let member = members[1 + random.below(members.count - 1)]
            try await connection.query(
                "UPDATE members SET left_at = CASE WHEN left_at IS NULL THEN now() END WHERE community_id = \(community) AND user_id = \(member)")
        case 10:
            // A user renames themselves (their memberships show the name).
            try await connection.query("UPDATE users SET display_name = \("Name \(random.below(1000))") WHERE id = \(actor)")
        default:
            // The child is renamed (the expense with their share shows the name).
            try await connection.query("UPDATE family_members SET name = \("Kid \(random.below(1000))") WHERE id = \(child)")
        }
    }

    /// A follower's local copy: "entity/id" → the entity's JSON.
    struct Copy {
        var user: UserID
        var community: CommunityID
        var cursor: String?
        var rows: [String: String] = [:]

        /// Pulls until the feed says there is no more now; before each page, `retention` (if
        /// any) notes the moment and, one page in twenty, compacts the log. A cursor that is gone
        /// (410) means: drop everything and sync from the start.
        mutating func pull(
            _ services: OrbitServices, limit: Int, report: inout Report, retention: Retention?, random: inout SplitMix64
        ) async throws {
            var retention = retention
            var more = true
            while more {
                if retention != nil {
                    try await retention?.mark()
                    if random.below(20) == 0 {
                        try await retention?.compact(services, random: &random)
                        report.compactions += 1
                    }
                }
                let page: ChangePage
                do {
                    page = try await services.sync.changes(of: community, cursor: cursor, limit: limit, as: user)
                } catch let error as ServiceError where error.code == .gone {
                    report.resyncs += 1
                    rows = [:]
                    cursor = nil
                    continue
                }
                report.pulls += 1
                report.changesPulled += page.changes.count
                for change in page.changes {
                    let key = "\(change.entity.rawValue)/\(change.id.uuidString.lowercased())"
                    if change.entity == .community, change.id == community.uuid, change.op == .delete {
                        rows = [:]
                        report.dropped += 1
                    } else if let data = change.data, change.op == .upsert {
                        let encoder = JSONEncoder()
                        encoder.outputFormatting = .sortedKeys
                        encoder.dateEncodingStrategy = .iso8601
                        rows[key] = String(decoding: try encoder.encode(data), as: UTF8.self)
                    } else {
                        rows[key] = nil
                    }
                }
                cursor = page.nextCursor
                more = page.hasMore
            }
        }
    }

    actor Flag {
        var isSet = false
        func set() { isSet = true }
    }
}
