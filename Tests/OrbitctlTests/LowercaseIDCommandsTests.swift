import Foundation
import LocalPostgres
import OrbitTestSupport
import Testing

/// Ids look the same everywhere (issue 37, item 4): every id `orbitctl --json` prints, and every
/// id of the money export in JSON and CSV, is lower case, as the API writes them.
@Suite("Every id orbitctl prints is lower case")
struct LowercaseIDCommandsTests {
    @Test("a community's every write and list through orbitctl --json, and the export as JSON and CSV: no id in upper case")
    func everyOutput() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            let (ada, max) = ("ada@example.com", "max@example.com")
            var outputs: [(String, String)] = []
            /// Runs a command with --json, keeps its output, and returns it parsed.
            func json(_ arguments: String...) async throws -> Any {
                let result = try await cli.run(arguments + ["--json"])
                try #require(result.succeeded, "orbitctl \(arguments.joined(separator: " ")): \(result.errors)")
                outputs.append((arguments.prefix(2).joined(separator: " "), result.output))
                return try JSONSerialization.jsonObject(with: Data(result.output.utf8), options: .fragmentsAllowed)
            }
            func id(_ value: Any) throws -> String { try #require((value as? [String: Any])?["id"] as? String) }

            _ = try await json("user", "create", "--email", ada, "--name", "Ada")
            let maxID = try id(try await json("user", "create", "--email", max, "--name", "Max"))
            let community = try id(try await json("community", "create", "--name", "Tigers", "--as", ada))
            _ = try await json("community", "add-member", community, "--user", max, "--as", ada)
            let kid = try id(try await json("family", "add", "--name", "Kit", "--as", max))
            let start = "2030-01-01T10:00:00Z"
            let event = try id(
                try await json(
                    "event", "create", "--community", community, "--title", "Practice", "--starts-at", start, "--rrule", "FREQ=WEEKLY;COUNT=3",
                    "--as", ada))
            _ = try await json("event", "rsvp", event, "--occurrence", start, "--status", "yes", "--as", max)
            let post = try id(try await json("post", "create", "--community", community, "--content", "Hello", "--as", ada))
            _ = try await json("post", "comment", post, "--content", "Hi", "--as", max)
            let expense = try id(
                try await json(
                    "expense", "add", "--community", community, "--description", "Pizza", "--amount", "30", "--split", "equal",
                    "--between", "\(ada),\(max),\(kid)", "--as", ada))
            _ = try await json("settle", "record", "--community", community, "--from", max, "--to", ada, "--amount", "5", "--as", max)
            let dues = try id(
                try await json(
                    "dues", "create", "--community", community, "--name", "Season", "--amount", "50", "--due-date", "2030-01-31", "--as", ada))
            _ = try await json("dues", "pay", dues, "--user", max, "--amount", "20", "--as", ada)
            let charge = try id(
                try await json(
                    "recurring", "add", "--community", community, "--kind", "dues", "--description", "Monthly", "--amount", "10", "--rule",
                    "FREQ=MONTHLY", "--starts", "2030-01-01", "--as", ada))
            _ = try await json("rates", "set", "--community", community, "--from", "USD", "--to", "EUR", "--rate", "0.9", "--as", ada)
            _ = try await json("invite", "create", "--community", community, "--as", ada)
            let conversationID = try id(try await json("chat", "start", "--community", community, "--kind", "direct", "--with", max, "--as", ada))
            _ = try await json("chat", "send", conversationID, "--text", "See you", "--as", ada)
            _ = try await json(
                "chore", "create", "--community", community, "--title", "Dishes", "--points", "5", "--assign", "\(kid),\(maxID)", "--as", ada)
            let reward = try id(try await json("reward", "create", "--community", community, "--title", "Treat", "--cost", "1", "--as", ada))
            _ = try await json("points", "adjust", "--community", community, "--for", kid, "--delta=3", "--reason", "Start", "--as", ada)
            _ = try await json("reward", "redeem", reward, "--by", kid, "--as", max)
            _ = try await json("family", "pair", kid, "--community", community, "--as", max)
            _ = try await json(
                "device", "register", String(repeating: "ab", count: 32), "--environment", "production", "--bundle-id", "app.orbitcove.ios", "--as",
                ada)

            // Every list and read.
            for read in [
                ["user", "list"], ["user", "show", max], ["community", "list"], ["community", "show", community],
                ["community", "members", community],
                ["community", "audit", community, "--as", ada], ["invite", "list", "--community", community, "--as", ada],
                ["family", "list", "--as", max],
                ["family", "devices", "list", kid, "--community", community, "--as", max],
                ["event", "list", "--community", community, "--from", "2029-12-01T00:00:00Z", "--to", "2030-02-01T00:00:00Z", "--as", max],
                ["event", "show", event, "--as", max], ["event", "rsvps", event, "--occurrence", start, "--as", max],
                ["event", "attendance", event, "--occurrence", start, "--as", max], ["post", "list", "--community", community, "--as", max],
                ["post", "show", post, "--as", max], ["post", "comments", post, "--as", max],
                ["media", "list", "--community", community, "--as", max],
                ["expense", "list", "--community", community, "--as", max], ["expense", "show", expense, "--as", max],
                ["expense", "history", "--community", community, "--as", max], ["settle", "suggest", "--community", community, "--as", max],
                ["balances", "show", "--community", community, "--as", max], ["dues", "list", "--community", community, "--as", max],
                ["dues", "show", dues, "--as", max], ["dues", "payments", dues, "--as", ada], ["dues", "report", dues, "--as", ada],
                ["recurring", "list", "--community", community, "--as", max], ["recurring", "show", charge, "--as", max],
                ["rates", "list", "--community", community, "--as", max], ["device", "list", "--as", ada], ["notifications", "list", "--as", max],
                ["sync", "pull", "--community", community, "--as", max], ["chat", "list", "--as", max],
                ["chat", "history", conversationID, "--as", max],
                ["chore", "list", "--community", community, "--as", max], ["chore", "completions", "--community", community, "--as", ada],
                ["reward", "list", "--community", community, "--as", max], ["reward", "redemptions", "--community", community, "--as", max],
                ["points", "show", "--community", community, "--for", kid, "--as", max],
            ] {
                let result = try await cli.run(read + ["--json"])
                #expect(result.succeeded, "orbitctl \(read.joined(separator: " ")): \(result.errors)")
                outputs.append((read.prefix(2).joined(separator: " "), result.output))
            }
            let exported = try await cli.run("export", "--community", community, "--format", "json", "--as", max)
            #expect(exported.succeeded && exported.output.contains(expense))
            outputs.append(("export json", exported.output))
            let csv = try await cli.run("export", "--community", community, "--as", max)
            #expect(csv.succeeded && csv.output.contains(expense))
            outputs.append(("export csv", csv.output))

            #expect(outputs.count > 60)
            for (command, output) in outputs {
                let upper = Self.upperCaseIDs(in: output)
                #expect(upper.isEmpty, "orbitctl \(command): \(upper.prefix(3))")
            }
        }
    }

    /// Every UUID in `text` that is not all lower case.
    static func upperCaseIDs(in text: String) -> [String] {
        let uuid = /[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}/
        return text.matches(of: uuid).map { String($0.output) }.filter { $0 != $0.lowercased() }
    }
}
