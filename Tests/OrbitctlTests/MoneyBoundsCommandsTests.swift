import Foundation
import LocalPostgres
import OrbitTestSupport
import Testing

/// Money past its bounds through orbitctl (issue 37, item 10): one sentence naming the field,
/// a non-zero exit, nothing written, never `PostgresError(…)`.
@Suite("orbitctl: money past its bounds")
struct MoneyBoundsCommandsTests {
    @Test("a settlement whose conversion overflows, amounts and rates past their bounds: one sentence naming the field, nothing written")
    func pastTheBounds() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            let (ada, max) = ("ada@example.com", "max@example.com")
            _ = try await cli.json("user", "create", "--email", ada, "--name", "Ada")
            _ = try await cli.json("user", "create", "--email", max, "--name", "Max")
            let community = try #require(try await cli.json("community", "create", "--name", "Tigers", "--as", ada)["id"] as? String)
            _ = try await cli.json("community", "add-member", community, "--user", max, "--as", ada)
            let dues = try #require(
                try await cli.json(
                    "dues", "create", "--community", community, "--name", "Season", "--amount", "50", "--due-date", "2030-01-31", "--as", ada)[
                        "id"] as? String)

            let cases: [(arguments: [String], field: String)] = [
                // The issue's own example: 6139.92 NPR at 66560293420104 IQD per rupee.
                (
                    [
                        "settle", "record", "--community", community, "--from", max, "--to", ada, "--currency", "NPR", "--settles", "IQD", "--rate",
                        "66560293420104",
                        "--amount", "6139.92", "--as", max,
                    ], "rate"
                ),
                (
                    [
                        "settle", "record", "--community", community, "--from", max, "--to", ada, "--currency", "USD", "--settles", "JPY", "--rate",
                        "0.0000000001", "--amount", "0.01", "--as", max,
                    ], "amount"
                ),
                (
                    [
                        "settle", "record", "--community", community, "--from", max, "--to", ada, "--currency", "USD", "--settles", "EUR", "--rate",
                        "100000000000000", "--amount", "1", "--as", max,
                    ], "rate"
                ),
                (["settle", "record", "--community", community, "--from", max, "--to", ada, "--amount", "21474836.48", "--as", max], "amount"),
                (
                    [
                        "expense", "add", "--community", community, "--description", "Boat", "--amount", "21474836.48", "--split", "equal", "--as",
                        ada,
                    ], "amount"
                ),
                (
                    [
                        "expense", "add", "--community", community, "--description", "Yen", "--currency", "JPY", "--amount", "2147483648", "--split",
                        "equal", "--as", ada,
                    ], "amount"
                ),
                (
                    [
                        "dues", "create", "--community", community, "--name", "Big", "--amount", "99999999999", "--due-date", "2030-01-31", "--as",
                        ada,
                    ], "amount"
                ),
                (["dues", "pay", dues, "--user", max, "--amount", "21474836.48", "--as", ada], "amount"),
                (
                    [
                        "recurring", "add", "--community", community, "--kind", "dues", "--description", "M", "--amount", "21474836.48", "--rule",
                        "FREQ=MONTHLY", "--as", ada,
                    ], "amount"
                ),
                (["rates", "set", "--community", community, "--from", "USD", "--to", "EUR", "--rate", "100000000000000", "--as", ada], "rate"),
            ]
            for (arguments, field) in cases {
                let result = try await cli.run(arguments)
                let command = arguments.prefix(2).joined(separator: " ")
                #expect(!result.succeeded, "\(command) succeeded")
                #expect(!result.errors.contains("PostgresError") && !result.errors.contains("SQLSTATE"), "\(command): \(result.errors)")
                #expect(result.errors.hasPrefix("Error: \(field) "), "\(command): \(result.errors)")
                #expect(result.errors.split(separator: "\n").count == 1, "\(command): one sentence: \(result.errors)")
            }
            // Nothing was written: only the dues created above.
            let expenses = try await cli.jsonItems("expense", "list", "--community", community, "--as", ada)
            #expect(expenses.isEmpty)
            #expect(try await cli.jsonItems("dues", "list", "--community", community, "--as", ada).count == 1)
        }
    }
}
