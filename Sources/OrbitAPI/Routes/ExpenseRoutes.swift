import Foundation
import Hummingbird
import OrbitCore

/// How an expense is divided, with amounts in minor units.
struct SplitBody: Decodable {
    /// One line of an itemised expense: what it cost and how it is divided.
    struct Item: Decodable {
        var description: String
        var amount: Int64
        var split: SplitBody
    }

    /// equal, exact, percent, shares or items.
    var method: String
    /// For `equal`: who shares the expense.
    var userIds: [UserID]?
    /// For `exact`: each participant's amount in minor units.
    var amounts: [String: Int64]?
    /// For `percent`: hundredths of a percent (3333 is 33.33%).
    var basisPoints: [String: Int64]?
    /// For `shares`: positive weights.
    var shares: [String: Int64]?
    /// For `items`: the items, and the tax and tip shared in proportion to them.
    var items: [Item]?
    var tax: Int64?
    var tip: Int64?

    enum CodingKeys: String, CodingKey { case method, userIds, amounts, basisPoints, shares, items, tax, tip }

    /// Reads `method` and then only the field that method uses: the others are not part of
    /// this split (openapi.yaml's variants leave them free), so whatever they hold is ignored.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        method = try container.decode(String.self, forKey: .method)
        switch method {
        case "equal": userIds = try container.decodeIfPresent([UserID].self, forKey: .userIds)
        case "exact": amounts = try container.decodeIfPresent([String: Int64].self, forKey: .amounts)
        case "percent": basisPoints = try container.decodeIfPresent([String: Int64].self, forKey: .basisPoints)
        case "shares": shares = try container.decodeIfPresent([String: Int64].self, forKey: .shares)
        case "items":
            items = try container.decodeIfPresent([Item].self, forKey: .items)
            tax = try container.decodeIfPresent(Int64.self, forKey: .tax)
            tip = try container.decodeIfPresent(Int64.self, forKey: .tip)
        default: break
        }
    }

    /// Every id the split names (user ids, family member ids).
    var ids: [UUID] {
        (userIds?.map(\.uuid) ?? []) + [amounts, basisPoints, shares].compactMap { $0 }.flatMap { $0.keys.compactMap(UUID.init(uuidString:)) }
            + (items ?? []).flatMap(\.split.ids)
    }

    /// - Parameter people: what each id of `ids` is (`ExpenseService.participants`).
    func method(currency: Currency, people: [UUID: Holder]) throws -> SplitMethod {
        func keyed(_ values: [String: Int64]?, field: String) throws -> [Holder: Int64] {
            guard let values, !values.isEmpty else {
                throw APIProblem.validation(field: "split.\(field)", "split.\(field) is required for method \(method).")
            }
            var result: [Holder: Int64] = [:]
            for (key, value) in values {
                guard let id = UUID(uuidString: key) else {
                    throw APIProblem.validation(field: "split.\(field)", "split.\(field) keys must be user or family member ids.")
                }
                result[people[id] ?? .user(UserID(id))] = value
            }
            return result
        }
        switch method {
        case "equal":
            guard let userIds, !userIds.isEmpty else {
                throw APIProblem.validation(field: "split.user_ids", "split.user_ids is required for method equal.")
            }
            return .equal(userIds.map { people[$0.uuid] ?? .user($0) })
        case "exact":
            return .exact(
                try keyed(amounts, field: "amounts").mapValues { try Amounts.money($0, currency: currency, field: "split.amounts").minorUnits })
        case "percent":
            return .percent(
                try keyed(basisPoints, field: "basis_points").mapValues { points in
                    guard points > 0, points <= 10_000 else {
                        throw APIProblem.validation(
                            field: "split.basis_points", "split.basis_points must be from 1 to 10000 (hundredths of a percent).")
                    }
                    return points
                }
            )
        case "shares":
            return .shares(try keyed(shares, field: "shares"))
        case "items":
            guard let items, !items.isEmpty else { throw APIProblem.validation(field: "split.items", "split.items is required for method items.") }
            return .items(
                Itemised(
                    items: try items.map { item in
                        guard item.split.method != "items" else {
                            throw APIProblem.validation(field: "split.items.split", "An item's split cannot itself have items.")
                        }
                        return Itemised.Item(
                            description: item.description,
                            amount: try Amounts.money(item.amount, currency: currency, field: "split.items.amount").minorUnits,
                            split: try item.split.method(currency: currency, people: people))
                    },
                    tax: try tax.map { try Amounts.money($0, currency: currency, field: "split.tax", allowZero: true).minorUnits } ?? 0,
                    tip: try tip.map { try Amounts.money($0, currency: currency, field: "split.tip", allowZero: true).minorUnits } ?? 0))
        default:
            throw APIProblem.validation(field: "split.method", "split.method must be equal, exact, percent, shares or items.")
        }
    }
}

