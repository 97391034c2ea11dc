import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Currencies in the database: a converted settlement's amount is what its recorded rate gives")
struct CurrencyInvariantTests {
    @Test("total_amount = round(paid_amount × rate × 10^(exponent difference)), half away from zero; only settlements convert")
    func conversionChecked() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let (a, b, community) = try await seed.pair()
                func settle(type: String = "settlement", total: Int, paid: Int, paidCurrency: String, rate: String) async -> PostgresError? {
                    do {
                        try await connection.withTransaction { connection in
                            let id = UUID()
                            try await connection.query(
                                """
                                INSERT INTO transactions (id, community_id, created_by, type, description, total_amount, currency, paid_by,
                                    transaction_date, paid_amount, paid_currency, exchange_rate)
                                VALUES (\(id), \(community), \(a), \(type)::transaction_type, 'x', \(total), 'USD', \(a), current_date,
                                    \(paid), \(paidCurrency), \(rate)::numeric)
                                """)
                            try await connection.query("INSERT INTO splits (transaction_id, user_id, amount) VALUES (\(id), \(b), \(total))")
                        }
                        return nil
                    } catch let error as PostgresError {
                        return error
                    } catch {
                        Issue.record("unexpected \(error)")
                        return nil
                    }
                }
                // 90.00 EUR at 1.1111111111: 99.999999999 → 100.00 USD.
                #expect(await settle(total: 10000, paid: 9000, paidCurrency: "EUR", rate: "1.1111111111") == nil)
                #expect(await settle(total: 9999, paid: 9000, paidCurrency: "EUR", rate: "1.1111111111")?.constraint == "transactions_conversion")
                // 1 JPY (exponent 0) at 0.005 USD: half a cent, rounded up.
                #expect(await settle(total: 1, paid: 1, paidCurrency: "JPY", rate: "0.005") == nil)
                #expect(await settle(total: 1, paid: 1, paidCurrency: "USD", rate: "1")?.constraint == "transactions_conversion")
                #expect(
                    await settle(type: "expense", total: 10000, paid: 9000, paidCurrency: "EUR", rate: "1.1111111111")?.constraint
                        == "transactions_conversion")
            }
        }
    }
}
