import Foundation
import LocalPostgres
import OrbitTestSupport
import Testing

/// The chores domain's commands end to end: a parent's decisions on completions and
/// redemptions (`chore approve|reject`, `reward fulfil|cancel`: one command, `Decide`, with the
/// decision as its parameter), in text and in JSON, and a member refused.
@Suite("orbitctl chore and reward: decisions")
struct ChoreCommandsTests {
    @Test("approve and reject a completion, fulfil and cancel a redemption: what each prints, and a member may not decide")
    func decisions() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            let (ada, max) = ("ada@example.com", "max@example.com")
            func id(_ object: [String: Any]) throws -> String { try #require(object["id"] as? String) }
            /// Runs a command that must succeed, and returns what it printed.
            func text(_ arguments: String...) async throws -> String {
                let result = try await cli.run(arguments)
                try #require(result.succeeded, "orbitctl \(arguments.joined(separator: " ")): \(result.errors)")
                return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
            }

            _ = try await cli.json("user", "create", "--email", ada, "--name", "Ada")
            let maxID = try id(try await cli.json("user", "create", "--email", max, "--name", "Max"))
            let community = try id(try await cli.json("community", "create", "--name", "Home", "--as", ada))
            _ = try await cli.json("community", "add-member", community, "--user", max, "--as", ada)
            func chore(_ title: String) async throws -> String {
                try id(
                    try await cli.json(
                        "chore", "create", "--community", community, "--title", title, "--points", "5", "--assign", maxID, "--as", ada))
            }
            let dishes = try id(try await cli.json("chore", "complete", try await chore("Dishes"), "--as", max))
            let laundry = try id(try await cli.json("chore", "complete", try await chore("Laundry"), "--as", max))

            let refused = try await cli.run("chore", "approve", dishes, "--as", max)
            #expect(!refused.succeeded && refused.errors.contains("admin"), "\(refused.errors)")
            #expect(try await text("chore", "approve", dishes, "--as", ada) == "Approved \(dishes): 5 points to user \(maxID).")
            let rejected = try await cli.json("chore", "reject", laundry, "--as", ada)
            #expect(rejected["id"] as? String == laundry && rejected["status"] as? String == "rejected")

            let reward = try id(try await cli.json("reward", "create", "--community", community, "--title", "Treat", "--cost", "2", "--as", ada))
            let first = try id(try await cli.json("reward", "redeem", reward, "--as", max))
            let second = try id(try await cli.json("reward", "redeem", reward, "--as", max))
            #expect(try await text("reward", "fulfil", first, "--as", ada) == "Fulfilled \(first).")
            #expect(try await text("reward", "cancel", second, "--as", ada) == "Cancelled \(second): 2 points refunded.")
            let again = try await cli.run("reward", "cancel", second, "--as", ada)
            #expect(!again.succeeded, "a redemption is resolved once")
            let points = try await cli.json("points", "show", "--community", community, "--as", max)
            #expect(points["balance"] as? Int == 3 && points["lifetime_earned"] as? Int == 5)
        }
    }
}
