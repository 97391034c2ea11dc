import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("A community always keeps an admin, also against concurrent changes")
struct MemberRuleTests {
    @Test("the last admin cannot leave, be demoted or be deleted")
    func lastAdmin() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let admin = try await seed.user("admin")
                let community = try await seed.community("Club", creator: admin)
                for change in [
                    "UPDATE members SET left_at = now() WHERE community_id = \(community)",
                    "UPDATE members SET role = 'member' WHERE community_id = \(community)",
                    "DELETE FROM members WHERE community_id = \(community)",
                ] as [PostgresQuery] {
                    let error = await #expect(throws: PostgresError.self) { try await connection.query(change) }
                    #expect(error?.constraint == "members_last_admin")
                }
                // Deleting the community itself takes its members along.
                try await connection.query("DELETE FROM communities WHERE id = \(community)")
            }
        }
    }

    @Test("two admins leaving in overlapping transactions: the second one fails")
    func overlappingLeaves() async throws {
        try await withTestDatabase { database in
            let (community, first, second) = try await database.seeding { seed, _ in
                let first = try await seed.user("first")
                let second = try await seed.user("second")
                let community = try await seed.community("Club", creator: first)
                try await seed.member(community, second, role: "admin")
                return (community, first, second)
            }
            let one = try await database.connect()
            let two = try await database.connect()
            try await one.executeScript("BEGIN")
            try await one.query("UPDATE members SET left_at = now() WHERE community_id = \(community) AND user_id = \(first)")
            try await two.executeScript("BEGIN")
            // Blocks on the community row the first transaction locked, until it commits.
            let secondLeave = Task {
                try await two.query("UPDATE members SET left_at = now() WHERE community_id = \(community) AND user_id = \(second)")
            }
            try await waitUntilBlocked(two.backendPID, database: database)
            try await one.executeScript("COMMIT")
            let error = await #expect(throws: PostgresError.self) { try await secondLeave.value }
            #expect(error?.constraint == "members_last_admin")
            try await two.executeScript("ROLLBACK")
            let admins: Int64 = try await one.value(
                "SELECT count(*) FROM members WHERE community_id = \(community) AND role = 'admin' AND left_at IS NULL"
            )
            #expect(admins == 1)
            await one.close()
            await two.close()
        }
    }

    /// Returns once the server shows `pid` waiting for a lock (each check is a round trip).
    private func waitUntilBlocked(_ pid: Int32, database: TestDatabase) async throws {
        try await database.withConnection { admin in
            while true {
                let waiting: Bool = try await admin.value(
                    "SELECT coalesce(bool_or(wait_event_type = 'Lock'), false) FROM pg_stat_activity WHERE pid = \(pid)"
                )
                if waiting { return }
                await Task.yield()
            }
        }
    }
}
