import Foundation
import LocalPostgres
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Runs the orbitctl binary that `swift build --build-tests` built beside the tests.
struct Orbitctl {
    let database: TestDatabase
    /// Where orbitctl connects: the test database, or (for pooler tests) pgbouncer in front of it.
    var databaseURL: String?
    /// More environment for each run (`ORBIT_POOLER`, …).
    var environment: [String: String] = [:]

    init(database: TestDatabase, databaseURL: String? = nil, environment: [String: String] = [:]) {
        self.database = database
        self.databaseURL = databaseURL
        self.environment = environment
    }

    /// The process environment of a run.
    var runEnvironment: [String: String] {
        var result = ProcessInfo.processInfo.environment
        result["DATABASE_URL"] = databaseURL ?? database.connectionString
        result.merge(environment) { $1 }
        return result
    }

    static var path: String { OrbitctlProcess.path }

    /// Runs `orbitctl arguments…` with DATABASE_URL set to the test database.
    @discardableResult
    func run(_ arguments: String...) async throws -> ProcessOutput {
        try await run(arguments)
    }

    @discardableResult
    func run(_ arguments: [String]) async throws -> ProcessOutput {
        try await Subprocess.run(Self.path, arguments, environment: runEnvironment, separateErrors: true)
    }

    /// Runs a command that must succeed with `--json`, and decodes its output.
    func json(_ arguments: String...) async throws -> [String: Any] {
        try #require(try await decoded(arguments) as? [String: Any])
    }

    /// The `items` of a command that prints a page (`{"items": [...], "next_cursor": …}`).
    func jsonItems(_ arguments: String...) async throws -> [[String: Any]] {
        let page = try #require(try await decoded(arguments) as? [String: Any])
        return try #require(page["items"] as? [[String: Any]])
    }

    func jsonArray(_ arguments: String...) async throws -> [[String: Any]] {
        try #require(try await decoded(arguments) as? [[String: Any]])
    }

    private func decoded(_ arguments: [String]) async throws -> Any {
        let result = try await Subprocess.run(Self.path, arguments + ["--json"], environment: runEnvironment, separateErrors: true)
        try #require(result.succeeded, "orbitctl \(arguments.joined(separator: " ")) failed: \(result.errors)")
        return try JSONSerialization.jsonObject(with: Data(result.output.utf8))
    }
}

@Suite("orbitctl end to end, against a real database")
struct OrbitctlTests {
    @Test("a community's life: create, invite, redeem, roles, members and the audit log")
    func communitySession() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            let ada = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada Lovelace")
            _ = try await cli.json("user", "create", "--email", "max@example.com", "--name", "Max Planck")
            let community = try await cli.json(
                "community", "create", "--name", "Tigers U10", "--description", "Saturday soccer",
                "--settings", #"{"timezone": "Europe/Berlin", "defaultReminderHours": 48}"#, "--as", "ada@example.com"
            )
            let id = try #require(community["id"] as? String)
            #expect(community["member_count"] as? Int == 1)
            #expect(community["created_by"] as? String == ada["id"] as? String)
            // JSON columns keep their keys as stored (camelCase in settings).
            #expect((community["settings"] as? [String: Any])?["timezone"] as? String == "Europe/Berlin")
            #expect((community["settings"] as? [String: Any])?["defaultReminderHours"] as? Int == 48)

            let invite = try await cli.json("invite", "create", "--community", id, "--max-uses", "5", "--as", "ada@example.com")
            let code = try #require(invite["code"] as? String)
            #expect(invite["uses_remaining"] as? Int == 4 + 1)
            // Anyone with the code sees what it is for, before joining.
            let preview = try await cli.json("invite", "preview", code)
            #expect(preview["community_name"] as? String == "Tigers U10" && preview["member_count"] as? Int == 1, "\(preview)")
            let told = try await cli.run("invite", "preview", code.lowercased())
            #expect(told.succeeded && told.output.contains("Tigers U10: 1 member(s), invited by Ada Lovelace"), "\(told.output)")
            let unknown = try await cli.run("invite", "preview", "ZZZZZZ")
            #expect(!unknown.succeeded && unknown.errors.contains("not found"), "\(unknown.errors)")
            let joined = try await cli.json("invite", "redeem", code.lowercased(), "--as", "max@example.com")
            #expect(joined["community_id"] as? String == id)

