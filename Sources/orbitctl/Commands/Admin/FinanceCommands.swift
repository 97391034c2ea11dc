import ArgumentParser
import Foundation
import OrbitCore

/// Parses `--between USER,USER` and `--parts USER=VALUE,…`: members by id or email, family
/// members (children, whose parent owes their share) by id.
private func resolvePeople(_ references: [String], _ services: OrbitServices, as actor: UserID) async throws -> [Holder] {
    let found = try await services.finances.participants(references.compactMap { UUID(uuidString: $0) }, as: actor)
    var people: [Holder] = []
    for reference in references {
        if let id = UUID(uuidString: reference), let person = found[id] {
            people.append(person)
        } else {
            people.append(.user(try await services.users.resolve(reference)))
        }
    }
    return people
}

private func resolveUsers(_ list: String, _ services: OrbitServices, as actor: UserID) async throws -> [Holder] {
    try await resolvePeople(
        list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }, services, as: actor)
}

/// `USER=VALUE,…` pairs, in order, for `option`.
private func pairs(_ list: String, option: String) throws -> [(String, String)] {
    try list.split(separator: ",").map { item in
        let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        guard pair.count == 2 else { throw CommandFailure("\(option) takes USER=VALUE pairs separated by commas (got \"\(item)\").") }
        return (pair[0], pair[1])
    }
}

private func resolveParts(_ list: String, _ services: OrbitServices, as actor: UserID) async throws -> [Holder: String] {
    let given = try pairs(list, option: "--parts")
    let people = try await resolvePeople(given.map(\.0), services, as: actor)
    return Dictionary(zip(people, given.map(\.1)), uniquingKeysWith: { _, last in last })
}

/// `--paid-by USER` (who paid it all) or `--paid-by USER=AMOUNT,…` (several payers).
private func resolvePayers(
    _ text: String, currency: Currency, _ services: OrbitServices
) async throws -> (paidBy: UserID?, payers: [UserID: Int64]?) {
    guard text.contains("=") else { return (try await services.users.resolve(text), nil) }
    var payers: [UserID: Int64] = [:]
    for (reference, amount) in try pairs(text, option: "--paid-by") {
        payers[try await services.users.resolve(reference)] = try Money(parsing: amount, currency: currency, field: "paid_by").minorUnits
    }
    return (nil, payers)
}