/// Who paid how much, when several people paid (`payers`).
struct PayerBody: Decodable {
    var userId: UserID
    var amount: Int64

    /// The payers as the service takes them, amounts in `currency`; a user named twice is refused.
    static func payers(_ bodies: [PayerBody]?, currency: Currency) throws -> [UserID: Int64]? {
        guard let bodies else { return nil }
        var payers: [UserID: Int64] = [:]
        for body in bodies {
            guard payers[body.userId] == nil else { throw APIProblem.validation(field: "payers", "payers names \(body.userId) twice.") }
            payers[body.userId] = try Amounts.money(body.amount, currency: currency, field: "payers").minorUnits
        }
        return payers
    }
}

extension OrbitAPI {
    /// The currency of new money: `code` when given, else the community's base currency
    /// (`settings.baseCurrency`), else USD.
    func currency(_ code: String?, of community: CommunityID, as user: UserID) async throws -> Currency {
        if let code { return try Amounts.currency(code) }
        return try Amounts.currency(try await services.communities.get(community, as: user).settings.baseCurrency ?? "USD")
    }

    /// Expenses: what was paid and how it is split, attendance fees, money's history (docs/money.md).
    func addExpenseRoutes(to router: RouterGroup<APIContext>) {
        struct ExpenseBody: Decodable {
            var description: String
            var amount: Int64
            var currency: String?
            var paidBy: UserID?
            var payers: [PayerBody]?
            /// Left out: the community's default split (docs/money.md, "Who a new split takes").
            var split: SplitBody?
            var transactionDate: String?
            /// `HH:MM`, the community's local time.
            var transactionTime: String?
            /// An image uploaded to the community (`POST /communities/{id}/media`), as the receipt.
            var receiptMediaId: MediaID?
            var category: String?
            /// One of the community's own categories (then `category` is `other`).
            var categoryId: CustomCategoryID?
            var receiptUrl: String?
            var linkedEventId: EventID?
            var notes: String?
            /// `expense` (the default) or `income`: money `paid_by` received for the group.
            var type: String?

            var income: Bool {
                get throws {
                    switch type ?? "expense" {
                    case "expense": false
                    case "income": true
                    default: throw APIProblem.validation(field: "type", "type must be expense or income.")
                    }
                }
            }
        }
        // Newest first; filters: member (payer or in a split), category, from/to (transaction_date).
        router.get("communities/:community_id/expenses") { request, context in
            let limit = try request.queryInt("limit", default: 50, range: 1...200)
            let filter = ExpenseFilter(
                member: try request.queryID("member", as: UserID.self),
                category: try request.query("category").map { try ExpenseCategory.parse($0, field: "category") },
                categoryID: try request.queryID("category_id", as: CustomCategoryID.self),
                from: try request.query("from").map { try CivilDate.parse($0, field: "from") },
                to: try request.query("to").map { try CivilDate.parse($0, field: "to") }
            )
            return JSON(
                try await services.expenses.expenses(
                    in: try context.id("community_id"), filter: filter, limit: limit, cursor: request.query("cursor"), as: try context.requireUser())
            )
        }
        router.post("communities/:community_id/expenses") { request, context in
            let body = try await request.decodeJSON(ExpenseBody.self, context: context)
            let user = try context.requireUser()
            let currency = try await currency(body.currency, of: try context.id("community_id"), as: user)
            let payers = try PayerBody.payers(body.payers, currency: currency)
            let community: CommunityID = try context.id("community_id")
            let split: SplitMethod
            if let given = body.split {
                split = try given.method(currency: currency, people: try await services.expenses.participants(given.ids, as: user))
            } else {
                split = try await services.expenses.defaultSplit(in: community, as: user)
            }
            return try await creating(
                .transactions, request, context: context, stored: { try await services.expenses.expense(TransactionID($0), as: user) }
            ) {
                try await services.expenses.addExpense(
                    in: try context.id("community_id"), description: body.description,
                    total: try Amounts.money(body.amount, currency: currency, field: "amount"),
                    paidBy: body.paidBy ?? (payers == nil ? user : nil), payers: payers,
                    split: split,
                    date: try body.transactionDate.map { try CivilDate.parse($0, field: "transaction_date") },
                    category: try ExpenseCategory.parse(body.category ?? "other", field: "category"), receiptURL: body.receiptUrl,
                    linkedEvent: body.linkedEventId, notes: body.notes, income: try body.income, customCategory: body.categoryId,
                    time: body.transactionTime, receiptMedia: body.receiptMediaId, as: user
                )
            }
        }
        router.get("expenses/:expense_id") { _, context in
            Tagged(try await services.expenses.expense(try context.id("expense_id", as: TransactionID.self), as: try context.requireUser()))
        }
        // A key left out is left as it is; `"notes": null` clears the notes.
        struct ExpenseChange: Decodable, NullableFields {
            static let nullableFields: Set<String> = ["notes", "linked_event_id", "category_id", "transaction_time", "receipt_media_id"]
            var description: String?
            var amount: Int64?
            /// Another currency (with `amount`, in it), while no split is settled.
            var currency: String?
            var paidBy: UserID?
            var payers: [PayerBody]?
            var split: SplitBody?
            var category: String?
            /// One of the community's own categories; null leaves it for `category` (or `other`).
            var categoryId: CustomCategoryID??
            /// `HH:MM`; null clears it.
            var transactionTime: String??
            /// An image of the community's media; null removes the receipt.
            var receiptMediaId: MediaID??
            var notes: String??
            var transactionDate: String?
            var linkedEventId: EventID??

            enum CodingKeys: String, CodingKey {
                case description, amount, currency, paidBy, payers, split, category, categoryId, notes, transactionDate, linkedEventId
                case transactionTime, receiptMediaId
            }

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                description = try container.decodeIfPresent(String.self, forKey: .description)
                amount = try container.decodeIfPresent(Int64.self, forKey: .amount)
                currency = try container.decodeIfPresent(String.self, forKey: .currency)
                paidBy = try container.decodeIfPresent(UserID.self, forKey: .paidBy)
                payers = try container.decodeIfPresent([PayerBody].self, forKey: .payers)
                split = try container.decodeIfPresent(SplitBody.self, forKey: .split)
                category = try container.decodeIfPresent(String.self, forKey: .category)
                notes =
                    container.contains(.notes)
                    ? .some(try container.decodeNil(forKey: .notes) ? nil : try container.decode(String.self, forKey: .notes)) : .none
                transactionDate = try container.decodeIfPresent(String.self, forKey: .transactionDate)
                linkedEventId =
                    container.contains(.linkedEventId)
                    ? .some(try container.decodeNil(forKey: .linkedEventId) ? nil : try container.decode(EventID.self, forKey: .linkedEventId))
                    : .none
                transactionTime =
                    container.contains(.transactionTime)
                    ? .some(try container.decodeNil(forKey: .transactionTime) ? nil : try container.decode(String.self, forKey: .transactionTime))
                    : .none
                receiptMediaId =
                    container.contains(.receiptMediaId)
                    ? .some(try container.decodeNil(forKey: .receiptMediaId) ? nil : try container.decode(MediaID.self, forKey: .receiptMediaId))
                    : .none
                categoryId =
                    container.contains(.categoryId)
                    ? .some(try container.decodeNil(forKey: .categoryId) ? nil : try container.decode(CustomCategoryID.self, forKey: .categoryId))
                    : .none
            }
        }
        // The expense's creator or an admin; a new amount or split replaces the splits.
        router.patch("expenses/:expense_id") { request, context in
            let body = try await request.decodeJSON(ExpenseChange.self, context: context)
            let id: TransactionID = try context.id("expense_id")
            let user = try context.requireUser()
            // Another currency is the same money counted anew: it comes with the amount in it.
            if body.currency != nil && body.amount == nil {
                throw ServiceError.conflict(field: "amount", reason: "a new currency needs the amount in it")
            }
            let code: String
            if let given = body.currency { code = given } else { code = try await services.expenses.expense(id, as: user).currency }
            let currency = try Amounts.currency(code)
            let people = try await services.expenses.participants(body.split?.ids ?? [], as: user)
            return Tagged(
                try await request.underIfMatch(.entity(.expense, id.uuid)) {
                    try await services.expenses.updateExpense(
                        id, description: body.description,
                        total: try body.amount.map { try Amounts.money($0, currency: currency, field: "amount") }, paidBy: body.paidBy,
                        payers: try PayerBody.payers(body.payers, currency: currency),
                        split: try body.split?.method(currency: currency, people: people),
                        category: try body.category.map { try ExpenseCategory.parse($0, field: "category") }, notes: body.notes,
                        date: try body.transactionDate.map { try CivilDate.parse($0, field: "transaction_date") }, linkedEvent: body.linkedEventId,
                        customCategory: body.categoryId, time: body.transactionTime, receiptMedia: body.receiptMediaId, as: user
                    )
                }
            )
        }
        struct AttendanceFeeBody: Decodable {
            var amount: Int64
            var currency: String?
            var occurrence: Date?
            var description: String?
            var paidBy: UserID?
            var payers: [PayerBody]?
            var category: String?
        }
        // An event's cost charged per head to who answered yes (plus-ones, children to their parent).
        router.post("events/:event_id/attendance-fee") { request, context in
            let body = try await request.decodeJSON(AttendanceFeeBody.self, context: context)
            let currency = try Amounts.currency(body.currency)
            return Created(
                try await services.expenses.chargeAttendees(
                    of: try context.id("event_id"), occurrence: body.occurrence, description: body.description,
                    total: try Amounts.money(body.amount, currency: currency, field: "amount"), paidBy: body.paidBy,
                    payers: try PayerBody.payers(body.payers, currency: currency),
                    category: try ExpenseCategory.parse(body.category ?? "other", field: "category"), as: try context.requireUser()))
        }
        router.delete("expenses/:expense_id") { request, context in
            let id: TransactionID = try context.id("expense_id")
            try await request.underIfMatch(.entity(.expense, id.uuid)) {
                try await services.expenses.deleteExpense(id, as: try context.requireUser())
            }
            return NoContent()
        }