            let promoted = try await cli.json("community", "set-role", id, "--user", "max@example.com", "--role", "admin", "--as", "ada@example.com")
            #expect(promoted["role"] as? String == "admin")
            let members = try await cli.jsonItems("community", "members", id, "--as", "max@example.com")
            #expect(Set(members.compactMap { $0["role"] as? String }) == ["admin"])
            #expect(members.allSatisfy { $0["user_id"] is String && $0["joined_at"] is String })
            // Every column is there, null included (a script may index left_at directly).
            #expect(members.allSatisfy { $0["left_at"] is NSNull })

            let shown = try await cli.json("community", "show", id)
            #expect(shown["member_count"] as? Int == 2)

            let audit = try await cli.jsonItems("community", "audit", id, "--as", "ada@example.com")
            #expect(audit.compactMap { $0["action"] as? String } == ["member.role_changed", "member.joined", "invite.created", "community.created"])
            #expect(audit.allSatisfy { $0["user_id"] is String && $0["created_at"] is String && $0["target_type"] is String })
        }
    }

    @Test(
        "bad input fails with one sentence on stderr, a non-zero exit, and nothing written",
        arguments: [
            ["community", "show", "00000000-0000-4000-8000-000000000000"],
            ["community", "show", "not-a-uuid"],
            ["community", "create", "--name", String(repeating: "n", count: 101), "--as", "ada@example.com"],
            ["community", "create", "--name", "X", "--settings", "{not json", "--as", "ada@example.com"],
            ["community", "create", "--name", "X", "--settings", #"{"timezone": "Mars/Olympus"}"#, "--as", "ada@example.com"],
            ["community", "create", "--name", "X", "--as", "nobody@example.com"],
            ["user", "create", "--email", "bad", "--name", "Bad"],
            ["invite", "redeem", "ZZZZZZ", "--as", "ada@example.com"],
            ["community", "audit", "00000000-0000-4000-8000-000000000000", "--as", "ada@example.com"],
        ])
    func badInput(arguments: [String]) async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
            var environment = ProcessInfo.processInfo.environment
            environment["DATABASE_URL"] = database.connectionString
            let result = try await Subprocess.run(Orbitctl.path, arguments, environment: environment, separateErrors: true)
            #expect(!result.succeeded)
            #expect(result.output.isEmpty)
            // ArgumentParser adds "Help:" and "Usage:" lines after its own one-sentence errors.
            let lines = result.errors.split(separator: "\n").filter {
                !$0.hasPrefix("Usage:") && !$0.hasPrefix("Help:") && !$0.hasPrefix("  ") && !$0.isEmpty
            }
            #expect(lines.count == 1, "stderr: \(result.errors)")
            let counts = try await database.withConnection { connection in
                try await connection.query("SELECT (SELECT count(*) FROM communities) AS c, (SELECT count(*) FROM users) AS u").single()
                    .decode((Int64, Int64).self)
            }
            #expect(counts.0 == 0 && counts.1 == 1)
        }
    }
}

@Suite("orbitctl event expand")
struct EventExpandTests {
    @Test("prints the occurrences as a JSON array of UTC RFC 3339 strings")
    func expandJSON() async throws {
        let result = try await Subprocess.run(
            Orbitctl.path,
            [
                "event", "expand", "--rrule", "FREQ=WEEKLY;BYDAY=TU", "--start", "2026-03-03T18:00", "--tz", "America/New_York", "--count", "3",
                "--json",
            ],
            separateErrors: true
        )
        #expect(result.succeeded)
        let occurrences = try JSONDecoder().decode([String].self, from: Data(result.output.utf8))
        #expect(occurrences == ["2026-03-03T23:00:00Z", "2026-03-10T22:00:00Z", "2026-03-17T22:00:00Z"])

        let skipping = try await Subprocess.run(
            Orbitctl.path,
            [
                "event", "expand", "--rrule", "FREQ=WEEKLY;BYDAY=TU;COUNT=3", "--start", "2026-03-03T18:00", "--tz", "America/New_York",
                "--exdate", "2026-03-10T18:00", "--json",
            ],
            separateErrors: true
        )
        #expect(try JSONDecoder().decode([String].self, from: Data(skipping.output.utf8)) == ["2026-03-03T23:00:00Z", "2026-03-17T22:00:00Z"])
    }

