import Foundation
import OrbitTestSupport
import Testing

@Suite("orbitctl community archive")
struct ArchiveCommandTests {
    @Test("an admin archives and unarchives; community list shows it only with --archived; a write meanwhile is refused")
    func archive() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
            let community = try #require(try await cli.json("community", "create", "--name", "Trip", "--as", "ada@example.com")["id"] as? String)
            let archived = try await cli.run("community", "archive", community, "--as", "ada@example.com")
            #expect(archived.succeeded && archived.output.contains("read-only"), "\(archived.output) \(archived.errors)")
            #expect(try await cli.jsonArray("community", "list", "--as", "ada@example.com").isEmpty)
            let table = try await cli.run("community", "list", "--archived", "--as", "ada@example.com")
            #expect(table.output.contains("Trip") && table.output.contains("ARCHIVED"), "\(table.output)")
            let refused = try await cli.run(
                "expense", "add", "--community", community, "--description", "Late", "--amount", "5.00", "--as", "ada@example.com")
            #expect(!refused.succeeded && refused.errors.contains("archived"), "\(refused.errors)")
            let back = try await cli.run("community", "unarchive", community, "--as", "ada@example.com")
            #expect(back.succeeded && back.output.contains("writable again"), "\(back.output) \(back.errors)")
            #expect(try await cli.jsonArray("community", "list", "--as", "ada@example.com").count == 1)
        }
    }
}
