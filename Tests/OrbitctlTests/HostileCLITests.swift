import Foundation
import LocalPostgres
import OrbitPostgres
import OrbitTestSupport
import Testing

/// The injection corpus through orbitctl's options: each run either succeeds and
/// stores the text literally, or fails with one sentence on stderr and a non-zero exit;
/// never a crash, never a change to another community.
///
/// Two items of the API corpus cannot reach a program's options: a NUL byte (argv strings
/// end at NUL) and a 1 MB string (Linux refuses a single argument over 128 KiB with E2BIG
/// before orbitctl starts). The corpus has a 100,000-character string instead, and invalid
/// UTF-8 goes through `sh -c` so that the raw bytes reach argv.
@Suite("Hostile input through orbitctl's options")
struct HostileCLITests {
    static let texts: [String] = [
        "'; DROP TABLE users; --", "\" OR \"1\"=\"1", "Robert'); DELETE FROM communities; --", "/* c */ SELECT 1", "-- comment",
        "$1 $2 :name ?", "\u{202E}gnp.exe", "𝕬𝖉𝖆 ＡＤＭＩＮ", "admin\u{200B}", "%00%27", "\\x00\\'", "{\"timezone\": \"UTC'; --\"}",
        "--as", "-", "", String(repeating: "x", count: 100_000),
    ]
    static let numbers: [String] = [
        "99999999999999999999999", "-0", "-0.00", "1e309", "NaN", "0x10", "1,000.00", "１０.００", "10.001", "-5", "21474836.48",
    ]

    /// Only what orbitctl needs: the test's own environment (log levels, PG* variables) must
    /// not change what the runs print.
    static func environment(_ database: TestDatabase) -> [String: String] {
        var environment = ["DATABASE_URL": database.connectionString, "LANG": "C.UTF-8"]
        environment["PATH"] = ProcessInfo.processInfo.environment["PATH"]
        environment["TMPDIR"] = ProcessInfo.processInfo.environment["TMPDIR"]
        return environment
    }

    struct Run: Sendable {
        var arguments: [String]
        /// The JSON key the text is stored under, when the run succeeds.
        var storedAs: String?
        var text: String
    }

    func check(_ cli: Orbitctl, _ run: Run) async throws -> Bool {
        let result = try await Subprocess.run(
            Orbitctl.path, run.arguments + ["--json"], environment: Self.environment(cli.database), separateErrors: true)
        let shown = run.arguments.map { String($0.prefix(40)) }.joined(separator: " ")
        // 0: done; 1: refused at run time; 64: refused by argument parsing. A signal or a
        // runtime trap would be something else.
        #expect([0, 1, 64].contains(result.status), "\(shown): status \(result.status) \(result.errors.prefix(300))")
        #expect(!result.errors.contains("Fatal error") && !result.errors.contains("Stack dump"), "\(shown)")
        if result.succeeded {
            if let key = run.storedAs {
                let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
                #expect(object?[key] as? String == run.text.trimmingCharacters(in: .whitespacesAndNewlines), "\(shown)")
            }
            return true
        }
        #expect(result.output.isEmpty, "\(shown)")
        let lines = result.errors.split(separator: "\n").filter {
            !$0.hasPrefix("Usage:") && !$0.hasPrefix("Help:") && !$0.hasPrefix("  ") && !$0.isEmpty
        }
        #expect(lines.count == 1, "\(shown): \(result.errors.prefix(500))")
        // Errors name the problem, not the SQL: no statement text reaches the terminal (beyond
        // the input itself, which an error may quote).
        for keyword in ["INSERT INTO", "SELECT ", "UPDATE ", "WHERE "] where !run.text.contains(keyword) {
            #expect(!result.errors.contains(keyword), "\(shown): \(result.errors.prefix(300))")
        }
        return false
    }

