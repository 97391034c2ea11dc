import Foundation
import OrbitPostgres
import OrbitScaleData
import OrbitTestSupport
import Testing

@Suite("Balances: exact after every commit, zero-sum, only one's own communities")
struct BalancesTests {
    struct Key: Hashable {
        var user: UUID
        var currency: String
    }

    private func balances(_ community: UUID, as reader: UUID, _ connection: PostgresConnection) async throws -> [Key: Int64] {
        try await connection.asApp(reader) { connection in
            var result: [Key: Int64] = [:]
            for row in try await connection.query("SELECT user_id, currency, balance FROM balances WHERE community_id = \(community)") {
                let (user, currency, balance) = try row.decode((UUID, String, Int64).self)
                result[Key(user: user, currency: currency)] = balance
            }
            return result
        }
    }

    @Test("random expenses: balances equal the ledger computed here and sum to zero per currency", arguments: [1, 2, 3] as [UInt64])
    func randomLedger(seed: UInt64) async throws {
        try await withTestDatabase { database in
            try await database.seeding { seeder, connection in
                var random = SplitMix64(seed: seed)
                var users: [UUID] = []
                for index in 0..<5 { users.append(try await seeder.user("u\(index)")) }
                let community = try await seeder.community("Club", creator: users[0])
                for user in users.dropFirst() { try await seeder.member(community, user) }

                var expected: [Key: Int64] = [:]
                for _ in 0..<40 {
                    let payer = users.randomElement(using: &random)!
                    let currency = ["USD", "EUR"].randomElement(using: &random)!
                    let sharers = users.shuffled(using: &random).prefix(Int.random(in: 1...users.count, using: &random))
                    let amounts = sharers.map { _ in Int.random(in: 1...5000, using: &random) }
                    let splits = Array(zip(sharers, amounts))
                    let transaction = try await seeder.expense(
                        community, paidBy: payer, total: amounts.reduce(0, +), currency: currency, splits: splits
                    )
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0:  // deleted: counts for nothing
                        try await connection.query("UPDATE transactions SET deleted_at = now() WHERE id = \(transaction)")
                    case 1:  // first split settled: that share counts for nothing
                        try await connection.query(
                            "UPDATE splits SET is_settled = true, settled_at = now() WHERE transaction_id = \(transaction) AND user_id = \(splits[0].0)"
                        )
                        for (user, amount) in splits.dropFirst() {
                            expected[Key(user: payer, currency: currency), default: 0] += Int64(amount)
                            expected[Key(user: user, currency: currency), default: 0] -= Int64(amount)
                        }
                    default:
                        for (user, amount) in splits {
                            expected[Key(user: payer, currency: currency), default: 0] += Int64(amount)
                            expected[Key(user: user, currency: currency), default: 0] -= Int64(amount)
                        }
                    }
                }
                let actual = try await balances(community, as: users[1], connection)
                // Users whose shares all cancel out may be absent or zero; compare non-zero entries.
                #expect(actual.filter { $0.value != 0 } == expected.filter { $0.value != 0 })
                for currency in ["USD", "EUR"] {
                    #expect(actual.filter { $0.key.currency == currency }.values.reduce(0, +) == 0)
                }
            }
        }
    }

    @Test("a reader sees balances of their own communities only")
    func onlyOwnCommunities() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let a = try await seed.user("a")
                let b = try await seed.user("b")
                let ab = try await seed.user("ab")
                let communityA = try await seed.community("A", creator: a)
                let communityB = try await seed.community("B", creator: b)
                try await seed.member(communityA, ab)
                try await seed.member(communityB, ab)
                try await seed.expense(communityA, paidBy: a, total: 100, splits: [(ab, 100)])
                try await seed.expense(communityB, paidBy: b, total: 300, splits: [(ab, 300)])
                let seenBy: (UUID) async throws -> Set<UUID> = { reader in
                    try await connection.asApp(reader) { connection in
                        Set(try await connection.query("SELECT DISTINCT community_id FROM balances").map { try $0.decode(0, as: UUID.self) })
                    }
                }
                #expect(try await seenBy(a) == [communityA])
                #expect(try await seenBy(b) == [communityB])
                #expect(try await seenBy(ab) == [communityA, communityB])
                let owes: [Int64] = try await connection.asApp(ab) { connection in
                    try await connection.query("SELECT balance FROM balances WHERE user_id = \(ab) ORDER BY balance").map {
                        try $0.decode(0, as: Int64.self)
                    }
                }
                #expect(owes == [-300, -100])
            }
        }
    }

    @Test("balances are the snapshot plus the journal: exact before and after a recorded refresh, never counted twice")
    func snapshotPlusJournal() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let a = try await seed.user("a")
                let b = try await seed.user("b")
                let community = try await seed.community("A", creator: a)
                try await seed.member(community, b)
                try await seed.expense(community, paidBy: a, total: 1000, splits: [(a, 500), (b, 500)])
                func balances() async throws -> [Int64] {
                    try await connection.query("SELECT balance FROM balances WHERE community_id = \(community) ORDER BY balance")
                        .map { try $0.decode("balance", as: Int64.self) }
                }
                // The expense is in the journal (the template's snapshot predates it).
                #expect(try await balances() == [-500, 500])
                // A refresh as the service does it: one REPEATABLE READ transaction that
                // refreshes CONCURRENTLY and records its snapshot; then the journal is pruned.
                try await connection.withTransaction(TransactionOptions(isolation: .repeatableRead, localSettings: ["role": "orbit_admin"])) {
                    connection in
                    try await connection.executeScript(
                        """
                        REFRESH MATERIALIZED VIEW CONCURRENTLY orbit_private.balances_snapshot;
                        REFRESH MATERIALIZED VIEW CONCURRENTLY orbit_private.pair_balances_snapshot
                        """)
                    try await connection.query(
                        "UPDATE orbit_private.balance_snapshot_state SET snapshot = pg_current_snapshot(), refreshed_at = now()")
                }
                #expect(try await balances() == [-500, 500])
                let pruned = try await connection.query(
                    """
                    DELETE FROM orbit_private.balance_journal j USING orbit_private.balance_snapshot_state state
                    WHERE pg_visible_in_snapshot(j.xid, state.snapshot)
                    """
                ).affectedRows
                #expect(pruned == 4)
                #expect(try await balances() == [-500, 500])
                let snapshot = try await connection.query(
                    "SELECT balance FROM orbit_private.balances_snapshot WHERE community_id = \(community) ORDER BY balance"
                ).map { try $0.decode("balance", as: Int64.self) }
                #expect(snapshot == [-500, 500])
                // After the refresh, a change goes to the journal again.
                try await seed.expense(community, paidBy: b, total: 300, splits: [(a, 300)])
                #expect(try await balances() == [-200, 200])
            }
        }
    }
}