/// `orbitctl expense …`
struct ExpenseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "expense",
        abstract: "Shared expenses and how they are split.",
        subcommands: [Add.self, List.self, Show.self, Update.self, Delete.self, ExpenseSettleSplitCommand.self, History.self]
    )

    struct SplitOptions: ParsableArguments {
        @Option(help: "equal, exact, percent, shares or items (implied by --item).") var split: String?
        @Option(
            help:
                "equal: who shares it (ids or emails, comma-separated; family member ids too: their parent owes their share; default: every member)."
        ) var between: String?
        @Option(
            help:
                "exact/percent/shares: USER=VALUE,… (amounts like 12.50, \(MoneyHelp.amounts); percentages like 33.33; whole-number shares from 1 to 1000000)."
        )
        var parts: String?
        @Option(
            name: .customLong("item"),
            help: ArgumentHelp(
                "An item of an itemised expense (repeat for each): DESCRIPTION|AMOUNT|SPLIT, SPLIT being equal (every member), equal:USER,…, or exact:, percent:, shares: with USER=VALUE,…",
                valueName: "item"))
        var items: [String] = []
        @Option(help: "Itemised: tax on top of the items, shared in proportion to them (12.50; \(MoneyHelp.amounts)).") var tax: String?
        @Option(help: "Itemised: tip on top of the items, shared in proportion to them (\(MoneyHelp.amounts)).") var tip: String?

        /// Whether any split option was given.
        var isGiven: Bool { split != nil || isBeyondEqual }
        /// Whether anything but a plain `--split equal` was given.
        var isBeyondEqual: Bool { (split != nil && split != "equal") || between != nil || parts != nil || !items.isEmpty || tax != nil || tip != nil }

        /// The split given, or (no `--split`) equally among every active member.
        func methodOrEveryone(_ services: OrbitServices, community: CommunityID, currency: Currency, as actor: UserID) async throws
            -> SplitMethod
        {
            if let method = try await method(services, community: community, currency: currency, as: actor) { return method }
            return .equal(try await services.members.activeUserIDs(of: community, as: actor))
        }

        /// The split of an expense in `currency`: exact amounts are typed as decimals in it,
        /// percentages with up to two decimals.
        func method(_ services: OrbitServices, community: CommunityID, currency: Currency, as actor: UserID) async throws -> SplitMethod? {
            guard !items.isEmpty || split == "items" else {
                guard tax == nil, tip == nil else { throw CommandFailure("--tax and --tip go with --item.") }
                guard let split else { return nil }
                return try await Self.parse(split, between: between, parts: parts, services, community: community, currency: currency, as: actor)
            }
            guard split == nil || split == "items", between == nil, parts == nil else {
                throw CommandFailure("An itemised expense is split item by item: give each --item its split, not --between or --parts.")
            }
            guard !items.isEmpty else { throw CommandFailure("--split items needs an --item DESCRIPTION|AMOUNT|SPLIT for each item.") }
            var parsed: [Itemised.Item] = []
            for item in items {
                let fields = item.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false).map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
                guard fields.count == 3 else { throw CommandFailure("--item takes DESCRIPTION|AMOUNT|SPLIT (got \"\(item)\").") }
                let method = fields[2].split(separator: ":", maxSplits: 1).map(String.init)
                let people = method.count == 2 ? method[1] : nil
                guard let name = method.first, name != "items" else { throw CommandFailure("--item \"\(item)\" needs a split: equal, exact, …") }
                parsed.append(
                    Itemised.Item(
                        description: fields[0], amount: try Money(parsing: fields[1], currency: currency, field: "item").minorUnits,
                        split: try await Self.parse(
                            name, between: name == "equal" ? people : nil, parts: name == "equal" ? nil : people, services, community: community,
                            currency: currency, as: actor)))
            }
            func extra(_ text: String?, _ field: String) throws -> Int64 {
                try text.map { try Money(parsing: $0, currency: currency, field: field, allowZero: true).minorUnits } ?? 0
            }
            return .items(Itemised(items: parsed, tax: try extra(tax, "tax"), tip: try extra(tip, "tip")))
        }

        /// One split that is not itemised: `method` with its `between` (equal) or `parts`.
        private static func parse(
            _ method: String, between: String?, parts: String?, _ services: OrbitServices, community: CommunityID, currency: Currency,
            as actor: UserID
        ) async throws -> SplitMethod {
            switch method {
            case "equal":
                if let between { return .equal(try await resolveUsers(between, services, as: actor)) }
                return .equal(try await services.members.activeUserIDs(of: community, as: actor))
            case "exact", "percent", "shares":
                guard let parts else { throw CommandFailure("--split \(method) needs parts: USER=VALUE,….") }
                let resolved = try await resolveParts(parts, services, as: actor)
                if method == "exact" {
                    return .exact(try resolved.mapValues { try Money(parsing: $0, currency: currency, field: "parts", allowZero: true).minorUnits })
                }
                if method == "percent" {
                    // Hundredths of a percent: "33.33" is 3333, parsed exactly like an amount with two decimals.
                    return .percent(try resolved.mapValues { try Money(parsing: $0, currency: .usd, field: "parts", allowZero: true).minorUnits })
                }
                var weights: [Holder: Int64] = [:]
                for (user, text) in resolved {
                    guard let weight = Int64(text) else { throw CommandFailure("Shares must be whole numbers (got \(text)).") }
                    weights[user] = weight
                }
                return .shares(weights)
            default:
                throw CommandFailure("The split must be equal, exact, percent, shares or items (got \(method)).")
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an expense paid by one member or several, split among members and their family members.")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "Community id (not needed with --from-event).") var community: CommunityID?
        @Option(help: "What it was for (with --from-event, default: the event's title and \"(attendance)\").") var description: String?
        @Option(help: "Total, in the currency's units (30.00; \(MoneyHelp.amounts)).") var amount: String
        @Option(help: "ISO 4217 code.") var currency: Currency = .usd
        @Option(help: "Who paid (id or email; default the acting user), or several payers: USER=AMOUNT,… adding up to the total.")
        var paidBy: String?
        @Option(
            help:
                "Charge this event's attendees: split per head among those who answered yes, plus-ones to who brought them, children to their parent."
        ) var fromEvent: EventID?
        @Option(help: "With --from-event for a recurring event: the occurrence's original start (RFC 3339).") var occurrence: Timestamp?
        @OptionGroup var split: SplitOptions
        @Option(help: "equipment, food, travel, dues or other.") var category: ExpenseCategory = .other
        @Option(help: "When it was spent (YYYY-MM-DD; default today).") var date: String?
        @Option(help: "Receipt image URL.") var receiptURL: String?
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            if fromEvent == nil {
                guard community != nil else { throw ValidationError("--community is required (or --from-event).") }
                guard description != nil else { throw ValidationError("--description is required (or --from-event).") }
                guard occurrence == nil else { throw ValidationError("--occurrence goes with --from-event.") }
            } else {
                guard !split.isBeyondEqual else {
                    throw ValidationError("--from-event splits per head among the attendees: leave out --between, --parts and --item.")
                }
            }
        }

        func run() async throws {
            let total = try Money(parsing: amount, currency: currency)
            let day = try date.map { try CivilDate.parse($0, field: "transaction_date") }
            let expense = try await withServices(database) { services in
                let acting = try await services.users.resolve(actor.actor)
                let paying = try await paidBy.asyncMap { try await resolvePayers($0, currency: currency, services) }
                if let fromEvent {
                    return try await services.finances.chargeAttendees(
                        of: fromEvent, occurrence: occurrence?.date, description: description, total: total, paidBy: paying?.paidBy,
                        payers: paying?.payers, category: category, as: acting)
                }
                // Both present (validate()).
                guard let community, let description else { throw ValidationError("--community and --description are required.") }
                let method = try await split.methodOrEveryone(services, community: community, currency: currency, as: acting)
                return try await services.finances.addExpense(
                    in: community, description: description, total: total, paidBy: paying?.paidBy, payers: paying?.payers,
                    split: method, date: day, category: category, receiptURL: receiptURL, as: acting
                )
            }
            if output.json { return try printJSON(expense) }
            print(
                "Added expense \(expense.id): \(Money(minorUnits: expense.totalAmount, currency: Currency(expense.currency) ?? .usd)) split \(expense.splits.count) ways."
            )
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A community's expenses and settlements, newest first.")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "Only those this member paid or shares (id or email).") var member: String?
        @Option(help: "Only this category.") var category: ExpenseCategory?
        @Option(help: "Spent on or after this day (YYYY-MM-DD).") var from: String?
        @Option(help: "Spent on or before this day (YYYY-MM-DD).") var to: String?
        @OptionGroup var page: PageOptions
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let from = try from.map { try CivilDate.parse($0, field: "from") }
            let to = try to.map { try CivilDate.parse($0, field: "to") }
            let expenses = try await withServices(database) { services in
                let filter = ExpenseFilter(
                    member: try await member.asyncMap { try await services.users.resolve($0) }, category: category, from: from, to: to)
                return try await services.finances.expenses(
                    in: community, filter: filter, limit: page.limit, cursor: page.cursor, as: try await services.users.resolve(actor.actor))
            }
            if output.json { return try printJSON(expenses) }
            printPage(expenses, ["ID", "DATE", "TYPE", "DESCRIPTION", "AMOUNT", "PAID BY"]) {
                [
                    $0.id.description, $0.transactionDate.description, $0.type.rawValue, $0.description,
                    Money(minorUnits: $0.totalAmount, currency: Currency($0.currency) ?? .usd).description, $0.paidBy.description,
                ]
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An expense with its splits.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "Expense id.") var expense: TransactionID
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let found = try await withServices(database) { services in
                try await services.finances.expense(expense, as: try await services.users.resolve(actor.actor))
            }
            if output.json { return try printJSON(found) }
            let currency = Currency(found.currency) ?? .usd
            let paid = found.payers.map { "\($0.userID) (\(Money(minorUnits: $0.amount, currency: currency).decimalString))" }
            print(
                "\(found.description): \(Money(minorUnits: found.totalAmount, currency: currency)) paid by "
                    + (found.payers.count > 1 ? paid.joined(separator: ", ") : found.paidBy.description))
            if case .items(let itemised) = found.splitInput {
                var lines = itemised.items.map { [$0.description, Money(minorUnits: $0.amount, currency: currency).decimalString, $0.split.name] }
                for (name, amount) in [("tax", itemised.tax), ("tip", itemised.tip)] where amount > 0 {
                    lines.append([name, Money(minorUnits: amount, currency: currency).decimalString, "in proportion"])
                }
                printTable(["ITEM", "AMOUNT", "SPLIT"], lines)
            }
            printTable(
                ["USER", "FOR", "AMOUNT", "SETTLED"],
                found.splits.map {
                    [
                        $0.userID.description, $0.familyMemberName ?? "", Money(minorUnits: $0.amount, currency: currency).decimalString,
                        $0.isSettled ? "yes" : "",
                    ]
                }
            )
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change an expense (its creator or an admin); a new amount or split replaces the splits.",
            discussion: "A new --amount without --split splits the new total equally among the same people."
        )
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "Expense id.") var expense: TransactionID
        @Option(help: "New description.") var description: String?
        @Option(help: "New total, in the expense's currency (\(MoneyHelp.amounts)).") var amount: String?
        @Option(help: "New category.") var category: ExpenseCategory?
        @Option(help: "Who paid it all (id or email), or several payers: USER=AMOUNT,… adding up to the total.") var paidBy: String?
        @OptionGroup var split: SplitOptions
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let updated = try await withServices(database) { services in
                let acting = try await services.users.resolve(actor.actor)
                let current = try await services.finances.expense(expense, as: acting)
                let currency = try Currency.parse(current.currency)
                let total = try amount.map { try Money(parsing: $0, currency: currency) }
                let method = try await split.method(services, community: current.communityID, currency: currency, as: acting)
                let paying = try await paidBy.asyncMap { try await resolvePayers($0, currency: currency, services) }
                return try await services.finances.updateExpense(
                    expense, description: description, total: total, paidBy: paying?.paidBy, payers: paying?.payers, split: method,
                    category: category, as: acting)
            }
            if output.json { return try printJSON(updated) }
            print("Updated expense \(updated.id).")
        }
    }

    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Money's history: who created, edited, settled or deleted which expense or settlement, and dues created, changed or paid, newest first."
        )
        @OptionGroup var database: DatabaseOptions
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "Only this expense's or settlement's.") var expense: TransactionID?
        @Option(help: "Only these dues'.") var dues: DuesID?
        @OptionGroup var page: PageOptions
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let history = try await withServices(database) { services in
                try await services.finances.history(
                    in: community, transaction: expense, dues: dues, limit: page.limit, cursor: page.cursor,
                    as: try await services.users.resolve(actor.actor))
            }
            if output.json { return try printJSON(history) }
            func show(_ state: ExpenseState?) -> String {
                guard let state else { return "" }
                let amount = Money(minorUnits: state.totalAmount, currency: Currency(state.currency) ?? .usd)
                guard state.type == "dues" else { return state.deleted ? "(deleted)" : "\(state.description), \(amount)" }
                let paid = Money(minorUnits: state.payers.reduce(0) { $0 + $1.amount }, currency: amount.currency)
                return "\(state.description), \(amount) due \(state.transactionDate), \(paid.decimalString) paid"
                    + (state.deleted ? " (inactive)" : "")
            }
            printPage(history, ["WHEN", "WHO", "WHAT", "ID", "BEFORE", "AFTER"]) {
                [
                    $0.createdAt.formatted(.iso8601), $0.actorID?.description ?? "", "\($0.action.rawValue) \($0.entity)",
                    $0.entityID.uuidString.lowercased(),
                    show($0.before), show($0.after),
                ]
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an expense; it no longer counts in balances.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "Expense id.") var expense: TransactionID
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            try await withServices(database) { services in
                try await services.finances.deleteExpense(expense, as: try await services.users.resolve(actor.actor))
            }
            if output.json { return try printJSON(DoneOutput(id: expense.description, deleted: true)) }
            print("Deleted expense \(expense).")
        }
    }
}