    @Test("without --to or --count it stops at 100; a window bounds it")
    func bounds() async throws {
        let endless = try await Subprocess.run(
            Orbitctl.path, ["event", "expand", "--rrule", "FREQ=DAILY", "--start", "2026-01-01T08:00", "--tz", "Europe/Berlin", "--json"],
            separateErrors: true
        )
        #expect(try JSONDecoder().decode([String].self, from: Data(endless.output.utf8)).count == 100)
        let window = try await Subprocess.run(
            Orbitctl.path,
            [
                "event", "expand", "--rrule", "FREQ=DAILY", "--start", "2026-01-01T08:00", "--tz", "Europe/Berlin", "--from", "2026-02-01T00:00",
                "--to", "2026-02-28T23:59", "--json",
            ],
            separateErrors: true
        )
        #expect(try JSONDecoder().decode([String].self, from: Data(window.output.utf8)).count == 28)
    }

    @Test(
        "an invalid rule or zone is one sentence on stderr naming the problem",
        arguments: [
            ["--rrule", "FREQ=MONTHLY;BYDAY=9FR", "--start", "2026-01-30T17:00", "--tz", "Europe/Berlin"],
            ["--rrule", "FREQ=WEEKLY", "--start", "2026-01-30T17:00", "--tz", "Mars/Base"],
            ["--rrule", "FREQ=WEEKLY", "--start", "yesterday", "--tz", "Europe/Berlin"],
        ])
    func invalid(arguments: [String]) async throws {
        let result = try await Subprocess.run(Orbitctl.path, ["event", "expand"] + arguments + ["--json"], separateErrors: true)
        #expect(!result.succeeded && result.output.isEmpty)
        #expect(result.errors.split(separator: "\n").count == 1, "\(result.errors)")
    }
}

@Suite("orbitctl event, end to end")
struct EventCLITests {
    @Test("create a weekly series, list a window, answer an occurrence, read attendance")
    func eventSession() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
            let community = try #require(
                try await cli.json(
                    "community", "create", "--name", "Tigers", "--settings", #"{"timezone": "America/New_York"}"#, "--as", "ada@example.com")["id"]
                    as? String
            )
            let series = try await cli.json(
                "event", "create", "--community", community, "--title", "Practice", "--starts-at", "2026-03-03T18:00:00-05:00",
                "--rrule", "FREQ=WEEKLY;BYDAY=TU;COUNT=4", "--category", "practice", "--as", "ada@example.com"
            )
            let id = try #require(series["id"] as? String)
            #expect(series["recurrence_timezone"] as? String == "America/New_York")
            let window = try await cli.jsonArray(
                "event", "list", "--community", community, "--from", "2026-03-01T00:00:00Z", "--to", "2026-04-01T00:00:00Z", "--as", "ada@example.com"
            )
            #expect(
                window.compactMap { $0["starts_at"] as? String } == [
                    "2026-03-03T23:00:00Z", "2026-03-10T22:00:00Z", "2026-03-17T22:00:00Z", "2026-03-24T22:00:00Z",
                ])
            let answer = try await cli.json(
                "event", "rsvp", id, "--occurrence", "2026-03-10T22:00:00Z", "--status", "yes", "--plus-ones", "1", "--as", "ada@example.com"
            )
            #expect(answer["status"] as? String == "yes" && answer["event_id"] as? String != id)
            let attendance = try await cli.json("event", "attendance", id, "--occurrence", "2026-03-10T22:00:00Z", "--as", "ada@example.com")
            #expect((attendance["yes"] as? [String: Any])?["people"] as? Int == 2)
        }
    }
}

