import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl dues …`
struct DuesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dues",
        abstract: "Dues a community collects, and their payments.",
        subcommands: [Create.self, List.self, Show.self, DuesUpdateCommand.self, Pay.self, DuesPaymentsCommand.self, Report.self, Deactivate.self]
    )

    struct Create: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set up dues (admins): owed by every member, or with --from-event by who came, per head.")
        @Option(help: "Community id (not needed with --from-event).") var community: CommunityID?
        @Option(help: "Name, e.g. \"2026 Season Dues\" (with --from-event, default: the event's title and \"(attendance)\").") var name: String?
        @Option(help: "Amount per member (50.00); with --from-event, per head (\(MoneyHelp.amounts)).") var amount: String
        @Option(help: "ISO 4217 code.") var currency: Currency = .usd
        @Option(help: "Due date, YYYY-MM-DD (with --from-event, default: the event's day).") var dueDate: String?
        @Option(
            help: "Owed by this event's attendees only: per head among those who answered yes, plus-ones and children to who answered for them."
        ) var fromEvent: EventID?
        @Option(help: "With --from-event for a recurring event: the occurrence's original start (RFC 3339).") var occurrence: Timestamp?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        /// The amount and the due date, parsed (validate() parses them before connecting).
        private var parsed: (money: Money, day: CivilDate?) {
            get throws { (try Money(parsing: amount, currency: currency), try dueDate.map { try CivilDate.parse($0, field: "due_date") }) }
        }

        func validate() throws {
            if fromEvent == nil {
                guard community != nil, name != nil, dueDate != nil else {
                    throw ValidationError("--community, --name and --due-date are required (or --from-event).")
                }
                guard occurrence == nil else { throw ValidationError("--occurrence goes with --from-event.") }
            }
            _ = try parsed
        }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Dues {
            let (money, day) = try parsed
            if let fromEvent {
                return try await services.dues.chargeAttendees(
                    of: fromEvent, occurrence: occurrence?.date, name: name, perHead: money, dueDate: day, as: actor)
            }
            // All present (validate()).
            guard let community, let name, let day else { throw ValidationError("--community, --name and --due-date are required.") }
            return try await services.dues.create(in: community, name: name, amount: money, dueDate: day, as: actor)
        }

        func tell(_ dues: Dues) {
            print("Created dues \(dues.id): \(Money(minorUnits: dues.amount, currency: Currency(dues.currency) ?? .usd)) due \(dues.dueDate).")
        }
    }

    struct List: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "A community's dues.")
        @Option(help: "Community id.") var community: CommunityID
        @OptionGroup var page: PageOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<Dues> {
            try await services.dues.list(in: community, limit: page.limit, cursor: page.cursor, as: actor)
        }

        func tell(_ list: Page<Dues>) {
            printPage(list, ["ID", "NAME", "AMOUNT", "DUE", "ACTIVE"]) {
                [
                    $0.id.description, $0.name, Money(minorUnits: $0.amount, currency: Currency($0.currency) ?? .usd).description,
                    $0.dueDate.description, $0.isActive ? "yes" : "no",
                ]
            }
        }
    }

    struct Show: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Show dues.")
        @Argument(help: "Dues id.") var dues: DuesID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Dues {
            try await services.dues.get(dues, as: actor)
        }

        func tell(_ found: Dues) {
            print(
                "\(found.name): \(Money(minorUnits: found.amount, currency: Currency(found.currency) ?? .usd)) due \(found.dueDate)\(found.isActive ? "" : " (inactive)")"
            )
        }
    }

    struct Pay: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Record a payment (admins); partial payments allowed, never more than owed.")
        @Argument(help: "Dues id.") var dues: DuesID
        @Option(help: "Who paid (id or email).") var user: String
        @Option(help: "Amount (20.00; \(MoneyHelp.amounts)).") var amount: String
        @Option(help: "How (cash, transfer, …).") var method: String?
        @Option(help: "A note.") var note: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DuesPayment {
            let currency = try Currency.parse(try await services.dues.get(dues, as: actor).currency)
            return try await services.dues.recordPayment(
                to: dues, by: try await services.users.resolve(user), amount: try Money(parsing: amount, currency: currency), method: method,
                note: note, as: actor
            )
        }

        func tell(_ payment: DuesPayment) {
            print("Recorded \(Money(minorUnits: payment.amountPaid, currency: Currency(payment.currency) ?? .usd)) from \(payment.userID).")
        }
    }

    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Each member: due, paid, outstanding, status, overdue.")
        @Argument(help: "Dues id.") var dues: DuesID
        @OptionGroup var reading: ReadingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let report = try await reading.run { services, actor in
                try await services.dues.report(dues, as: actor)
            }
            if output.json { return try printJSON(report) }
            printTable(
                ["USER", "DUE", "PAID", "OUTSTANDING", "STATUS", "OVERDUE"],
                report.map {
                    let currency = Currency($0.currency) ?? .usd
                    return [
                        $0.userID.description, Money(minorUnits: $0.amountDue, currency: currency).decimalString,
                        Money(minorUnits: $0.amountPaid, currency: currency).decimalString,
                        Money(minorUnits: $0.outstanding, currency: currency).decimalString,
                        $0.status.rawValue, $0.overdue ? "yes" : "",
                    ]
                }
            )
        }
    }

    struct Deactivate: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Stop collecting dues (admins).")
        @Argument(help: "Dues id.") var dues: DuesID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Dues {
            try await services.dues.deactivate(dues, as: actor)
        }

        func tell(_ updated: Dues) {
            print("Dues \(updated.id) no longer active.")
        }
    }
}