/// `orbitctl settle …`
struct SettleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settle",
        abstract: "Record settlements and suggest the payments that clear balances.",
        subcommands: [Record.self, Suggest.self]
    )

    struct Record: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Record that one member paid another.")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "Who paid (id or email).") var from: String
        @Option(help: "Who was paid (id or email).") var to: String
        @Option(help: "Amount paid (20.00; \(MoneyHelp.amounts)).") var amount: String
        @Option(help: "ISO 4217 code of what was paid.") var currency: Currency = .usd
        @Option(help: "The currency of the debt it settles, when paid in another: recorded in it, converted.") var settles: Currency?
        @Option(
            help:
                "With --settles: 1 paid currency = RATE of the debt's (default: the rate known today; \(MoneyHelp.rates); the amount converted at it must be at most 2147483647 minor units of the debt's currency)."
        ) var rate: String?
        @Option(help: "How (cash, venmo, …).") var method: String?
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let money = try Money(parsing: amount, currency: currency)
            let settlement = try await withServices(database) { services in
                try await services.finances.recordSettlement(
                    in: community, from: try await services.users.resolve(from), to: try await services.users.resolve(to), amount: money,
                    settles: settles, rate: rate, method: method, as: try await services.users.resolve(actor.actor)
                )
            }
            if output.json { return try printJSON(settlement) }
            if let conversion = settlement.conversion {
                let paid = Money(minorUnits: conversion.paidAmount, currency: Currency(conversion.paidCurrency) ?? .usd)
                let settled = Money(minorUnits: settlement.totalAmount, currency: Currency(settlement.currency) ?? .usd)
                print("Recorded settlement \(settlement.id): \(paid) at \(conversion.rate) settles \(settled).")
            } else {
                print("Recorded settlement \(settlement.id).")
            }
        }
    }

    struct Suggest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The fewest payments that clear the community's balances.")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "Community id.") var community: CommunityID
        @Option(
            name: .customLong("in"),
            help: "Propose every payment in this currency, balances in others converted at the rates known today.") var currency: Currency?
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let payments = try await withServices(database) { services in
                let acting = try await services.users.resolve(actor.actor)
                if let currency { return try await services.finances.settleUpSuggestions(in: community, currency: currency, as: acting) }
                return try await services.finances.settleUpSuggestions(in: community, as: acting)
            }
            if output.json { return try printJSON(payments) }
            printTable(
                ["FROM", "TO", "AMOUNT"],
                payments.map {
                    [$0.from.description, $0.to.description, Money(minorUnits: $0.amount, currency: Currency($0.currency) ?? .usd).description]
                }
            )
        }
    }
}

