import Foundation
import OrbitTestSupport
import Testing

@Suite("orbitctl category")
struct CategoryCommandTests {
    @Test("a member adds and lists categories, an expense takes one, its creator renames and archives it, an archived one is refused")
    func categories() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
            let max = try #require(try await cli.json("user", "create", "--email", "max@example.com", "--name", "Max")["id"] as? String)
            let community = try #require(try await cli.json("community", "create", "--name", "Trip", "--as", "ada@example.com")["id"] as? String)
            _ = try await cli.json("community", "add-member", community, "--user", max, "--as", "ada@example.com")

            let added = try await cli.run("category", "add", "--community", community, "--emoji", "🏕️", "Camp", "--as", "max@example.com")
            #expect(added.succeeded && added.output.hasPrefix("Added category 🏕️ Camp"), "\(added.output) \(added.errors)")
            let camp = try #require(
                try await cli.jsonItems("category", "list", "--community", community, "--as", "ada@example.com").first?["id"] as? String)
            let table = try await cli.run("category", "list", "--community", community, "--as", "ada@example.com")
            #expect(table.output.hasPrefix("ID") && table.output.contains("Camp"), "\(table.output)")
            let taken = try await cli.run("category", "add", "--community", community, "--emoji", "⛺", "camp", "--as", "ada@example.com")
            #expect(!taken.succeeded && taken.errors.contains("name"), "\(taken.errors)")
            let nothing = try await cli.run("category", "rename", camp, "--as", "max@example.com")
            #expect(!nothing.succeeded && nothing.errors.contains("--name"), "\(nothing.errors)")

            let tent = try await cli.json(
                "expense", "add", "--community", community, "--description", "Tent", "--amount", "80.00", "--category-id", camp,
                "--time", "19:30", "--split", "equal", "--between", max, "--as", "max@example.com")
            #expect(tent["category_id"] as? String == camp && tent["category"] as? String == "other", "\(tent)")
            #expect(tent["transaction_time"] as? String == "19:30", "\(tent)")
            let tentID = try #require(tent["id"] as? String)
            let listed = try await cli.jsonItems("expense", "list", "--community", community, "--category-id", camp, "--as", "ada@example.com")
            #expect(listed.map { $0["id"] as? String } == [tentID])

            let renamed = try await cli.json("category", "rename", camp, "--name", "Summer camp", "--emoji", "⛺", "--as", "max@example.com")
            #expect(renamed["name"] as? String == "Summer camp" && renamed["emoji"] as? String == "⛺")
            let archived = try await cli.run("category", "archive", camp, "--as", "ada@example.com")
            #expect(archived.succeeded && archived.output.hasPrefix("Archived category"), "\(archived.output) \(archived.errors)")
            #expect(try await cli.jsonItems("category", "list", "--community", community, "--as", "ada@example.com").isEmpty)
            #expect(try await cli.jsonItems("category", "list", "--community", community, "--archived", "--as", "ada@example.com").count == 1)
            let refused = try await cli.run(
                "expense", "add", "--community", community, "--description", "Stove", "--amount", "20.00", "--category-id", camp,
                "--split", "equal", "--between", max, "--as", "max@example.com")
            #expect(!refused.succeeded && refused.errors.contains("archived"), "\(refused.errors)")
            let left = try await cli.json(
                "expense", "update", tentID, "--no-category-id", "--category", "travel", "--clear-time", "--as", "max@example.com")
            #expect(left["category_id"] is NSNull && left["category"] as? String == "travel" && left["transaction_time"] is NSNull, "\(left)")
            let badTime = try await cli.run("expense", "update", tentID, "--time", "25:00", "--as", "max@example.com")
            #expect(!badTime.succeeded && badTime.errors.contains("transaction_time"), "\(badTime.errors)")
            let back = try await cli.run("category", "unarchive", camp, "--as", "max@example.com")
            #expect(back.succeeded && back.output.contains("is in use again"), "\(back.output) \(back.errors)")
        }
    }
}
