import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl expense …`
struct ExpenseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "expense",
        abstract: "Shared expenses and how they are split.",
        subcommands: [Add.self, List.self, Show.self, Update.self, Delete.self, Restore.self, ExpenseSettleSplitCommand.self, History.self]
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

        /// The split given, or (no split option) the community's default split: equally among the
        /// members in new splits, or by their default weights (`settings.defaultSplit`).
        func methodOrEveryone(_ services: OrbitServices, community: CommunityID, currency: Currency, as actor: UserID) async throws
            -> SplitMethod
        {
            if let method = try await method(services, community: community, currency: currency, as: actor) { return method }
            return try await services.expenses.defaultSplit(in: community, as: actor)
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

    struct Add: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an expense paid by one member or several, split among members and their family members.")
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
        @Option(help: "food, transport, groceries, rent, entertainment, utilities, shopping, health, travel, equipment, dues or other.") var category:
            ExpenseCategory = .other
        @Option(help: "One of the community's own categories (orbitctl category list), instead of --category.")
        var categoryID: CustomCategoryID?
        @Option(help: "When it was spent (YYYY-MM-DD; default today).") var date: String?
        @Option(help: "The time of day it was spent (HH:MM, 24-hour, the community's time).") var time: String?
        @Option(help: "Receipt image URL.") var receiptURL: String?
        @Option(help: "The receipt: an image uploaded to the community (media upload).") var receipt: MediaID?
        @Option(help: "Notes, up to 2,000 characters.") var notes: String?
        @Flag(help: "An income: money the --paid-by member received for the group (a refund, a sale); they owe each of the split their share.")
        var income = false
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        /// The total and the day, parsed (validate() parses them before connecting).
        private var parsed: (total: Money, day: CivilDate?) {
            get throws { (try Money(parsing: amount, currency: currency), try date.map { try CivilDate.parse($0, field: "transaction_date") }) }
        }

        func validate() throws {
            if fromEvent == nil {
                guard community != nil else { throw ValidationError("--community is required (or --from-event).") }
                guard description != nil else { throw ValidationError("--description is required (or --from-event).") }
                guard occurrence == nil else { throw ValidationError("--occurrence goes with --from-event.") }
            } else {
                guard categoryID == nil else { throw ValidationError("--category-id goes with --community: give --category for an attendance fee.") }
                guard !income else { throw ValidationError("--from-event charges attendees: an income is added with --community.") }
                guard time == nil, receipt == nil else {
                    throw ValidationError("--time and --receipt go with --community (expense update sets them later).")
                }
                guard !split.isBeyondEqual else {
                    throw ValidationError("--from-event splits per head among the attendees: leave out --between, --parts and --item.")
                }
            }
            _ = try parsed
        }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Expense {
            let (total, day) = try parsed
            let paying = try await paidBy.asyncMap { try await resolvePayers($0, currency: currency, services) }
            if let fromEvent {
                return try await services.expenses.chargeAttendees(
                    of: fromEvent, occurrence: occurrence?.date, description: description, total: total, paidBy: paying?.paidBy,
                    payers: paying?.payers, category: category, as: actor)
            }
            // Both present (validate()).
            guard let community, let description else { throw ValidationError("--community and --description are required.") }
            let method = try await split.methodOrEveryone(services, community: community, currency: currency, as: actor)
            return try await services.expenses.addExpense(
                in: community, description: description, total: total, paidBy: paying?.paidBy, payers: paying?.payers,
                split: method, date: day, category: category, receiptURL: receiptURL, notes: notes, income: income,
                customCategory: categoryID, time: time, receiptMedia: receipt, as: actor
            )
        }

        func tell(_ expense: Expense) {
            print(
                "Added \(expense.type == .income ? "income" : "expense") \(expense.id): \(Money(minorUnits: expense.totalAmount, currency: Currency(expense.currency) ?? .usd)) split \(expense.splits.count) ways."
            )
        }
    }

    struct List: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "A community's expenses and settlements, newest first.")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "Only those this member paid or shares (id or email).") var member: String?
        @Option(help: "Only this category.") var category: ExpenseCategory?
        @Option(help: "Only this one of the community's own categories.") var categoryID: CustomCategoryID?
        @Option(help: "Spent on or after this day (YYYY-MM-DD).") var from: String?
        @Option(help: "Spent on or before this day (YYYY-MM-DD).") var to: String?
        @OptionGroup var page: PageOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        /// The days, parsed (validate() parses them before connecting).
        private var days: (from: CivilDate?, to: CivilDate?) {
            get throws { (try from.map { try CivilDate.parse($0, field: "from") }, try to.map { try CivilDate.parse($0, field: "to") }) }
        }

        func validate() throws { _ = try days }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<Expense> {
            let (from, to) = try days
            let filter = ExpenseFilter(
                member: try await member.asyncMap { try await services.users.resolve($0) }, category: category, categoryID: categoryID,
                from: from, to: to)
            return try await services.expenses.expenses(
                in: community, filter: filter, limit: page.limit, cursor: page.cursor, as: actor)
        }

        func tell(_ expenses: Page<Expense>) {
            printPage(expenses, ["ID", "DATE", "TYPE", "DESCRIPTION", "AMOUNT", "PAID BY"]) {
                [
                    $0.id.description, $0.transactionDate.description, $0.type.rawValue, $0.description,
                    Money(minorUnits: $0.totalAmount, currency: Currency($0.currency) ?? .usd).description, $0.paidBy.description,
                ]
            }
        }
    }

    struct Show: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "An expense with its splits.")
        @Argument(help: "Expense id.") var expense: TransactionID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Expense {
            try await services.expenses.expense(expense, as: actor)
        }

        func tell(_ found: Expense) {
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

    struct Update: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change an expense (its creator or an admin); a new amount or split replaces the splits.",
            discussion: "A new --amount without --split splits the new total equally among the same people."
        )
        @Argument(help: "Expense id.") var expense: TransactionID
        @Option(help: "New description.") var description: String?
        @Option(help: "New total, in the expense's currency or in --currency (\(MoneyHelp.amounts)).") var amount: String?
        @Option(help: "Another currency (ISO 4217), with --amount in it, while no share is settled.") var currency: Currency?
        @Option(help: "New category (built-in; it replaces the community's own category, if any).") var category: ExpenseCategory?
        @Option(help: "One of the community's own categories (orbitctl category list).") var categoryID: CustomCategoryID?
        @Flag(help: "Leave the community's own category, for --category (or other).") var noCategoryID = false
        @Option(help: "New notes, up to 2,000 characters.") var notes: String?
        @Flag(help: "Remove the notes.") var clearNotes = false
        @Option(help: "The day it was spent (YYYY-MM-DD; a settlement's: today or earlier).") var date: String?
        @Option(help: "The time of day it was spent (HH:MM, 24-hour, the community's time).") var time: String?
        @Flag(help: "Remove the time of day.") var clearTime = false
        @Option(help: "A receipt: an image uploaded to the community (media upload).") var receipt: MediaID?
        @Flag(help: "Remove the receipt image.") var noReceipt = false
        @Option(help: "Link an event of the community.") var event: EventID?
        @Flag(help: "Unlink its event.") var noEvent = false
        @Option(help: "Who paid it all (id or email), or several payers: USER=AMOUNT,… adding up to the total.") var paidBy: String?
        @OptionGroup var split: SplitOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Expense {
            let current = try await services.expenses.expense(expense, as: actor)
            let currency = try self.currency ?? Currency.parse(current.currency)
            let total = try amount.map { try Money(parsing: $0, currency: currency) }
            let method = try await split.method(services, community: current.communityID, currency: currency, as: actor)
            let paying = try await paidBy.asyncMap { try await resolvePayers($0, currency: currency, services) }
            return try await services.expenses.updateExpense(
                expense, description: description, total: total, paidBy: paying?.paidBy, payers: paying?.payers, split: method,
                category: category, notes: clearNotes ? .some(nil) : notes.map { .some($0) },
                date: try date.map { try CivilDate.parse($0, field: "date") }, linkedEvent: noEvent ? .some(nil) : event.map { .some($0) },
                customCategory: noCategoryID ? .some(nil) : categoryID.map { .some($0) },
                time: clearTime ? .some(nil) : time.map { .some($0) }, receiptMedia: noReceipt ? .some(nil) : receipt.map { .some($0) }, as: actor)
        }

        func validate() throws {
            if notes != nil && clearNotes { throw ValidationError("Give --notes or --clear-notes, not both.") }
            if event != nil && noEvent { throw ValidationError("Give --event or --no-event, not both.") }
            if categoryID != nil && noCategoryID { throw ValidationError("Give --category-id or --no-category-id, not both.") }
            if time != nil && clearTime { throw ValidationError("Give --time or --clear-time, not both.") }
            if receipt != nil && noReceipt { throw ValidationError("Give --receipt or --no-receipt, not both.") }
            if currency != nil && amount == nil { throw ValidationError("--currency needs --amount, in the new currency.") }
        }

        func tell(_ updated: Expense) {
            print("Updated expense \(updated.id).")
        }
    }

    struct History: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Money's history: who created, edited, settled or deleted which expense or settlement, and dues created, changed or paid, newest first."
        )
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "Only this expense's or settlement's.") var expense: TransactionID?
        @Option(help: "Only these dues'.") var dues: DuesID?
        @OptionGroup var page: PageOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<MoneyActivity> {
            try await services.expenses.history(
                in: community, transaction: expense, dues: dues, limit: page.limit, cursor: page.cursor,
                as: actor)
        }

        func tell(_ history: Page<MoneyActivity>) {
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

    struct Delete: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an expense; it no longer counts in balances.")
        @Argument(help: "Expense id.") var expense: TransactionID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
            try await services.expenses.deleteExpense(expense, as: actor)
            return DoneOutput(id: expense.description, deleted: true)
        }

        func tell(_ done: DoneOutput) {
            print("Deleted expense \(expense).")
        }
    }

    struct Restore: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Restore a deleted expense or settlement (its creator or an admin, within 30 days of the deletion): it counts in balances again.")
        @Argument(help: "Expense or settlement id.") var expense: TransactionID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Expense {
            try await services.expenses.restoreExpense(expense, as: actor)
        }

        func tell(_ restored: Expense) {
            print("Restored \(restored.type.rawValue) \(restored.id): \(restored.description).")
        }
    }
}