/// `orbitctl balances …`
struct BalancesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "balances",
        abstract: "Who owes whom.",
        subcommands: [Show.self, Refresh.self]
    )

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Balances per member and currency (positive = is owed).")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "Community id.") var community: CommunityID
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let balances = try await withServices(database) { services in
                try await services.finances.balances(in: community, as: try await services.users.resolve(actor.actor))
            }
            if output.json { return try printJSON(balances) }
            printTable(
                ["USER", "BALANCE"],
                balances.map { [$0.userID.description, Money(minorUnits: $0.balance, currency: Currency($0.currency) ?? .usd).description] }
            )
        }
    }

    struct Refresh: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Refresh the materialized balances snapshot, concurrently (operator).")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            guard let duration = try await withServices(database, { try await $0.finances.refreshBalancesSnapshot() }) else {
                throw CommandFailure("Another balances refresh is running; try again when it has finished.")
            }
            print("Refreshed the balances snapshot in \(duration.wholeMilliseconds) ms.")
        }
    }
}

/// `orbitctl dues …`
struct DuesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dues",
        abstract: "Dues a community collects, and their payments.",
        subcommands: [Create.self, List.self, Show.self, DuesUpdateCommand.self, Pay.self, DuesPaymentsCommand.self, Report.self, Deactivate.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set up dues (admins): owed by every member, or with --from-event by who came, per head.")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "Community id (not needed with --from-event).") var community: CommunityID?
        @Option(help: "Name, e.g. \"2026 Season Dues\" (with --from-event, default: the event's title and \"(attendance)\").") var name: String?
        @Option(help: "Amount per member (50.00); with --from-event, per head (\(MoneyHelp.amounts)).") var amount: String
        @Option(help: "ISO 4217 code.") var currency: Currency = .usd
        @Option(help: "Due date, YYYY-MM-DD (with --from-event, default: the event's day).") var dueDate: String?
        @Option(
            help: "Owed by this event's attendees only: per head among those who answered yes, plus-ones and children to who answered for them."
        ) var fromEvent: EventID?
        @Option(help: "With --from-event for a recurring event: the occurrence's original start (RFC 3339).") var occurrence: Timestamp?
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            guard fromEvent == nil else { return }
            guard community != nil, name != nil, dueDate != nil else {
                throw ValidationError("--community, --name and --due-date are required (or --from-event).")
            }
            guard occurrence == nil else { throw ValidationError("--occurrence goes with --from-event.") }
        }

        func run() async throws {
            let money = try Money(parsing: amount, currency: currency)
            let day = try dueDate.map { try CivilDate.parse($0, field: "due_date") }
            let dues = try await withServices(database) { services in
                let acting = try await services.users.resolve(actor.actor)
                if let fromEvent {
                    return try await services.dues.chargeAttendees(
                        of: fromEvent, occurrence: occurrence?.date, name: name, perHead: money, dueDate: day, as: acting)
                }
                // All present (validate()).
                guard let community, let name, let day else { throw ValidationError("--community, --name and --due-date are required.") }
                return try await services.dues.create(in: community, name: name, amount: money, dueDate: day, as: acting)
            }
            if output.json { return try printJSON(dues) }
            print("Created dues \(dues.id): \(Money(minorUnits: dues.amount, currency: Currency(dues.currency) ?? .usd)) due \(dues.dueDate).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A community's dues.")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "Community id.") var community: CommunityID
        @OptionGroup var page: PageOptions
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let list = try await withServices(database) { services in
                try await services.dues.list(in: community, limit: page.limit, cursor: page.cursor, as: try await services.users.resolve(actor.actor))
            }
            if output.json { return try printJSON(list) }
            printPage(list, ["ID", "NAME", "AMOUNT", "DUE", "ACTIVE"]) {
                [
                    $0.id.description, $0.name, Money(minorUnits: $0.amount, currency: Currency($0.currency) ?? .usd).description,
                    $0.dueDate.description, $0.isActive ? "yes" : "no",
                ]
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show dues.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "Dues id.") var dues: DuesID
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let found = try await withServices(database) { services in
                try await services.dues.get(dues, as: try await services.users.resolve(actor.actor))
            }
            if output.json { return try printJSON(found) }
            print(
                "\(found.name): \(Money(minorUnits: found.amount, currency: Currency(found.currency) ?? .usd)) due \(found.dueDate)\(found.isActive ? "" : " (inactive)")"
            )
        }
    }

    struct Pay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Record a payment (admins); partial payments allowed, never more than owed.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "Dues id.") var dues: DuesID
        @Option(help: "Who paid (id or email).") var user: String
        @Option(help: "Amount (20.00; \(MoneyHelp.amounts)).") var amount: String
        @Option(help: "How (cash, transfer, …).") var method: String?
        @Option(help: "A note.") var note: String?
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let payment = try await withServices(database) { services in
                let acting = try await services.users.resolve(actor.actor)
                let currency = try Currency.parse(try await services.dues.get(dues, as: acting).currency)
                return try await services.dues.recordPayment(
                    to: dues, by: try await services.users.resolve(user), amount: try Money(parsing: amount, currency: currency), method: method,
                    note: note, as: acting
                )
            }
            if output.json { return try printJSON(payment) }
            print("Recorded \(Money(minorUnits: payment.amountPaid, currency: Currency(payment.currency) ?? .usd)) from \(payment.userID).")
        }
    }

    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Each member: due, paid, outstanding, status, overdue.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "Dues id.") var dues: DuesID
        @OptionGroup var actor: OptionalActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let report = try await withServices(database) { services in
                try await services.dues.report(dues, as: try await actor.actor.asyncMap { try await services.users.resolve($0) })
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

    struct Deactivate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop collecting dues (admins).")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "Dues id.") var dues: DuesID
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let updated = try await withServices(database) { services in
                try await services.dues.deactivate(dues, as: try await services.users.resolve(actor.actor))
            }
            if output.json { return try printJSON(updated) }
            print("Dues \(updated.id) no longer active.")
        }
    }
}

