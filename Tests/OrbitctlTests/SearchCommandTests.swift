import Foundation
import OrbitTestSupport
import Testing

@Suite("orbitctl search")
struct SearchCommandTests {
    @Test("finds what the acting user may read, marks the words, pages with --cursor; the language setting stems; errors are one sentence")
    func search() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
            let max = try await cli.json("user", "create", "--email", "max@example.com", "--name", "Max")
            _ = try await cli.json("user", "create", "--email", "olga@example.com", "--name", "Olga")
            let community = try #require(try await cli.json("community", "create", "--name", "Tigers", "--as", "ada@example.com")["id"] as? String)
            _ = try await cli.json("community", "add-member", community, "--user", try #require(max["id"] as? String), "--as", "ada@example.com")
            for text in ["Running to the café", "The kids were running", "Cafe opens at nine"] {
                _ = try await cli.json("post", "create", "--community", community, "--content", text, "--as", "ada@example.com")
            }

            let table = try await cli.run("search", "--community", community, "cafe", "--as", "max@example.com")
            #expect(table.succeeded, "\(table.errors)")
            #expect(table.output.contains("*café*") && table.output.contains("*Cafe*"), "\(table.output)")
            #expect(table.output.hasPrefix("KIND"))

            let first = try await cli.json("search", "--community", community, "running", "--limit", "1", "--as", "max@example.com")
            let cursor = try #require(first["next_cursor"] as? String)
            let second = try await cli.jsonItems(
                "search", "--community", community, "running", "--limit", "1", "--cursor", cursor, "--as", "max@example.com")
            #expect(second.count == 1 && (first["items"] as? [[String: Any]])?.first?["id"] as? String != second.first?["id"] as? String)

            // `simple` until the community says English; then "run" finds "running".
            #expect(try await cli.jsonItems("search", "--community", community, "run", "--as", "max@example.com").isEmpty)
            _ = try await cli.json("community", "update", community, "--settings", #"{"language": "english"}"#, "--as", "ada@example.com")
            #expect(try await cli.jsonItems("search", "--community", community, "run", "--as", "max@example.com").count == 2)

            let nothing = try await cli.run("search", "--community", community, "zebra", "--as", "max@example.com")
            #expect(nothing.succeeded && nothing.output.contains("Nothing found."))
            let stranger = try await cli.run("search", "--community", community, "cafe", "--as", "olga@example.com")
            #expect(!stranger.succeeded && stranger.errors.contains("not found"), "\(stranger.errors)")
            let blank = try await cli.run("search", "--community", community, " ", "--as", "max@example.com")
            #expect(!blank.succeeded && blank.errors.contains("q"), "\(blank.errors)")
        }
    }
}