    @Test("the injection corpus through every kind of option: stored literally or one clear error, never a crash")
    func theInjectionCorpusThroughEveryKindOf() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            let ada = "ada@example.com"
            _ = try await cli.json("user", "create", "--email", ada, "--name", "Ada")
            _ = try await cli.json("user", "create", "--email", "olga@example.com", "--name", "Olga")
            let community = try #require(try await cli.json("community", "create", "--name", "Tigers", "--as", ada)["id"] as? String)
            let theirs = try #require(
                try await cli.json("community", "create", "--name", "Untouched", "--as", "olga@example.com")["id"] as? String)
            let digest = { () async throws -> String in
                try await database.withConnection { connection in
                    try await connection.query(
                        """
                        SELECT md5(concat_ws('|', (SELECT c::text FROM communities c WHERE c.id = \(UUID(uuidString: theirs))),
                            (SELECT string_agg(m::text, ',' ORDER BY m.id) FROM members m WHERE m.community_id = \(UUID(uuidString: theirs))),
                            (SELECT count(*) FROM audit_log WHERE community_id = \(UUID(uuidString: theirs)))))
                        """
                    ).single().decode(0, as: String.self)
                }
            }
            let before = try await digest()

            var runs: [Run] = []
            for text in Self.texts {
                let expense = ["expense", "add", "--community", community, "--paid-by", ada, "--split", "equal", "--between", ada, "--as", ada]
                let event = ["event", "create", "--community", community, "--as", ada]
                runs += [
                    Run(arguments: ["user", "create", "--email", text, "--name", "Eve"], storedAs: "email", text: text),
                    Run(arguments: ["user", "create", "--email", "eve@example.com", "--name", text], storedAs: "display_name", text: text),
                    Run(arguments: ["community", "create", "--name", text, "--as", ada], storedAs: "name", text: text),
                    Run(arguments: ["community", "create", "--name", "N", "--settings", text, "--as", ada], text: text),
                    Run(arguments: ["community", "update", community, "--description", text, "--as", ada], storedAs: "description", text: text),
                    Run(arguments: ["community", "show", text], text: text),
                    Run(arguments: ["post", "create", "--community", community, "--content", text, "--as", ada], storedAs: "content", text: text),
                    Run(arguments: ["post", "create", "--community", text, "--content", "hi", "--as", ada], text: text),
                    Run(arguments: ["post", "create", "--community", community, "--content", "hi", "--as", text], text: text),
                    Run(arguments: expense + ["--description", text, "--amount", "1.00"], storedAs: "description", text: text),
                    Run(arguments: event + ["--title", "T", "--starts-at", "2030-01-01T10:00:00Z", "--rrule", text], text: text),
                    Run(arguments: event + ["--title", text, "--starts-at", text], text: text),
                    Run(
                        arguments: [
                            "dues", "create", "--community", community, "--name", "Fee", "--amount", "10.00", "--due-date", text, "--as", ada,
                        ], text: text),
                    Run(arguments: ["invite", "redeem", text, "--as", "olga@example.com"], text: text),
                    Run(arguments: ["community", "members", community, "--as", ada, "--database-url", text], text: text),
                ]
            }
            for number in Self.numbers {
                runs += [
                    Run(
                        arguments: [
                            "expense", "add", "--community", community, "--paid-by", ada, "--split", "equal", "--between", ada, "--as", ada,
                            "--description", "n", "--amount", number,
                        ], text: number),
                    Run(
                        arguments: [
                            "dues", "create", "--community", community, "--name", "Fee", "--amount", number, "--due-date", "2030-01-01", "--as", ada,
                        ],
                        text: number),
                    Run(
                        arguments: [
                            "event", "create", "--community", community, "--as", ada, "--title", "T", "--starts-at", "2030-01-01T10:00:00Z",
                            "--lat", number,
                        ], text: number),
                ]
            }
            // Four at a time: each run is a process and a connection.
            var succeeded = 0
            var index = 0
            while index < runs.count {
                let batch = runs[index..<min(index + 4, runs.count)]
                index += batch.count
                succeeded += try await withThrowingTaskGroup(of: Bool.self) { group in
                    for run in batch { group.addTask { try await check(cli, run) } }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
            }
            #expect(succeeded > 0 && succeeded < runs.count)

            // Invalid UTF-8, as raw bytes in argv.
            let environment = Self.environment(database)
            let raw = try await Subprocess.run(
                "/bin/sh", ["-c", #"exec "$0" community create --name "$(printf 'x\303\050\377y')" --as ada@example.com --json"#, Orbitctl.path],
                environment: environment, separateErrors: true
            )
            #expect([0, 1, 64].contains(raw.status), "\(raw.errors)")
            if raw.succeeded {
                // Stored as valid text (the invalid bytes replaced), never as the raw bytes.
                let name = try JSONSerialization.jsonObject(with: Data(raw.output.utf8)) as? [String: Any]
                #expect((name?["name"] as? String)?.hasPrefix("x") == true)
            }

            #expect(try await digest() == before)
            let tables = try await database.withConnection {
                try await $0.query("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").single().decode(0, as: Int64.self)
            }
            #expect(tables > 10)
        }
    }
}
