import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// How much of the change log a follower's pull reads: a page's worth a page, however stale the
/// planner's statistics (docs/sync.md, "Reading the log").
@Suite("Sync: a backlog is read a page at a time")
struct SyncBacklogTests {
    static let backlog = 3000
    static let pageSize = 100

    @Test("a backlog the statistics do not know of yet: each page reads about a page of the log, not the rest of the window")
    func staleStatistics() async throws {
        // One connection: the pulls' statistics are this backend's, flushed on demand.
        try await withServices(connections: 1) { services, database in
            let admin = try await services.users.create(email: "backlog@example.com", displayName: "Backlog").id
            let community = try await services.communities.create(name: "Backlog", as: admin).id
            var follower = Follower(admin, of: community)
            try await follower.pull(services, limit: Self.pageSize)
            try await database.withConnection { connection in
                // Statistics taken before the backlog came, as for a community that grew
                // since the table's last ANALYZE: the planner believes the community has
                // next to no changes. (Autovacuum must not analyze it meanwhile.)
                try await connection.query("ALTER TABLE changes SET (autovacuum_enabled = false)")
                try await connection.query("ANALYZE changes")
                try await connection.query(
                    "INSERT INTO posts (community_id, author_id, content) SELECT \(community), \(admin), 'post ' || i FROM generate_series(1, \(Self.backlog)) i"
                )
                // What the inserts' triggers read of the log is counted now, not with the pulls.
                try await connection.query("SELECT pg_stat_force_next_flush()")
            }
            let before = try await Self.changeRowsRead(services.pool)
            try await follower.pull(services, limit: Self.pageSize)
            let read = try await Self.changeRowsRead(services.pool) - before
            #expect(follower.copy.keys.filter { $0.hasPrefix("post/") }.count == Self.backlog)
            // Every change is read at least once (else the server counts nothing: `track_counts` off).
            #expect(read >= Self.backlog, "the statistics counted \(read) rows read; is track_counts off?")
            // In (xid, seq) order, stopping at the page's end: a page and one more row a
            // page. A plan that reads the window's remaining changes for a page and sorts
            // them reads them all again each time it is used (before the fix: the first
            // pages, until the statement's generic plan took over, 14,625 rows in all).
            let pages = Self.backlog / Self.pageSize + 1
            #expect(read <= Self.backlog + 2 * pages, "the pull read \(read) rows of the change log for \(Self.backlog) changes")
        }
    }

    /// Rows of `changes` read so far (by scans of the table or its indexes) in this database, with the pool's only connection's
    /// pending statistics flushed first (a backend flushes them when it goes idle, at most once
    /// a second unless forced).
    static func changeRowsRead(_ pool: ConnectionPool) async throws -> Int {
        try await pool.withConnection { connection in
            try await connection.query("SELECT pg_stat_force_next_flush()")
            return try await connection.query(
                "SELECT coalesce(seq_tup_read + idx_tup_fetch, 0)::bigint AS read FROM pg_stat_user_tables WHERE relname = 'changes'"
            ).single().decode("read", as: Int.self)
        }
    }
}