@Suite("orbitctl post, end to end")
struct PostCLITests {
    @Test("post, page through the feed, comment, react, vote")
    func feedSession() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
            let community = try #require(try await cli.json("community", "create", "--name", "Tigers", "--as", "ada@example.com")["id"] as? String)
            let poll = try await cli.json(
                "post", "create", "--community", community, "--type", "poll", "--content", "When?", "--option", "Sat", "--option", "Sun",
                "--as", "ada@example.com"
            )
            let pollID = try #require(poll["id"] as? String)
            #expect(poll["editable_until"] is String)
            for index in 0..<3 {
                _ = try await cli.json("post", "create", "--community", community, "--content", "Post \(index)", "--as", "ada@example.com")
            }
            let first = try await cli.json("post", "list", "--community", community, "--limit", "3", "--as", "ada@example.com")
            let cursor = try #require(first["next_cursor"] as? String)
            let second = try await cli.json("post", "list", "--community", community, "--limit", "3", "--cursor", cursor, "--as", "ada@example.com")
            #expect(second["next_cursor"] is NSNull)
            let ids = ((first["items"] as? [[String: Any]]) ?? []) + ((second["items"] as? [[String: Any]]) ?? [])
            #expect(ids.count == 4 && Set(ids.compactMap { $0["id"] as? String }).count == 4)
            #expect(ids.allSatisfy { $0["author_id"] is String && $0["comment_count"] is Int && $0["reaction_counts"] is [String: Any] })

            _ = try await cli.json("post", "comment", pollID, "--content", "Saturday!", "--as", "ada@example.com")
            let reacted = try await cli.json("post", "react", pollID, "--type", "celebrate", "--as", "ada@example.com")
            #expect((reacted["reaction_counts"] as? [String: Int]) == ["celebrate": 1])
            let voted = try await cli.json("post", "vote", pollID, "--option", "1", "--as", "ada@example.com")
            #expect(voted["my_votes"] as? [Int] == [1] && voted["comment_count"] as? Int == 1)
        }
    }
}

@Suite("orbitctl media, end to end")
struct MediaCLITests {
    @Test("upload a file, post it as a photo, list, delete")
    func mediaSession() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            let scratch = FileManager.default.temporaryDirectory.appending(path: "orbit-cli-media-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: scratch) }
            let photo = scratch.appending(path: "goal.png")
            try MediaSamples.widePNG.write(to: photo)
            let store = scratch.appending(path: "store").path
            _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
            let community = try #require(try await cli.json("community", "create", "--name", "Tigers", "--as", "ada@example.com")["id"] as? String)
            let media = try await cli.json("media", "upload", photo.path, "--community", community, "--media-dir", store, "--as", "ada@example.com")
            let mediaID = try #require(media["id"] as? String)
            #expect(media["mime_type"] as? String == "image/png" && media["size_bytes"] as? Int == MediaSamples.widePNG.count)
            #expect(media["width"] as? Int == 2000 && media["height"] as? Int == 1000)
            // Not a PNG's content: refused in one sentence, nothing stored.
            let fake = scratch.appending(path: "fake.png")
            try MediaSamples.svg.write(to: fake)
            let refused = try await cli.run("media", "upload", fake.path, "--community", community, "--media-dir", store, "--as", "ada@example.com")
            #expect(!refused.succeeded && refused.errors.contains("does not hold image/png content"), "\(refused.errors)")
            // A file that cannot be read is said before anything connects: the unknown user is not
            // looked up.
            let missing = try await cli.run(
                "media", "upload", scratch.appending(path: "missing.png").path, "--community", community, "--media-dir", store, "--as",
                "nobody@example.com")
            #expect(!missing.succeeded && missing.errors.contains("Cannot read"), "\(missing.errors)")
            let post = try await cli.json(
                "post", "create", "--community", community, "--type", "photo", "--media-id", mediaID, "--media-dir", store, "--as", "ada@example.com"
            )
            #expect((post["media_urls"] as? [String])?.count == 1)
            #expect(try await cli.jsonItems("media", "list", "--community", community, "--as", "ada@example.com").count == 1)
            _ = try await cli.json("media", "delete", mediaID, "--media-dir", store, "--as", "ada@example.com")
            #expect(((try? FileManager.default.subpathsOfDirectory(atPath: store)) ?? []).filter { $0.hasSuffix(".png") }.isEmpty)
        }
    }
}

