import Foundation
package import OrbitCore
package import OrbitPostgres

/// The sync feed under concurrent writers (issue 20): several writers run transactions of random
/// length that overlap (creates, edits, soft and hard deletes, members leaving and coming back,
/// some rolled back) while a follower pulls the feed again and again with random page sizes. At
/// the end the follower's copy must equal what a fresh sync returns (the entities as their GETs
/// return them to it), entity by entity. Used by `SyncSoakTests` and `orbit-bench sync`.
package enum SyncSoak {
    package struct Report: Sendable, CustomStringConvertible {
        package var committed = 0
        package var rolledBack = 0
        /// Transactions that failed (a deadlock, a row a racing writer deleted) and were rolled back.
        package var failed = 0
        package var pulls = 0
        package var changesPulled = 0
        package var entitiesCompared = 0
        /// "entity/id" keys where the follower's copy and a fresh sync differ; empty when it holds.
        package var mismatches: [String] = []

        package init() {}

        package var description: String {
            "\(committed) transactions committed, \(rolledBack) rolled back, \(failed) failed; \(pulls) pulls, "
                + "\(changesPulled) changes pulled; \(entitiesCompared) entities compared, \(mismatches.count) differ"
        }
    }

    /// One round: a community with four members, `writers` writers of `transactions` each, one
    /// follower. `configuration` connects as a superuser (the writers use raw SQL, as any
    /// writer could, so the feed is tested below the service layer).
    package static func round(
        services: OrbitServices, configuration: PostgresConfiguration, writers: Int = 4, transactions: Int = 25, seed: UInt64
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
        // The follower is the admin: it stays in the community; the others come and go.
        let done = Flag()
        let members = [admin] + others
        let (writes, pulled) = try await withThrowingTaskGroup(of: (Report, Copy?).self) { group in
            for writer in 0..<writers {
                group.addTask {
                    try await PostgresConnection.withConnection(configuration) { connection in
                        var random = SplitMix64(seed: seed &* 31 &+ UInt64(writer))
                        var report = Report()
                        for _ in 0..<transactions {
                            try await write(on: connection, community: community, members: members, random: &random, report: &report)
                        }
                        return (report, nil)
                    }
                }
            }
            group.addTask {
                var random = SplitMix64(seed: seed ^ 0x5EED)
                var report = Report()
                var follower = Copy(user: admin, community: community)
                while !(await done.isSet) {
                    try await follower.pull(services, limit: 1 + random.below(40), report: &report)
                }
                return (report, follower)
            }
            var total = Report()
            var follower: Copy?
            var finishedWriters = 0
            while let (part, copy) = try await group.next() {
                if let copy { follower = copy }
                total.committed += part.committed
                total.rolledBack += part.rolledBack
                total.failed += part.failed
                total.pulls += part.pulls
                total.changesPulled += part.changesPulled
                if copy == nil {
                    finishedWriters += 1
                    if finishedWriters == writers { await done.set() }
                }
            }
            return (total, follower)
        }
        var report = writes
        guard var follower = pulled else { return report }
        // Everything is committed: one more pull brings the follower up to date.
        try await follower.pull(services, limit: 50, report: &report)
        var fresh = Copy(user: admin, community: community)
        var ignored = Report()
        try await fresh.pull(services, limit: 200, report: &ignored)
        report.entitiesCompared = Set(follower.rows.keys).union(fresh.rows.keys).count
        report.mismatches = Set(follower.rows.keys).union(fresh.rows.keys).filter { follower.rows[$0] != fresh.rows[$0] }.sorted()
        return report
    }

    /// One writer transaction: 1 to 3 random operations, held open for up to 20 ms, then
    /// committed (or, one time in ten, rolled back). A failure rolls back and is counted.
    private static func write(
        on connection: PostgresConnection, community: CommunityID, members: [UserID], random: inout SplitMix64, report: inout Report
    ) async throws {
        try await connection.query("BEGIN")
        do {
            for _ in 0...random.below(3) {
                let actor = members[random.below(members.count)]
                try await operation(random.below(10), on: connection, community: community, actor: actor, members: members, random: &random)
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
        _ kind: Int, on connection: PostgresConnection, community: CommunityID, actor: UserID, members: [UserID], random: inout SplitMix64
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
        default:
            // A member (never the follower, members[0]) leaves or comes back.
            let member = members[1 + random.below(members.count - 1)]
            try await connection.query(
                "UPDATE members SET left_at = CASE WHEN left_at IS NULL THEN now() END WHERE community_id = \(community) AND user_id = \(member)")
        }
    }

    /// A follower's local copy: "entity/id" → the entity's JSON.
    struct Copy {
        var user: UserID
        var community: CommunityID
        var cursor: String?
        var rows: [String: String] = [:]

        mutating func pull(_ services: OrbitServices, limit: Int, report: inout Report) async throws {
            var page: ChangePage
            repeat {
                page = try await services.sync.changes(of: community, cursor: cursor, limit: limit, as: user)
                report.pulls += 1
                report.changesPulled += page.changes.count
                for change in page.changes {
                    let key = "\(change.entity.rawValue)/\(change.id.uuidString.lowercased())"
                    if let data = change.data, change.op == .upsert {
                        let encoder = JSONEncoder()
                        encoder.outputFormatting = .sortedKeys
                        encoder.dateEncodingStrategy = .iso8601
                        rows[key] = String(decoding: try encoder.encode(data), as: UTF8.self)
                    } else {
                        rows[key] = nil
                    }
                }
                cursor = page.nextCursor
            } while page.hasMore
        }
    }

    actor Flag {
        var isSet = false
        func set() { isSet = true }
    }
}
