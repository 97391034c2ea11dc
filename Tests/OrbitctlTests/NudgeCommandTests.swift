import Foundation
import OrbitTestSupport
import Testing

@Suite("orbitctl nudge")
struct NudgeCommandTests {
    @Test("a member who is owed nudges who owes them; again the same day is refused with the wait")
    func nudge() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
            let max = try #require(try await cli.json("user", "create", "--email", "max@example.com", "--name", "Max")["id"] as? String)
            let community = try #require(try await cli.json("community", "create", "--name", "Trip", "--as", "ada@example.com")["id"] as? String)
            _ = try await cli.json("community", "add-member", community, "--user", max, "--as", "ada@example.com")
            _ = try await cli.json(
                "expense", "add", "--community", community, "--description", "Pizza", "--amount", "30.00", "--split", "equal",
                "--between", max, "--as", "ada@example.com")
            let sent = try await cli.run("nudge", "--community", community, "max@example.com", "--as", "ada@example.com")
            #expect(sent.succeeded && sent.output.contains("they owe you"), "\(sent.output) \(sent.errors)")
            let again = try await cli.run("nudge", "--community", community, "max@example.com", "--as", "ada@example.com")
            #expect(!again.succeeded && again.errors.contains("less than a day"), "\(again.errors)")
        }
    }
}

@Suite("orbitctl notifications preferences")
struct NotificationPreferencesCommandTests {
    @Test("shows the switches, all on at first, and sets some")
    func preferences() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
            let shown = try await cli.run("notifications", "preferences", "--as", "ada@example.com")
            #expect(shown.succeeded && shown.output.contains("expenses on") && shown.output.contains("weekly digest on"), "\(shown.output)")
            let set = try await cli.json("notifications", "preferences", "--no-expenses", "--no-weekly-digest", "--as", "ada@example.com")
            #expect(set["expenses"] as? Bool == false && set["weekly_digest"] as? Bool == false && set["settlements"] as? Bool == true, "\(set)")
        }
    }
}