@Suite("orbitctl expense, balances, settle and dues, end to end")
struct FinanceCLITests {
    @Test("an expense, balances, suggestions and a dues report")
    func moneySession() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            for (email, name) in [("ada@example.com", "Ada"), ("max@example.com", "Max"), ("zoe@example.com", "Zoe")] {
                _ = try await cli.json("user", "create", "--email", email, "--name", name)
            }
            let community = try #require(try await cli.json("community", "create", "--name", "Tigers", "--as", "ada@example.com")["id"] as? String)
            for email in ["max@example.com", "zoe@example.com"] {
                _ = try await cli.json("community", "add-member", community, "--user", email, "--as", "ada@example.com")
            }
            let expense = try await cli.json(
                "expense", "add", "--community", community, "--description", "Pizza", "--amount", "10.01", "--paid-by", "ada@example.com",
                "--split", "equal", "--between", "ada@example.com,max@example.com,zoe@example.com", "--as", "max@example.com"
            )
            let splits = try #require(expense["splits"] as? [[String: Any]])
            #expect(splits.compactMap { $0["amount"] as? Int }.sorted() == [333, 334, 334] && splits.allSatisfy { $0["user_id"] is String })
            let balances = try await cli.jsonArray("balances", "show", "--community", community, "--as", "zoe@example.com")
            #expect(balances.compactMap { $0["balance"] as? Int }.reduce(0, +) == 0 && balances.allSatisfy { $0["currency"] as? String == "USD" })
            let suggestions = try await cli.jsonArray("settle", "suggest", "--community", community, "--as", "zoe@example.com")
            #expect(
                suggestions.count == 2 && suggestions.allSatisfy { $0["from_user_id"] is String && $0["to_user_id"] is String && $0["amount"] is Int }
            )

            // Who owes whom: Zoe paid 3.00 for Max and herself, so Max owes Zoe 1.50 besides his
            // share of the pizza; Zoe owes Ada hers.
            _ = try await cli.json(
                "expense", "add", "--community", community, "--description", "Ice", "--amount", "3.00", "--paid-by", "zoe@example.com",
                "--split", "equal", "--between", "max@example.com,zoe@example.com", "--as", "zoe@example.com")
            let pairs = try await cli.jsonArray("balances", "pairs", "--community", community, "--as", "max@example.com")
            let amounts = pairs.compactMap { $0["amount"] as? Int }
            #expect(amounts.count == 3 && amounts.last == 150 && amounts.dropLast().allSatisfy { [333, 334].contains($0) }, "\(pairs)")
            let table = try await cli.run("balances", "pairs", "--community", community, "--as", "max@example.com")
            #expect(table.succeeded && table.output.contains("FROM") && table.output.contains("1.50 USD"), "\(table.output)")
            let with = try await cli.json("balances", "with", "--community", community, "--member", "zoe@example.com", "--as", "max@example.com")
            #expect((with["balances"] as? [[String: Any]])?.first?["balance"] as? Int == -150, "\(with)")
            #expect((with["entries"] as? [[String: Any]])?.compactMap { $0["amount"] as? Int } == [-150])
            let told = try await cli.run("balances", "with", "--community", community, "--member", "zoe@example.com", "--as", "max@example.com")
            #expect(told.output.contains("You owe") && told.output.contains("1.50 USD") && told.output.contains("Ice"), "\(told.output)")
            let pairwise = try await cli.jsonArray("settle", "suggest", "--community", community, "--no-simplify", "--as", "zoe@example.com")
            #expect(pairwise.compactMap { $0["amount"] as? Int } == amounts, "\(pairwise)")
            let yourself = try await cli.run("balances", "with", "--community", community, "--member", "max@example.com", "--as", "max@example.com")
            #expect(yourself.succeeded && yourself.output.contains("You are even with"), "\(yourself.output) \(yourself.errors)")

            // "My groups": Max pins the club; his list says so, with his role and balance.
            let pinned = try await cli.json(
                "community", "membership", "--community", community, "--pin", "--position", "1", "--as", "max@example.com")
            #expect(pinned["pinned"] as? Bool == true && pinned["position"] as? Int == 1, "\(pinned)")
            let groups = try await cli.jsonArray("community", "list", "--as", "max@example.com")
            let mine = groups.first?["my"] as? [String: Any]
            #expect(mine?["pinned"] as? Bool == true && mine?["role"] as? String == "member", "\(groups)")
            #expect((mine?["balances"] as? [[String: Any]])?.first?["balance"] as? Int ?? 0 < 0, "\(groups)")
            let listed = try await cli.run("community", "list", "--as", "max@example.com")
            #expect(listed.output.contains("yes (1)") && listed.output.contains("USD") && listed.output.contains("LAST ACTIVITY"), "\(listed.output)")
            let both = try await cli.run("community", "membership", "--community", community, "--pin", "--unpin", "--as", "max@example.com")
            #expect(!both.succeeded && both.errors.contains("not both"), "\(both.errors)")

            // Notes, and a settlement's day.
            let noted = try await cli.json(
                "expense", "update", try #require(expense["id"] as? String), "--notes", "Margherita", "--as", "max@example.com")
            #expect(noted["notes"] as? String == "Margherita", "\(noted)")
            let paid = try await cli.json(
                "settle", "record", "--community", community, "--from", "zoe@example.com", "--to", "ada@example.com", "--amount", "1.00", "--date",
                "2026-01-02", "--notes", "Coins", "--as", "zoe@example.com")
            #expect(paid["transaction_date"] as? String == "2026-01-02" && paid["notes"] as? String == "Coins", "\(paid)")
            let twoWays = try await cli.run(
                "expense", "update", try #require(expense["id"] as? String), "--notes", "x", "--clear-notes", "--as", "max@example.com")
            #expect(!twoWays.succeeded && twoWays.errors.contains("not both"), "\(twoWays.errors)")
            _ = try await cli.json("expense", "delete", try #require(paid["id"] as? String), "--as", "zoe@example.com")

            // Undo: the pizza deleted and restored; the balances are as they were.
            let pizza = try #require(expense["id"] as? String)
            _ = try await cli.json("expense", "delete", pizza, "--as", "max@example.com")
            let restored = try await cli.run("expense", "restore", pizza, "--as", "max@example.com")
            #expect(restored.succeeded && restored.output.contains("Restored expense \(pizza): Pizza."), "\(restored.output) \(restored.errors)")
            #expect(try await cli.jsonArray("balances", "pairs", "--community", community, "--as", "max@example.com").count == 3)

            let dues = try await cli.json(
                "dues", "create", "--community", community, "--name", "Season", "--amount", "50.00", "--due-date", "2099-06-30", "--as",
                "ada@example.com"
            )
            #expect(dues["amount"] as? Int == 5000 && dues["currency"] as? String == "USD")
            let duesID = try #require(dues["id"] as? String)
            _ = try await cli.json(
                "dues", "pay", duesID, "--user", "max@example.com", "--amount", "20.00", "--method", "cash", "--as", "ada@example.com")
            let report = try await cli.jsonArray("dues", "report", duesID, "--as", "zoe@example.com")
            #expect(report.count == 3)
            #expect(report.compactMap { $0["status"] as? String }.sorted() == ["partial", "unpaid", "unpaid"])
            #expect(report.allSatisfy { $0["amount_due"] as? Int == 5000 && $0["outstanding"] is Int && $0["overdue"] as? Bool == false })
        }
    }
}
