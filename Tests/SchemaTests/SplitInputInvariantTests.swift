import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Splits as entered in the database: exact parts, percentages and items fit the amount")
struct SplitInputInvariantTests {
    @Test("items + tax + tip = total, each item's split fits the item, no items in items; exact and percent parts add up")
    func splitInputFits() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let (a, b, community) = try await seed.pair()
                let expense = try await seed.expense(community, paidBy: a, total: 1000, splits: [(a, 500), (b, 500)])
                func part(_ user: UUID, _ value: Int?) -> String {
                    "{\"user_id\": \"\(user.uuidString)\", \"family_member_id\": null, \"value\": \(value.map(String.init) ?? "null")}"
                }
                let equal = "{\"method\": \"equal\", \"parts\": [\(part(a, nil)), \(part(b, nil))]}"
                func item(_ amount: Int, _ split: String) -> String { "{\"description\": \"x\", \"amount\": \(amount), \"split\": \(split)}" }
                func items(_ items: [String], tax: Int = 0, tip: Int = 0) -> String {
                    "{\"method\": \"items\", \"parts\": [], \"items\": [\(items.joined(separator: ", "))], \"tax\": \(tax), \"tip\": \(tip)}"
                }
                func store(_ json: String) async -> String? {
                    do {
                        try await connection.withTransaction { connection in
                            try await connection.query("UPDATE transactions SET split_input = \(json)::jsonb WHERE id = \(expense)")
                        }
                        return nil
                    } catch let error as PostgresError {
                        return error.constraint ?? error.description
                    } catch {
                        return "\(error)"
                    }
                }
                let unfit = "transactions_split_input_fits"
                #expect(await store(equal) == nil)
                #expect(await store("{\"method\": \"equal\", \"parts\": []}") == unfit)
                #expect(await store("{\"method\": \"exact\", \"parts\": [\(part(a, 600)), \(part(b, 400))]}") == nil)
                #expect(await store("{\"method\": \"exact\", \"parts\": [\(part(a, 600)), \(part(b, 300))]}") == unfit)
                #expect(await store("{\"method\": \"exact\", \"parts\": [\(part(a, 1000)), \(part(b, nil))]}") == unfit)
                #expect(await store("{\"method\": \"percent\", \"parts\": [\(part(a, 5000)), \(part(b, 5000))]}") == nil)
                #expect(await store("{\"method\": \"percent\", \"parts\": [\(part(a, 5000)), \(part(b, 4999))]}") == unfit)
                #expect(await store("{\"method\": \"shares\", \"parts\": [\(part(a, 0))]}") == unfit)
                #expect(await store("{\"method\": \"halves\", \"parts\": [\(part(a, 1))]}") == unfit)

                let exactItem = "{\"method\": \"exact\", \"parts\": [\(part(a, 300)), \(part(b, 300))]}"
                #expect(await store(items([item(400, equal), item(600, exactItem)])) == nil)
                #expect(await store(items([item(300, equal), item(600, exactItem)], tax: 60, tip: 40)) == nil)
                #expect(await store(items([item(300, equal), item(600, exactItem)], tax: 60, tip: 39)) == unfit)
                #expect(await store(items([item(400, equal), item(600, "{\"method\": \"exact\", \"parts\": [\(part(a, 600))]}")])) == nil)
                #expect(await store(items([item(400, equal), item(600, "{\"method\": \"exact\", \"parts\": [\(part(a, 599))]}")])) == unfit)
                #expect(await store(items([item(1100, equal)], tax: -100)) == unfit)
                #expect(await store(items([item(0, equal), item(1000, equal)])) == unfit)
                #expect(await store(items([])) == unfit)
                #expect(await store(items([item(1000, items([item(1000, equal)]))])) == unfit)
                // The total cannot move away from the items either.
                try await connection.query(
                    "UPDATE transactions SET split_input = \(items([item(400, equal), item(600, exactItem)]))::jsonb WHERE id = \(expense)")
                let moved: String?
                do {
                    try await connection.withTransaction { connection in
                        try await connection.query("UPDATE transactions SET total_amount = 1200 WHERE id = \(expense)")
                        try await connection.query("UPDATE splits SET amount = 700 WHERE transaction_id = \(expense) AND user_id = \(a)")
                    }
                    moved = nil
                } catch let error as PostgresError {
                    moved = error.constraint
                }
                #expect(moved == unfit)
            }
        }
    }
}
