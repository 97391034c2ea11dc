import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Money: split sums, amounts and currencies")
struct MoneyTests {
    /// A community of payer + two members, on one superuser connection.
    private func withClub(
        _ body: (Seed, PostgresConnection, _ community: UUID, _ payer: UUID, _ b: UUID, _ c: UUID) async throws -> Void
    ) async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let payer = try await seed.user("payer")
                let b = try await seed.user("b")
                let c = try await seed.user("c")
                let community = try await seed.community("Club", creator: payer)
                try await seed.member(community, b)
                try await seed.member(community, c)
                try await body(seed, connection, community, payer, b, c)
            }
        }
    }

    @Test("splits that add up to the total commit")
    func balancedSplitsCommit() async throws {
        try await withClub { seed, connection, community, payer, b, c in
            let transaction = try await seed.expense(community, paidBy: payer, total: 1000, splits: [(payer, 334), (b, 333), (c, 333)])
            let sum: Int64 = try await connection.value("SELECT sum(amount) FROM splits WHERE transaction_id = \(transaction)")
            #expect(sum == 1000)
        }
    }

    @Test("splits that do not add up fail at COMMIT, not before, and nothing is kept")
    func unbalancedSplitsFailAtCommit() async throws {
        try await withClub { seed, connection, community, payer, b, _ in
            var insertedEverything = false
            let error = await #expect(throws: PostgresError.self) {
                try await connection.withTransaction { connection in
                    try await connection.query(
                        """
                        INSERT INTO transactions (id, community_id, created_by, type, description, total_amount, paid_by, transaction_date)
                        VALUES ('00000000-0000-4000-8000-000000000001', \(community), \(payer), 'expense', 'Pizza', 1000, \(payer), current_date)
                        """
                    )
                    try await connection.query(
                        "INSERT INTO splits (transaction_id, user_id, amount) VALUES ('00000000-0000-4000-8000-000000000001', \(b), 900)"
                    )
                    insertedEverything = true
                }
            }
            #expect(insertedEverything)
            #expect(error?.isCheckViolation == true)
            let left: Int64 = try await connection.value("SELECT count(*) FROM transactions")
            #expect(left == 0)
        }
    }

    @Test("a transaction with no splits at all fails at commit")
    func noSplits() async throws {
        try await withClub { _, connection, community, payer, _, _ in
            await #expect(throws: PostgresError.self) {
                try await connection.query(
                    """
                    INSERT INTO transactions (community_id, created_by, type, description, total_amount, paid_by, transaction_date)
                    VALUES (\(community), \(payer), 'expense', 'Nothing split', 500, \(payer), current_date)
                    """
                )
            }
        }
    }

    @Test("changing a split, deleting one or changing the total alone breaks the sum and is refused")
    func laterChanges() async throws {
        try await withClub { seed, connection, community, payer, b, c in
            let transaction = try await seed.expense(community, paidBy: payer, total: 900, splits: [(payer, 300), (b, 300), (c, 300)])
            let changes: [PostgresQuery] = [
                "UPDATE splits SET amount = 301 WHERE transaction_id = \(transaction) AND user_id = \(b)",
                "DELETE FROM splits WHERE transaction_id = \(transaction) AND user_id = \(c)",
                "UPDATE transactions SET total_amount = 1000 WHERE id = \(transaction)",
            ]
            for change in changes {
                let error = await #expect(throws: PostgresError.self) { try await connection.query(change) }
                #expect(error?.constraint == "splits_sum_total")
            }
            // Changing both in one transaction is fine.
            try await connection.withTransaction { connection in
                try await connection.query("UPDATE transactions SET total_amount = 1200 WHERE id = \(transaction)")
                try await connection.query("UPDATE splits SET amount = 600 WHERE transaction_id = \(transaction) AND user_id = \(payer)")
            }
        }
    }

    @Test("split users and payers are, or were, members of the transaction's community")
    func splitMembers() async throws {
        try await withClub { seed, connection, community, payer, b, _ in
            let outsider = try await seed.user("outsider")
            let splitError = await #expect(throws: PostgresError.self) {
                try await seed.expense(community, paidBy: payer, total: 100, splits: [(outsider, 100)])
            }
            #expect(splitError?.constraint == "splits_user_member")
            let payerError = await #expect(throws: PostgresError.self) {
                try await seed.expense(community, paidBy: outsider, total: 100, splits: [(b, 100)])
            }
            #expect(payerError?.constraint == "transactions_payer_member")
            // Someone who left still owes their share.
            try await connection.query("UPDATE members SET left_at = now() WHERE community_id = \(community) AND user_id = \(b)")
            try await seed.expense(community, paidBy: payer, total: 100, splits: [(b, 100)])
        }
    }

    @Test(
        "amounts must be positive where the spec requires it",
        arguments: [
            "UPDATE transactions SET total_amount = 0",
            "UPDATE transactions SET total_amount = -100",
            "INSERT INTO dues (community_id, name, amount, due_date, created_by) SELECT id, 'Dues', 0, current_date, created_by FROM communities",
            "INSERT INTO dues_payments (dues_id, user_id, amount_paid, recorded_by) SELECT id, created_by, 0, created_by FROM dues",
            "UPDATE splits SET amount = -1",
        ])
    func positiveAmounts(statement: String) async throws {
        try await withClub { seed, connection, community, payer, b, _ in
            try await seed.expense(community, paidBy: payer, total: 100, splits: [(b, 100)])
            try await connection.query(
                "INSERT INTO dues (community_id, name, amount, due_date, created_by) VALUES (\(community), 'Season', 5000, current_date, \(payer))"
            )
            let error = await #expect(throws: PostgresError.self) { try await connection.executeScript(statement) }
            #expect(error?.isCheckViolation == true)
        }
    }

    @Test("currency codes are three upper-case letters", arguments: ["usd", "US", "USDD", "$$$", "U1D"])
    func badCurrencies(code: String) async throws {
        try await withClub { seed, _, community, payer, b, _ in
            let error = await #expect(throws: PostgresError.self) {
                try await seed.expense(community, paidBy: payer, total: 100, currency: code, splits: [(b, 100)])
            }
            // Too long for VARCHAR(3) (22001) or not three upper-case letters (check).
            #expect(error?.isCheckViolation == true || error?.sqlState == "22001")
        }
    }

    @Test("dues have a currency, USD unless given, checked like transactions'")
    func duesCurrency() async throws {
        try await withClub { _, connection, community, payer, _, _ in
            let currency: String = try await connection.value(
                "INSERT INTO dues (community_id, name, amount, due_date, created_by) VALUES (\(community), 'Season', 5000, current_date, \(payer)) RETURNING currency"
            )
            #expect(currency == "USD")
            let euro: String = try await connection.value(
                "INSERT INTO dues (community_id, name, amount, due_date, created_by, currency) VALUES (\(community), 'Trip', 100, current_date, \(payer), 'EUR') RETURNING currency"
            )
            #expect(euro == "EUR")
            await #expect(throws: PostgresError.self) {
                try await connection.query(
                    "INSERT INTO dues (community_id, name, amount, due_date, created_by, currency) VALUES (\(community), 'Trip', 100, current_date, \(payer), 'eur')"
                )
            }
        }
    }
}
