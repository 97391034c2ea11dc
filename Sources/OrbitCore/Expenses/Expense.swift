package import Foundation
import OrbitPostgres

package enum TransactionTag {}
package enum SplitTag {}
package typealias TransactionID = Identifier<TransactionTag>
package typealias SplitID = Identifier<SplitTag>

/// One person's part of a transaction (spec: Splits). Amounts are minor units. A share "for"
/// a family member (a child) is owed by their guardian, `userID`.
package struct Split: Sendable, Codable, Equatable {
    package var id: SplitID
    package var userID: UserID
    /// The family member the share is for, and their name; nil for the user's own share.
    package var familyMemberID: FamilyMemberID?
    package var familyMemberName: String?
    package var amount: Int64
    package var isSettled: Bool
    package var settledAt: Date?
    package var settledVia: String?

    enum CodingKeys: String, CodingKey {
        case id, userID = "user_id", familyMemberID = "family_member_id", familyMemberName = "for", amount, isSettled = "is_settled"
        case settledAt = "settled_at", settledVia = "settled_via"
    }

    /// Who the share is for: the family member, or the user.
    package var participant: Holder { familyMemberID.map(Holder.familyMember) ?? .user(userID) }
}

extension Split {
    /// A row of `ExpenseService.splitColumns`.
    init(row: PostgresRow) throws {
        id = try row.decode("id")
        userID = try row.decode("user_id")
        familyMemberID = try row.decode("family_member_id")
        familyMemberName = try row.decode("family_member_name")
        amount = Int64(try row.decode("amount", as: Int32.self))
        isSettled = try row.decode("is_settled")
        settledAt = try row.decode("settled_at")
        settledVia = try row.decode("settled_via")
    }
}

/// Who paid how much of an expense paid by several people (`Expense.payers`).
package struct Payer: Sendable, Codable, Equatable {
    package var userID: UserID
    package var amount: Int64

    package init(userID: UserID, amount: Int64) {
        self.userID = userID
        self.amount = amount
    }

    enum CodingKeys: String, CodingKey { case userID = "user_id", amount }
}

/// A settlement paid in another currency than the debt it settles (docs/money.md, "Currencies").
package struct Conversion: Sendable, Codable, Equatable {
    /// What changed hands, in minor units of `paidCurrency`.
    package var paidAmount: Int64
    package var paidCurrency: String
    /// 1 `paidCurrency` = `rate` of the settlement's currency, as recorded.
    package var rate: String

    package init(paidAmount: Int64, paidCurrency: String, rate: String) {
        self.paidAmount = paidAmount
        self.paidCurrency = paidCurrency
        self.rate = rate
    }

    enum CodingKeys: String, CodingKey { case paidAmount = "paid_amount", paidCurrency = "paid_currency", rate }
}

