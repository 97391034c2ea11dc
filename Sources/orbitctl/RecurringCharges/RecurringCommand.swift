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

    struct Add: AsyncParsableCommand {
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
        @Option(help: "expense: equipment, food, travel, dues or other.") var category: ExpenseCategory = .other
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            if kind == .dues {
                guard paidBy == nil, !split.isGiven else {
                    throw ValidationError("Recurring dues are owed by every member: leave out --paid-by and the split options.")
                }
            }
        }

        func run() async throws {
            let money = try Money(parsing: amount, currency: currency)
            let startsOn = try starts.map { try CivilDate.parse($0, field: "starts") }
            let charge = try await acting.run { services, actor in
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
            if output.json { return try printJSON(charge) }
            print("Set up recurring \(charge.kind) \(charge.id): \(summary(charge)).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A community's recurring expenses and dues, newest first.")
        @Option(help: "Community id.") var community: CommunityID
        @OptionGroup var page: PageOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let list = try await acting.run { services, actor in
                try await services.recurringCharges.list(
                    in: community, limit: page.limit, cursor: page.cursor, as: actor)
            }
            if output.json { return try printJSON(list) }
            printPage(list, ["ID", "KIND", "DESCRIPTION", "AMOUNT", "RULE", "NEXT", "STATUS"]) {
                [
                    $0.id.description, $0.kind.rawValue, $0.description, money($0).description, $0.recurrenceRule,
                    $0.nextOn?.description ?? "-", $0.status.rawValue,
                ]
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a recurring expense or dues.")
        @Argument(help: "Recurring charge id.") var charge: RecurringChargeID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let found = try await acting.run { services, actor in
                try await services.recurringCharges.get(charge, as: actor)
            }
            if output.json { return try printJSON(found) }
            print("Recurring \(found.kind) \(found.id): \(summary(found)).")
            if !found.skipped.isEmpty { print("Skipped: \(found.skipped.map(\.description).joined(separator: ", "))") }
        }
    }

    struct Pause: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pause (its creator or an admin; dues: an admin): days that pass while paused are not created.")
        @Argument(help: "Recurring charge id.") var charge: RecurringChargeID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            try await report(output) { services, acting in try await services.recurringCharges.pause(charge, as: acting) }
        }
    }

    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Resume from today in the community's zone.")
        @Argument(help: "Recurring charge id.") var charge: RecurringChargeID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            try await report(output) { services, acting in try await services.recurringCharges.resume(charge, as: acting) }
        }
    }

    struct Skip: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Leave out one day of the rule that has not been created yet.")
        @Argument(help: "Recurring charge id.") var charge: RecurringChargeID
        @Option(help: "The day to leave out, YYYY-MM-DD.") var date: String
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let day = try CivilDate.parse(date, field: "date")
            try await report(output) { services, acting in try await services.recurringCharges.skip(charge, on: day, as: acting) }
        }
    }

    struct End: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End for good: nothing more is created; what was created stays.")
        @Argument(help: "Recurring charge id.") var charge: RecurringChargeID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            try await report(output) { services, acting in try await services.recurringCharges.end(charge, as: acting) }
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

/// Runs a change as the acting user and prints the charge after it.
private protocol RecurringChange {
    var acting: ActingOptions { get }
}

extension RecurringCommand.Pause: RecurringChange {}

extension RecurringCommand.Resume: RecurringChange {}

extension RecurringCommand.Skip: RecurringChange {}

extension RecurringCommand.End: RecurringChange {}

extension RecurringChange {
    func report(_ output: JSONOption, _ change: @Sendable @escaping (OrbitServices, UserID) async throws -> RecurringCharge) async throws {
        let charge = try await acting.run(change)
        if output.json { return try printJSON(charge) }
        print("Recurring \(charge.kind) \(charge.id): \(summary(charge)).")
    }
}