        // A community's own categories (docs/money.md, "Categories"): members list and add them;
        // their creator or an admin renames, archives and unarchives them.
        router.get("communities/:community_id/categories") { request, context in
            let limit = try request.queryInt("limit", default: 100, range: 1...200)
            return JSON(
                try await services.expenses.categories(
                    of: try context.id("community_id"), archived: try request.queryBool("archived"), limit: limit,
                    cursor: request.query("cursor"), as: try context.requireUser()))
        }
        struct CategoryBody: Decodable {
            var name: String
            var emoji: String
        }
        router.post("communities/:community_id/categories") { request, context in
            let body = try await request.decodeJSON(CategoryBody.self, context: context)
            return Created(
                try await services.expenses.addCategory(
                    named: body.name, emoji: body.emoji, to: try context.id("community_id"), as: try context.requireUser()))
        }
        struct CategoryChange: Decodable {
            var name: String?
            var emoji: String?
            var archived: Bool?
        }
        router.patch("communities/:community_id/categories/:category_id") { request, context in
            let body = try await request.decodeJSON(CategoryChange.self, context: context)
            return JSON(
                try await services.expenses.updateCategory(
                    try context.id("category_id"), in: try context.id("community_id"), name: body.name, emoji: body.emoji,
                    archived: body.archived, as: try context.requireUser()))
        }

        // Undo: a deleted expense or settlement, back as it was (its creator or an admin, 30 days).
        router.post("expenses/:expense_id/restore") { _, context in
            JSON(try await services.expenses.restoreExpense(try context.id("expense_id"), as: try context.requireUser()))
        }

        // Money's history, newest first: every member reads it.
        router.get("communities/:community_id/money-activity") { request, context in
            let limit = try request.queryInt("limit", default: 50, range: 1...200)
            return JSON(
                try await services.expenses.history(
                    in: try context.id("community_id"), transaction: try request.queryID("expense_id", as: TransactionID.self),
                    dues: try request.queryID("dues_id", as: DuesID.self), limit: limit, cursor: request.query("cursor"),
                    as: try context.requireUser()))
        }
    }
}