/// An expense or a settlement (spec: Transactions) with its splits.
package struct Expense: Sendable, Codable, Equatable {
    package var id: TransactionID
    package var communityID: CommunityID
    package var createdBy: UserID
    package var type: TransactionType
    package var description: String
    package var totalAmount: Int64
    package var currency: String
    package var paidBy: UserID
    /// `other` when the expense has one of its community's own categories (`categoryID`).
    package var category: ExpenseCategory
    /// One of the community's own categories (`CustomCategory`), or nil for a built-in one.
    package var categoryID: CustomCategoryID?
    package var receiptURL: String?
    /// Up to 2,000 characters, for anyone in the community.
    package var notes: String?
    package var linkedEventID: EventID?
    package var transactionDate: CivilDate
    /// The time of day it was spent, `HH:MM` in the community's time zone, if given.
    package var transactionTime: String?
    /// The receipt: an image uploaded to the community's media (`GET /media/{id}`), if any.
    package var receiptMediaID: MediaID?
    /// The recurring expense it is an occurrence of, or nil.
    package var recurringChargeID: RecurringChargeID?
    /// A settlement paid in another currency: what was paid and at what rate; nil otherwise.
    package var conversion: Conversion?
    /// The split as entered (method and inputs); nil for settlements and older expenses.
    package var splitInput: SplitMethod?
    package var createdAt: Date
    package var updatedAt: Date
    /// Who paid it: `paidBy` alone for the whole total, or several payers whose amounts add up
    /// to it (`paidBy` one of them).
    package var payers: [Payer]
    package var splits: [Split]

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", createdBy = "created_by", type, description, totalAmount = "total_amount", currency
        case paidBy = "paid_by", category, categoryID = "category_id", receiptURL = "receipt_url", notes, linkedEventID = "linked_event_id",
            transactionDate = "transaction_date"
        case transactionTime = "transaction_time", receiptMediaID = "receipt_media_id"
        case recurringChargeID = "recurring_charge_id", conversion, splitInput = "split_input", createdAt = "created_at", updatedAt = "updated_at",
            payers, splits
    }

    static let columns = """
        id, community_id, created_by, type::text AS type, description, total_amount, currency, paid_by, category::text AS category,
        category_id, receipt_url, notes, linked_event_id, transaction_date, to_char(transaction_time, 'HH24:MI') AS transaction_time,
        receipt_media_id, recurring_charge_id, paid_amount, paid_currency,
        trim_scale(exchange_rate)::text AS exchange_rate, split_input, created_at, updated_at
        """

    /// - Parameter payers: its payer rows; none when `paid_by` paid it all.
    init(row: PostgresRow, payers: [Payer], splits: [Split]) throws {
        id = try row.decode("id")
        communityID = try row.decode("community_id")
        createdBy = try row.decode("created_by")
        type = try row.decode("type")
        description = try row.decode("description")
        totalAmount = Int64(try row.decode("total_amount", as: Int32.self))
        currency = try row.decode("currency")
        paidBy = try row.decode("paid_by")
        category = try row.decode("category")
        categoryID = try row.decode("category_id")
        receiptURL = try row.decode("receipt_url")
        notes = try row.decode("notes")
        linkedEventID = try row.decode("linked_event_id")
        transactionDate = try row.decode("transaction_date")
        transactionTime = try row.decode("transaction_time")
        receiptMediaID = try row.decode("receipt_media_id")
        recurringChargeID = try row.decode("recurring_charge_id")
        if let paid = try row.decode("paid_amount", as: Int32?.self), let currency = try row.decode("paid_currency", as: String?.self),
            let rate = try row.decode("exchange_rate", as: String?.self)
        {
            conversion = Conversion(paidAmount: Int64(paid), paidCurrency: currency, rate: rate)
        }
        splitInput = try row.decode("split_input", as: PostgresJSON?.self)?.decode(SplitMethod.self)
        createdAt = try row.decode("created_at")
        updatedAt = try row.decode("updated_at")
        self.payers = payers.isEmpty ? [Payer(userID: paidBy, amount: totalAmount)] : payers
        self.splits = splits
    }
}

/// What a transaction records (spec: transaction_type).
package enum TransactionType: String, DatabaseEnum {
    /// `income` (migrations/0056): money `paidBy` received for the group (a refund, a sale), which
    /// they owe to those it is shared among; Settle Up's negative expense.
    case expense, settlement, dues, income
}

/// What an expense was for (spec: expense_category).
/// Everyday ones (One By Two's ten: food, transport, groceries, rent, entertainment, utilities,
/// shopping, health, travel, other) and the team's (equipment, dues); migration 0054.
package enum ExpenseCategory: String, DatabaseEnum {
    case equipment, food, travel, dues, other, transport, groceries, rent, entertainment, utilities, shopping, health
}

/// Which expenses a list shows; nil leaves a filter out.
package struct ExpenseFilter: Sendable {
    /// Paid by this member, or with a split of theirs.
    package var member: UserID?
    package var category: ExpenseCategory?
    /// One of the community's own categories.
    package var categoryID: CustomCategoryID?
    /// `transaction_date` from (inclusive) …
    package var from: CivilDate?
    /// … to (inclusive).
    package var to: CivilDate?

    package init(
        member: UserID? = nil, category: ExpenseCategory? = nil, categoryID: CustomCategoryID? = nil, from: CivilDate? = nil, to: CivilDate? = nil
    ) {
        self.member = member
        self.category = category
        self.categoryID = categoryID
        self.from = from
        self.to = to
    }
}
