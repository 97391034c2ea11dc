import ArgumentParser
import Foundation
import LocalPostgres

/// `orbit-bench summary`: a short run of each benchmark that has a goal, and one table of every
/// goal beside what this run measured, met or not (docs/benchmarks.md, "Summary"). A few
/// minutes in all. Not a test: timings on a shared machine vary by 10–20 % within an hour, so a
/// goal near its line can be met in one run and missed in the next.
struct SummaryBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "summary",
        abstract: "Short runs of every benchmark with a goal; one table of each goal beside its figure, met or not."
    )

    @Option(help: "Sockets of the live fan-out (needs orbitctl built next to this binary: swift build -c release --product orbitctl).")
    var sockets = 1000

    /// One goal: what is measured, the figure this run found (nil: not measured), the goal's
    /// bound, and whether larger is better.
    struct Goal {
        var name: String
        var value: Double?
        var bound: Double
        var atLeast: Bool
        var unit: String

        var met: Bool? { value.map { atLeast ? $0 >= bound : $0 <= bound } }

        var row: String {
            let figure = value.map { "\(format($0, $0 >= 100 ? 0 : 2))\(unit)" } ?? "not measured"
            let verdict = met.map { $0 ? "met" : "**not met**" } ?? "—"
            return "| \(name) | \(figure) | \(atLeast ? "≥" : "≤") \(format(bound, bound >= 100 ? 0 : 1))\(unit) | \(verdict) |"
        }
    }

    func run() async throws {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var goals: [Goal] = []
        var notes: [String] = []

        /// Runs `orbit-bench <arguments>` and returns its output, or nil (noted) when it failed.
        func bench(_ arguments: [String]) async -> String? {
            print("== orbit-bench \(arguments.joined(separator: " "))")
            do {
                let result = try await Subprocess.run(me, arguments)
                guard result.succeeded else {
                    notes.append("`\(arguments.joined(separator: " "))` failed: \(result.output.suffix(300))")
                    return nil
                }
                return result.output
            } catch {
                notes.append("`\(arguments.joined(separator: " "))` did not run: \(error)")
                return nil
            }
        }

        let money = await bench(["money", "--transactions", "2000", "--seconds", "5", "--reads", "3", "--pair-reads", "10"])
        goals.append(
            Goal(
                name: "add an expense (10 splits): the service / pgbench on the bare SQL",
                value: money.flatMap { Self.number(after: "/ pgbench = ", in: $0, occurrence: 1) }, bound: 0.8, atLeast: true, unit: "×"))
        goals.append(
            Goal(
                name: "add an expense: the same SQL through our client / pgbench",
                value: money.flatMap { Self.number(after: "/ pgbench = ", in: $0) },
                bound: 1.0, atLeast: true, unit: "×"))

        if Subprocess.which("wrk") != nil {
            let http = await bench(["http", "--seconds", "3", "--connections", "16", "--rounds", "1"])
            for (label, row) in [("feed page", "| GET feed page (20 posts) | 16 |"), ("POST expense", "| POST expense (10 splits) | 16 |")] {
                let cells = http.flatMap { Self.cells(ofRowStarting: row, in: $0) }
                goals.append(
                    Goal(
                        name: "HTTP \(label) / the direct call, 16 connections", value: cells.flatMap { Self.number(in: $0, at: 8) }, bound: 0.9,
                        atLeast: true, unit: "×"))
                goals.append(
                    Goal(
                        name: "HTTP \(label) p99 / the direct call's p99", value: cells.flatMap { Self.number(in: $0, at: 9) }, bound: 2,
                        atLeast: false,
                        unit: "×"))
            }
        } else {
            notes.append("HTTP: wrk is not installed (apt-get install wrk)")
        }

        let orbitctl = URL(fileURLWithPath: me).deletingLastPathComponent().appending(path: "orbitctl").path
        if FileManager.default.isExecutableFile(atPath: orbitctl) {
            let live = await bench(["live", "--sockets", String(sockets), "--commits", "30", "--separate-server"])
            let cells = live.flatMap { Self.cells(ofRowStarting: "| commit → message, every socket (ms) |", in: $0) }
            goals.append(
                Goal(
                    name: "live fan-out, \(sockets) sockets, commit → message p99", value: cells.flatMap { Self.number(in: $0, at: 2) },
                    bound: sockets >= 10_000 ? 100 : 40, atLeast: false, unit: " ms"))
            goals.append(
                Goal(
                    name: "live fan-out: the server's CPU per socket per commit",
                    value: live.flatMap { Self.number(after: "server_cpu_us_per_socket_per_commit=", in: $0) }, bound: 2, atLeast: false, unit: " µs")
            )
        } else {
            notes.append("live: \(orbitctl) not found (swift build -c release --product orbitctl)")
        }

        for mixed in [false, true] {
            let sync = await bench(
                ["sync", "--rounds", "0", "--expenses", "0", "--concurrent-writers", "0", "--backlog", "50000", "--no-compare-per-entity"]
                    + (mixed ? ["--mixed"] : []))
            goals.append(
                Goal(
                    name: "sync: pulling a backlog of 50,000 changes (\(mixed ? "posts, events, chores" : "posts")), changes/s",
                    value: sync.flatMap { Self.number(after: "one query per kind per page ", in: $0) }, bound: 50_000, atLeast: true, unit: "/s"))
        }

        let chat = await bench(["chat", "--messages", "20", "--history", "25000", "--reads", "20"])
        let delivered = chat.flatMap { output -> [String]? in
            guard let section = output.range(of: "receipts by socket") else { return nil }
            return Self.cells(ofRowStarting: "| send → delivered to all", in: String(output[section.upperBound...]))
        }
        goals.append(
            Goal(
                name: "chat: send → delivered to all 199 (receipts by socket), p50", value: delivered.flatMap { Self.number(in: $0, at: 1) },
                bound: 50, atLeast: false, unit: " ms"))

        print("")
        print("| goal | this run | goal | |")
        print("|---|---|---|---|")
        goals.forEach { print($0.row) }
        let met = goals.filter { $0.met == true }.count
        print("\n\(met) of \(goals.count) goals met in this run (short runs: see docs/benchmarks.md, \"Summary\", before quoting a figure).")
        notes.forEach { print("note: \($0)") }
    }

    /// The number after the `occurrence`-th (from 0) `prefix` in `text`.
    static func number(after prefix: String, in text: String, occurrence: Int = 0) -> Double? {
        var searchFrom = text.startIndex
        var found: Range<String.Index>?
        for _ in 0...occurrence {
            guard let range = text.range(of: prefix, range: searchFrom..<text.endIndex) else { return nil }
            found = range
            searchFrom = range.upperBound
        }
        guard let found else { return nil }
        return Double(text[found.upperBound...].prefix { $0.isNumber || $0 == "." })
    }

    /// The cells of the first table row of `text` that starts with `prefix`.
    static func cells(ofRowStarting prefix: String, in text: String) -> [String]? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return nil }
        return line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast().map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// The number at the start of cell `index` ("0.79×", "42.8", "1,979").
    static func number(in cells: [String], at index: Int) -> Double? {
        guard cells.indices.contains(index) else { return nil }
        return Double(cells[index].replacingOccurrences(of: ",", with: "").prefix { $0.isNumber || $0 == "." })
    }
}