/// `orbitctl export`: a community's money for a spreadsheet or an accountant.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a community's money: transactions with payers and splits, settlements, dues and payments.",
        discussion: """
            CSV is RFC 4180 (CRLF line ends, a header line, one row per transaction, payer, split, dues and payment; \
            parent_id ties a payer or split to its transaction and a payment to its dues). Amounts are decimals with their currency.
            """
    )
    @OptionGroup var database: DatabaseOptions
    @Option(help: "Community id.") var community: CommunityID
    @Option(help: "csv or json.") var format = "csv"
    @Option(help: "Dated on or after this day (YYYY-MM-DD).") var from: String?
    @Option(help: "Dated on or before this day (YYYY-MM-DD).") var to: String?
    @Option(help: "Write to this file instead of standard output.") var output: String?
    @OptionGroup var actor: ActorOptions

    func validate() throws {
        guard format == "csv" || format == "json" else { throw ValidationError("--format must be csv or json.") }
    }

    func run() async throws {
        let from = try from.map { try CivilDate.parse($0, field: "from") }
        let to = try to.map { try CivilDate.parse($0, field: "to") }
        let export = try await withServices(database) { services in
            try await services.finances.export(in: community, from: from, to: to, as: try await services.users.resolve(actor.actor))
        }
        let data: Data
        if format == "csv" {
            data = try export.csv()
        } else {
            data = try CLIJSON.data(export) + Data("\n".utf8)
        }
        if let output {
            try data.write(to: URL(fileURLWithPath: output), options: .atomic)
            print("Wrote \(export.rows.count) rows to \(output).")
        } else {
            FileHandle.standardOutput.write(data)
        }
    }
}
