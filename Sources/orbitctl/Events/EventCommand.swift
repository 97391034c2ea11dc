import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl event …`
struct EventCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "event",
        abstract: "Calendar events.",
        subcommands: [
            Create.self, List.self, Show.self, Update.self, Delete.self, RSVPCommand.self, EventWithdrawRSVPCommand.self, EventRSVPsCommand.self,
            AttendanceCommand.self, Expand.self,
        ]
    )

    /// The fields of an event, shared by create and update.
    struct Fields: ParsableArguments {
        @Option(help: "Title (at most 200 characters).") var title: String?
        @Option(help: "Description.") var description: String?
        @Option(help: "Start, RFC 3339 (2026-12-01T17:00:00Z or with an offset).") var startsAt: Timestamp?
        @Option(help: "End, RFC 3339.") var endsAt: Timestamp?
        @Flag(inversion: .prefixedNo, help: "An all-day event.") var allDay: Bool?
        @Option(help: "practice, game, meeting, social or other.") var category: EventCategory?
        @Option(help: "Where, in words.") var locationName: String?
        @Option(help: "Latitude (-90 to 90).") var lat: Double?
        @Option(help: "Longitude (-180 to 180).") var lng: Double?
        @Option(help: "Full address.") var address: String?
        @Option(help: "Recurrence rule (RFC 5545 RRULE), e.g. 'FREQ=WEEKLY;BYDAY=TU'; expanded in the community's time zone.")
        var rrule: String?
        @Option(help: "Answers close at this time (RFC 3339).") var rsvpDeadline: Timestamp?

        var draft: EventDraft {
            EventDraft(
                title: title, description: description, startsAt: startsAt?.date, endsAt: endsAt?.date, allDay: allDay,
                locationName: locationName, locationLat: lat, locationLng: lng, locationAddress: address, category: category,
                recurrenceRule: rrule, rsvpDeadline: rsvpDeadline?.date
            )
        }
    }

    struct Create: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Create an event or a recurring series (admins; members if the community allows).")
        @Option(help: "Community id.") var community: CommunityID
        @OptionGroup var fields: Fields
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Event {
            try await services.events.create(in: community, fields.draft, as: actor)
        }

        func tell(_ event: Event) {
            print("Created event \(event.id) (\(event.title), \(show(event.startsAt))\(event.recurrenceRule.map { ", repeats \($0)" } ?? "")).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A community's calendar between two times (at most 92 days).")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "From (RFC 3339, inclusive).") var from: Timestamp
        @Option(help: "To (RFC 3339, exclusive).") var to: Timestamp
        @OptionGroup var reading: ReadingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let entries = try await reading.run { services, actor in
                return try await services.events.calendar(of: community, from: from.date, to: to.date, as: actor)
            }
            if output.json { return try printJSON(entries) }
            printTable(
                ["STARTS", "TITLE", "CATEGORY", "EVENT", "OCCURRENCE"],
                entries.map { [show($0.startsAt), $0.title, $0.category.rawValue, $0.eventID.description, show($0.occurrenceStartsAt)] }
            )
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show an event.")
        @Argument(help: "Event id.") var event: EventID
        @OptionGroup var reading: ReadingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let found = try await reading.run { services, actor in
                if let actor { return try await services.events.get(event, as: actor) }
                return try await services.events.getAsOperator(event)
            }
            if output.json { return try printJSON(found) }
            printTable(
                ["ID", "TITLE", "STARTS", "ENDS", "CATEGORY", "REPEATS", "SERIES"],
                [
                    [
                        found.id.description, found.title, show(found.startsAt), show(found.endsAt), found.category.rawValue,
                        found.recurrenceRule ?? "",
                        found.recurrenceParentID?.description ?? "",
                    ]
                ]
            )
        }
    }

    struct Update: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change an event; with --occurrence, one occurrence of a series (it leaves the series).",
            discussion: "Changing a series that has begun changes its future occurrences only."
        )
        @Argument(help: "Event id.") var event: EventID
        @Option(help: "The occurrence's original start (RFC 3339).") var occurrence: Timestamp?
        @OptionGroup var fields: Fields
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Event {
            try await services.events.update(event, occurrence: occurrence?.date, fields.draft, as: actor)
        }

        func tell(_ updated: Event) {
            print("Updated event \(updated.id) (\(updated.title)).")
        }
    }

    struct Delete: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete an event, a whole series, one occurrence, or an occurrence and the following ones.")
        @Argument(help: "Event id.") var event: EventID
        @Option(help: "An occurrence's original start (RFC 3339): delete only it.") var occurrence: Timestamp?
        @Flag(help: "With --occurrence: delete it and every later occurrence.") var following = false
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            if following && occurrence == nil { throw ValidationError("--following needs --occurrence.") }
        }

        /// What --occurrence and --following delete.
        private var scope: EventDeletionScope { occurrence == nil ? .all : (following ? .following : .occurrence) }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
            try await services.events.delete(event, occurrence: occurrence?.date, scope: scope, as: actor)
            return DoneOutput(id: event.description, deleted: true)
        }

        func tell(_ done: DoneOutput) {
            print(
                "Deleted \(scope == .all ? "event" : scope == .occurrence ? "one occurrence of event" : "the following occurrences of event") \(event)."
            )
        }
    }

    struct RSVPCommand: ActingCommand {
        static let configuration = CommandConfiguration(commandName: "rsvp", abstract: "Answer an event for oneself or one's family member.")
        @Argument(help: "Event id.") var event: EventID
        @Option(help: "For a recurring event: the occurrence's original start (RFC 3339).") var occurrence: Timestamp?
        @Option(help: "yes, no or maybe.") var status: RSVPStatus
        @Option(help: "Answer for this family member of yours.") var familyMember: FamilyMemberID?
        @Option(help: "Additional guests (0 to 20).") var plusOnes = 0
        @Option(help: "A note, e.g. 'Arriving 10 min late'.") var note: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> RSVP {
            try await services.events.rsvp(
                event, occurrence: occurrence?.date, status: status, familyMember: familyMember, plusOnes: plusOnes, note: note,
                as: actor
            )
        }

        func tell(_ answer: RSVP) {
            print("Answered \(answer.status) to event \(answer.eventID)\(answer.plusOnes > 0 ? " with \(answer.plusOnes) guest(s)" : "").")
        }
    }

    struct AttendanceCommand: ActingCommand {
        static let configuration = CommandConfiguration(
            commandName: "attendance", abstract: "Who is coming: answers with plus-ones, and who has not answered.")
        @Argument(help: "Event id.") var event: EventID
        @Option(help: "For a recurring event: the occurrence's original start (RFC 3339).") var occurrence: Timestamp?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Attendance {
            try await services.events.attendance(event, occurrence: occurrence?.date, as: actor)
        }

        func tell(_ attendance: Attendance) {
            printTable(
                ["ANSWER", "RESPONSES", "PEOPLE"],
                [("yes", attendance.yes), ("maybe", attendance.maybe), ("no", attendance.no)].map {
                    [$0.0, String($0.1.responses), String($0.1.people)]
                }
            )
            print("Not answered: \(attendance.notAnswered.isEmpty ? "nobody" : attendance.notAnswered.map(\.description).joined(separator: ", "))")
        }
    }

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
        @Option(help: "An occurrence to skip (EXDATE), RFC 3339 or local time in --tz; repeatable.") var exdate: [String] = []
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
            let exceptions = Set(try exdate.map { try instant($0, option: "--exdate", zone: zone) })
            let occurrences = RecurringSeries(rule: rule, start: local, timeZone: zone, exceptions: exceptions)
                .occurrences(from: fromInstant, to: toInstant, limit: limit)
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
