import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl recurring …`: recurring expenses and recurring dues (docs/money.md).
struct RecurringCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recurring",
        abstract: "Recurring expenses and recurring dues: an RRULE in the community's zone creates each occurrence once.",
        discussion: """
            `orbitctl serve` creates the occurrences as their days come (the recurring-charges job, every minute; \
            `orbitctl jobs run` runs it once); after downtime, the first run creates every day missed.
            """,
        subcommands: [Add.self, List.self, Show.self, Pause.self, Resume.self, Skip.self, End.self]
    )

    struct Add: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set up a recurring expense (any member) or recurring dues (admins); what is already due is created at once.")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "expense or dues.") var kind: RecurringCharge.Kind
        @Option(help: "The expense's description, or the dues' name.") var description: String
        @Option(help: "Each occurrence's amount, in the currency's units (25.00; \(MoneyHelp.amounts)).") var amount: String
        @Option(help: "ISO 4217 code.") var currency: Currency = .usd
        @Option(help: "An RRULE, e.g. FREQ=MONTHLY;BYMONTHDAY=1 (its days are the community's days).") var rule: String
        @Option(help: "The rule's first day, YYYY-MM-DD (default today in the community's zone).") var starts: String?
        @Option(help: "expense: who pays each time (id or email; default the acting user).") var paidBy: String?
        @OptionGroup var split: ExpenseCommand.SplitOptions
        @Option(help: "expense: food, transport, groceries, rent, entertainment, utilities, shopping, health, travel, equipment, dues or other.")
        var category: ExpenseCategory = .other
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        /// The amount and the first day, parsed (validate() parses them before connecting).
        private var parsed: (money: Money, startsOn: CivilDate?) {
            get throws { (try Money(parsing: amount, currency: currency), try starts.map { try CivilDate.parse($0, field: "starts") }) }
        }

        func validate() throws {
            if kind == .dues {
                guard paidBy == nil, !split.isGiven else {
                    throw ValidationError("Recurring dues are owed by every member: leave out --paid-by and the split options.")
                }
            }
            _ = try parsed
        }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> RecurringCharge {
            let (money, startsOn) = try parsed
            switch kind {
            case .dues:
                return try await services.recurringCharges.createDues(
                    in: community, name: description, amount: money, rule: try RecurrenceRule.parse(rule), startsOn: startsOn, as: actor)
            case .expense:
                let method = try await split.methodOrEveryone(services, community: community, currency: currency, as: actor)
                return try await services.recurringCharges.createExpense(
                    in: community, description: description, amount: money,
                    paidBy: try await paidBy.asyncMap { try await services.users.resolve($0) }, split: method,
                    category: category,
                    rule: try RecurrenceRule.parse(rule), startsOn: startsOn, as: actor)
            }
        }

        func tell(_ charge: RecurringCharge) {
            print("Set up recurring \(charge.kind) \(charge.id): \(summary(charge)).")
        }
    }

    struct List: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "A community's recurring expenses and dues, newest first.")
        @Option(help: "Community id.") var community: CommunityID
        @OptionGroup var page: PageOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<RecurringCharge> {
            try await services.recurringCharges.list(
                in: community, limit: page.limit, cursor: page.cursor, as: actor)
        }

        func tell(_ list: Page<RecurringCharge>) {
            printPage(list, ["ID", "KIND", "DESCRIPTION", "AMOUNT", "RULE", "NEXT", "STATUS"]) {
                [
                    $0.id.description, $0.kind.rawValue, $0.description, money($0).description, $0.recurrenceRule,
                    $0.nextOn?.description ?? "-", $0.status.rawValue,
                ]
            }
        }
    }

    struct Show: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Show a recurring expense or dues.")
        @Argument(help: "Recurring charge id.") var charge: RecurringChargeID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> RecurringCharge {
            try await services.recurringCharges.get(charge, as: actor)
        }

        func tell(_ found: RecurringCharge) {
            print("Recurring \(found.kind) \(found.id): \(summary(found)).")
            if !found.skipped.isEmpty { print("Skipped: \(found.skipped.map(\.description).joined(separator: ", "))") }
        }
    }

    struct Pause: RecurringChange {
        static let configuration = CommandConfiguration(
            abstract: "Pause (its creator or an admin; dues: an admin): days that pass while paused are not created.")
        @Argument(help: "Recurring charge id.") var charge: RecurringChargeID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> RecurringCharge {
            try await services.recurringCharges.pause(charge, as: actor)
        }
    }

    struct Resume: RecurringChange {
        static let configuration = CommandConfiguration(abstract: "Resume from today in the community's zone.")
        @Argument(help: "Recurring charge id.") var charge: RecurringChargeID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> RecurringCharge {
            try await services.recurringCharges.resume(charge, as: actor)
        }
    }

    struct Skip: RecurringChange {
        static let configuration = CommandConfiguration(abstract: "Leave out one day of the rule that has not been created yet.")
        @Argument(help: "Recurring charge id.") var charge: RecurringChargeID
        @Option(help: "The day to leave out, YYYY-MM-DD.") var date: String
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        /// The day, parsed (validate() parses it before connecting).
        private var day: CivilDate {
            get throws { try CivilDate.parse(date, field: "date") }
        }

        func validate() throws { _ = try day }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> RecurringCharge {
            try await services.recurringCharges.skip(charge, on: try day, as: actor)
        }
    }

    struct End: RecurringChange {
        static let configuration = CommandConfiguration(abstract: "End for good: nothing more is created; what was created stays.")
        @Argument(help: "Recurring charge id.") var charge: RecurringChargeID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> RecurringCharge {
            try await services.recurringCharges.end(charge, as: actor)
        }
    }
}

private func money(_ charge: RecurringCharge) -> Money {
    Money(minorUnits: charge.amount, currency: Currency(charge.currency) ?? .usd)
}

private func summary(_ charge: RecurringCharge) -> String {
    let next = charge.nextOn.map { ", next \($0)" } ?? ""
    let reason = charge.statusReason.map { " (\($0))" } ?? ""
    return "\(charge.description), \(money(charge)) by \(charge.recurrenceRule) from \(charge.startsOn)\(next), \(charge.status)\(reason)"
}

/// A change to a recurring charge (pause, resume, skip, end): it tells the charge after it.
protocol RecurringChange: ActingCommand where Outcome == RecurringCharge {}

extension RecurringChange {
    func tell(_ charge: RecurringCharge) {
        print("Recurring \(charge.kind) \(charge.id): \(summary(charge)).")
    }
}
