import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl event …`
struct EventCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "event",
        abstract: "Calendar events.",
        subcommands: [Expand.self]
    )

    /// `orbitctl event expand`: a recurrence rule's occurrences, for clients to debug against.
    struct Expand: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the occurrences of a recurrence rule (RFC 5545 RRULE) as UTC instants.",
            discussion: """
                Occurrences are computed on wall-clock time in --tz, so a weekly 6 pm practice stays at 6 pm local
                across daylight-saving changes. --from and --to take an RFC 3339 instant (2026-03-01T00:00:00Z) or a
                local time in --tz (2026-03-01T00:00). Without --to or --count at most 100 occurrences are printed.

                Example: orbitctl event expand --rrule 'FREQ=WEEKLY;BYDAY=TU' --start 2026-03-03T18:00 --tz America/New_York --count 3 --json
                """
        )

        @Option(help: "The rule, e.g. 'FREQ=MONTHLY;BYDAY=-1FR'.") var rrule: String
        @Option(help: "The first occurrence's local wall-clock time, e.g. 2026-03-03T18:00.") var start: String
        @Option(help: "The IANA time zone of --start, e.g. America/New_York.") var tz: String
        @Option(help: "Only occurrences at or after this time.") var from: String?
        @Option(help: "Only occurrences at or before this time.") var to: String?
        @Option(help: "At most this many occurrences (1 to 10000).") var count: Int?
        @Flag(help: "Print a JSON array of UTC RFC 3339 strings.") var json = false

        func validate() throws {
            if let count, !(1...10_000).contains(count) { throw ValidationError("--count must be between 1 and 10000.") }
        }

        func run() throws {
            let rule: RecurrenceRule
            do {
                rule = try RecurrenceRule(parsing: rrule)
            } catch let error as RecurrenceError {
                throw CommandFailure("The recurrence rule is not valid: \(error).")
            }
            guard let zone = TimeZone(identifier: tz), tz.contains("/") || tz == "UTC" else {
                throw CommandFailure("--tz \(tz) is not an IANA time zone name such as America/New_York.")
            }
            guard let local = LocalDateTime(parsing: start) else {
                throw CommandFailure("--start must be a local date and time such as 2026-03-03T18:00.")
            }
            let fromInstant = try from.map { try instant($0, option: "--from", zone: zone) }
            let toInstant = try to.map { try instant($0, option: "--to", zone: zone) }
            let limit = count ?? (toInstant == nil ? 100 : 10_000)
            let occurrences = RecurringSeries(rule: rule, start: local, timeZone: zone).occurrences(from: fromInstant, to: toInstant, limit: limit)
            let formatter = ISO8601DateFormatter()
            formatter.timeZone = TimeZone(identifier: "UTC")
            let strings = occurrences.map(formatter.string(from:))
            if json { return try printJSON(strings) }
            let localFormatter = ISO8601DateFormatter()
            localFormatter.timeZone = zone
            for (string, date) in zip(strings, occurrences) { print("\(string)  (\(localFormatter.string(from: date)) \(tz))") }
            if occurrences.isEmpty { print("(no occurrences)") }
        }

        private func instant(_ text: String, option: String, zone: TimeZone) throws -> Date {
            if let date = ISO8601DateFormatter().date(from: text) { return date }
            if let local = LocalDateTime(parsing: text) { return RecurringSeries.instant(for: local, in: zone) }
            throw CommandFailure("\(option) must be an RFC 3339 time (2026-03-01T00:00:00Z) or a local time (2026-03-01T00:00).")
        }
    }
}
