import Foundation
import OrbitPostgres
import OrbitScaleData
import OrbitTestSupport
import Testing

@Suite("Money: several payers and family members in splits, in the database")
struct PayersAndFamilySplitsTests {
    /// Runs `body` in one transaction and returns the error COMMIT (or a statement) raised.
    private func failure(on connection: PostgresConnection, _ body: (PostgresConnection) async throws -> Void) async -> PostgresError? {
        do {
            try await connection.withTransaction { try await body($0) }
            return nil
        } catch let error as PostgresError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    /// A 1000-cent transaction paid by `paidBy`, split 500/500 between a and b, and its payers, in one transaction.
    private func insert(
        _ connection: PostgresConnection, community: UUID, paidBy: UUID, a: UUID, b: UUID, payers: [(UUID, Int)]
    ) async throws {
        let id = UUID()
        try await connection.query(
            """
            INSERT INTO transactions (id, community_id, created_by, type, description, total_amount, paid_by, transaction_date)
            VALUES (\(id), \(community), \(paidBy), 'expense', 'Dinner', 1000, \(paidBy), current_date)
            """
        )
        try await connection.query("INSERT INTO splits (transaction_id, user_id, amount) VALUES (\(id), \(a), 500), (\(id), \(b), 500)")
        for (user, amount) in payers {
            try await connection.query("INSERT INTO transaction_payers (transaction_id, user_id, amount) VALUES (\(id), \(user), \(amount))")
        }
    }

    @Test("payers add up to the total and include paid_by, checked at commit; a payer is a member")
    func payerSums() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let a = try await seed.user("a")
                let b = try await seed.user("b")
                let stranger = try await seed.user("stranger")
                let community = try await seed.community("Club", creator: a)
                try await seed.member(community, b)

                let short = await failure(on: connection) {
                    try await insert($0, community: community, paidBy: a, a: a, b: b, payers: [(a, 600), (b, 300)])
                }
                #expect(short?.constraint == "transaction_payers_sum_total", "\(String(describing: short))")
                let withoutMain = await failure(on: connection) {
                    try await insert($0, community: community, paidBy: a, a: a, b: b, payers: [(b, 1000)])
                }
                #expect(withoutMain?.constraint == "transaction_payers_include_paid_by", "\(String(describing: withoutMain))")
                let outsider = await failure(on: connection) {
                    try await insert($0, community: community, paidBy: a, a: a, b: b, payers: [(a, 400), (stranger, 600)])
                }
                #expect(outsider?.constraint == "transaction_payers_user_member", "\(String(describing: outsider))")
                let twice = await failure(on: connection) {
                    try await insert($0, community: community, paidBy: a, a: a, b: b, payers: [(a, 400), (a, 600)])
                }
                #expect(twice?.constraint == "transaction_payers_once", "\(String(describing: twice))")
                #expect(try await connection.value("SELECT count(*) FROM transactions", as: Int64.self) == 0)

                #expect(
                    await failure(on: connection) { try await insert($0, community: community, paidBy: a, a: a, b: b, payers: [(a, 600), (b, 400)]) }
                        == nil)
                let id: UUID = try await connection.value("SELECT id FROM transactions")
                // A new total without new payers, or paid_by moved off the payers, is refused.
                let newTotal = await failure(on: connection) { connection in
                    try await connection.query("UPDATE transactions SET total_amount = 1200 WHERE id = \(id)")
                    try await connection.query("UPDATE splits SET amount = 600 WHERE transaction_id = \(id)")
                }
                #expect(newTotal?.constraint == "transaction_payers_sum_total", "\(String(describing: newTotal))")
                try await connection.query("INSERT INTO members (community_id, user_id) VALUES (\(community), \(stranger))")
                let moved = await failure(on: connection) { connection in
                    try await connection.query("UPDATE transactions SET paid_by = \(stranger) WHERE id = \(id)")
                }
                #expect(moved?.constraint == "transaction_payers_include_paid_by", "\(String(describing: moved))")
            }
        }
    }

    @Test("a split for a family member is owed by their guardian, once per transaction; a removed child's share stays with the guardian")
    func familySplits() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let parent = try await seed.user("parent")
                let other = try await seed.user("other")
                let community = try await seed.community("Club", creator: parent)
                try await seed.member(community, other)
                let tim = try await seed.id("INSERT INTO family_members (user_id, name) VALUES (\(parent), 'Tim') RETURNING id")
                let id = UUID()
                func expense(_ splits: PostgresQuery) async -> PostgresError? {
                    await failure(on: connection) { connection in
                        try await connection.query(
                            """
                            INSERT INTO transactions (id, community_id, created_by, type, description, total_amount, paid_by, transaction_date)
                            VALUES (\(id), \(community), \(other), 'expense', 'Tickets', 900, \(other), current_date)
                            """
                        )
                        try await connection.query(splits)
                    }
                }
                let wrongGuardian = await expense(
                    "INSERT INTO splits (transaction_id, user_id, family_member_id, amount) VALUES (\(id), \(other), \(tim), 900)")
                #expect(wrongGuardian?.constraint == "splits_family_guardian_fkey", "\(String(describing: wrongGuardian))")
                let twice = await expense(
                    """
                    INSERT INTO splits (transaction_id, user_id, family_member_id, amount)
                    VALUES (\(id), \(parent), \(tim), 450), (\(id), \(parent), \(tim), 450)
                    """)
                #expect(twice?.constraint == "splits_one_per_family_member", "\(String(describing: twice))")
                let fine = await expense(
                    """
                    INSERT INTO splits (transaction_id, user_id, family_member_id, amount)
                    VALUES (\(id), \(parent), NULL, 300), (\(id), \(parent), \(tim), 300), (\(id), \(other), NULL, 300)
                    """)
                #expect(fine == nil)
                let owed: Int64 = try await connection.value("SELECT balance FROM balances WHERE user_id = \(parent)")
                #expect(owed == -600)
                try await connection.query("DELETE FROM family_members WHERE id = \(tim)")
                let left: [UUID?] = try await connection.query(
                    "SELECT family_member_id FROM splits WHERE user_id = \(parent) ORDER BY family_member_id NULLS FIRST"
                ).map { try $0.decode(0, as: UUID?.self) }
                #expect(left == [nil, nil])
                #expect(try await connection.value("SELECT balance FROM balances WHERE user_id = \(parent)", as: Int64.self) == -600)
            }
        }
    }

    /// One transaction of the model: who paid what, who owes what.
    struct Entry {
        var paidBy: UUID
        var currency: String
        var deleted = false
        var payers: [UUID: Int]
        var splits: [(user: UUID, amount: Int, settled: Bool)]
    }

    @Test(
        "random payers, payer edits, paid_by moves, settled splits, deletions, restores and currency changes, with refreshes: balances equal the plain aggregate and a model kept here; so do the pairs (who owes whom), which add up to the balances",
        arguments: [11, 12, 13] as [UInt64])
    func randomPayers(seed: UInt64) async throws {
        try await withTestDatabase { database in
            try await database.seeding { seeder, connection in
                var random = SplitMix64(seed: seed)
                var users: [UUID] = []
                for index in 0..<4 { users.append(try await seeder.user("u\(index)")) }
                let community = try await seeder.community("Club", creator: users[0])
                for user in users.dropFirst() { try await seeder.member(community, user) }
                var entries: [UUID: Entry] = [:]

                /// `total` in up to `count` positive parts.
                func parts(_ total: Int, _ count: Int) -> [Int] {
                    guard count > 1, total >= count else { return [total] }
                    var cuts = Set<Int>()
                    while cuts.count < count - 1 { cuts.insert(Int.random(in: 1..<total, using: &random)) }
                    let points = [0] + cuts.sorted() + [total]
                    return zip(points.dropFirst(), points).map { $0 - $1 }
                }
                func setPayers(_ id: UUID, _ total: Int, paidBy: UUID) async throws -> [UUID: Int] {
                    let others = users.filter { $0 != paidBy }.shuffled(using: &random)
                    let count = Int.random(in: 1...3, using: &random)
                    guard count > 1 else { return [:] }
                    let amounts = parts(total, count)
                    let payers = Dictionary(uniqueKeysWithValues: zip([paidBy] + others, amounts))
                    for (user, amount) in payers {
                        try await connection.query(
                            "INSERT INTO transaction_payers (transaction_id, user_id, amount) VALUES (\(id), \(user), \(amount))")
                    }
                    return payers.count > 1 ? payers : [:]
                }

                for step in 0..<60 {
                    let choice = Int.random(in: 0..<10, using: &random)
                    let existing = entries.keys.sorted { $0.uuidString < $1.uuidString }
                    if choice < 4 || existing.isEmpty {
                        let paidBy = users.randomElement(using: &random)!
                        let currency = ["USD", "EUR"].randomElement(using: &random)!
                        let sharers = Array(users.shuffled(using: &random).prefix(Int.random(in: 1...users.count, using: &random)))
                        let amounts = sharers.map { _ in Int.random(in: 1...5000, using: &random) }
                        let total = amounts.reduce(0, +)
                        let id = UUID()
                        let payers = try await connection.withTransaction { connection in
                            try await connection.query(
                                """
                                INSERT INTO transactions (id, community_id, created_by, type, description, total_amount, currency, paid_by, transaction_date)
                                VALUES (\(id), \(community), \(paidBy), 'expense', 'E', \(total), \(currency), \(paidBy), current_date)
                                """
                            )
                            for (user, amount) in zip(sharers, amounts) {
                                try await connection.query("INSERT INTO splits (transaction_id, user_id, amount) VALUES (\(id), \(user), \(amount))")
                            }
                            return try await setPayers(id, total, paidBy: paidBy)
                        }
                        entries[id] = Entry(
                            paidBy: paidBy, currency: currency, payers: payers, splits: zip(sharers, amounts).map { ($0, $1, false) })
                        continue
                    }
                    let id = existing.randomElement(using: &random)!
                    var entry = entries[id]!
                    switch choice {
                    case 4:  // the payers replaced (maybe by none: paid_by paid it all)
                        let total = entry.splits.map(\.amount).reduce(0, +)
                        entry.payers = try await connection.withTransaction { connection in
                            try await connection.query("DELETE FROM transaction_payers WHERE transaction_id = \(id)")
                            return try await setPayers(id, total, paidBy: entry.paidBy)
                        }
                    case 5:  // paid_by moves: to another payer, or anyone when there is one payer
                        let candidates = entry.payers.isEmpty ? users : Array(entry.payers.keys)
                        entry.paidBy = candidates.randomElement(using: &random)!
                        try await connection.query("UPDATE transactions SET paid_by = \(entry.paidBy) WHERE id = \(id)")
                    case 6:  // a split settled
                        guard let index = entry.splits.indices.filter({ !entry.splits[$0].settled }).randomElement(using: &random) else { continue }
                        entry.splits[index].settled = true
                        try await connection.query(
                            "UPDATE splits SET is_settled = true, settled_at = now() WHERE transaction_id = \(id) AND user_id = \(entry.splits[index].user)"
                        )
                    case 7:  // deleted or restored
                        entry.deleted.toggle()
                        try await connection.query(
                            "UPDATE transactions SET deleted_at = CASE WHEN \(entry.deleted) THEN now() END WHERE id = \(id)")
                    case 8:
                        entry.currency = entry.currency == "USD" ? "EUR" : "USD"
                        try await connection.query("UPDATE transactions SET currency = \(entry.currency) WHERE id = \(id)")
                    default:  // a recorded refresh of the snapshot, as the service does it
                        try await connection.withTransaction(
                            TransactionOptions(isolation: .repeatableRead, localSettings: ["role": "orbit_admin"])
                        ) { connection in
                            try await connection.executeScript(
                                """
                                REFRESH MATERIALIZED VIEW CONCURRENTLY orbit_private.balances_snapshot;
                                REFRESH MATERIALIZED VIEW CONCURRENTLY orbit_private.pair_balances_snapshot
                                """)
                            try await connection.query(
                                "UPDATE orbit_private.balance_snapshot_state SET snapshot = pg_current_snapshot(), refreshed_at = now()")
                        }
                    }
                    entries[id] = entry
                    _ = step
                }

                var model: [String: Int64] = [:]
                for entry in entries.values where !entry.deleted {
                    for split in entry.splits where !split.settled {
                        model["\(entry.paidBy)/\(entry.currency)", default: 0] += Int64(split.amount)
                        model["\(split.user)/\(entry.currency)", default: 0] -= Int64(split.amount)
                    }
                    for (payer, amount) in entry.payers {
                        model["\(payer)/\(entry.currency)", default: 0] += Int64(amount)
                        model["\(entry.paidBy)/\(entry.currency)", default: 0] -= Int64(amount)
                    }
                }
                func read(_ query: PostgresQuery) async throws -> [String: Int64] {
                    var result: [String: Int64] = [:]
                    for row in try await connection.query(query) {
                        let (user, currency, balance) = try row.decode((UUID, String, Int64).self)
                        if balance != 0 { result["\(user)/\(currency)"] = balance }
                    }
                    return result
                }
                let viewed = try await read("SELECT user_id, currency, balance FROM balances WHERE community_id = \(community)")
                let aggregated = try await read(
                    """
                    SELECT user_id, currency, sum(amount)::bigint FROM orbit.balance_entries WHERE community_id = \(community)
                    GROUP BY user_id, currency
                    """)
                #expect(viewed == model.filter { $0.value != 0 })
                #expect(aggregated == viewed)
                for currency in ["USD", "EUR"] {
                    #expect(viewed.filter { $0.key.hasSuffix(currency) }.values.reduce(0, +) == 0)
                }

                // Who owes whom (issue 54, item 2): "user/counterparty/currency" → what the
                // counterparty owes the user, from the same lines, pair by pair.
                var pairModel: [String: Int64] = [:]
                func owes(_ debtor: UUID, _ creditor: UUID, _ amount: Int, _ currency: String) {
                    guard debtor != creditor else { return }
                    pairModel["\(creditor)/\(debtor)/\(currency)", default: 0] += Int64(amount)
                    pairModel["\(debtor)/\(creditor)/\(currency)", default: 0] -= Int64(amount)
                }
                for entry in entries.values where !entry.deleted {
                    for split in entry.splits where !split.settled { owes(split.user, entry.paidBy, split.amount, entry.currency) }
                    for (payer, amount) in entry.payers { owes(entry.paidBy, payer, amount, entry.currency) }
                }
                var pairs: [String: Int64] = [:]
                for row in try await connection.query(
                    "SELECT user_id, counterparty_id, currency, balance FROM pair_balances WHERE community_id = \(community)")
                {
                    let (user, counterparty, currency, balance) = try row.decode((UUID, UUID, String, Int64).self)
                    if balance != 0 { pairs["\(user)/\(counterparty)/\(currency)"] = balance }
                }
                #expect(pairs == pairModel.filter { $0.value != 0 })
                // A person's pairs add up to their balance.
                var summed: [String: Int64] = [:]
                for (key, balance) in pairs {
                    let parts = key.split(separator: "/")
                    summed["\(parts[0])/\(parts[2])", default: 0] += balance
                }
                #expect(summed.filter { $0.value != 0 } == viewed)
            }
        }
    }
}
