public import Foundation
import OrbitPostgres

public enum TransactionTag {}
public enum SplitTag {}
public enum DuesTag {}
public enum DuesPaymentTag {}
public typealias TransactionID = Identifier<TransactionTag>
public typealias SplitID = Identifier<SplitTag>
public typealias DuesID = Identifier<DuesTag>
public typealias DuesPaymentID = Identifier<DuesPaymentTag>

/// One person's part of a transaction (spec: Splits). Amounts are minor units.
public struct Split: Sendable, Codable, Equatable {
    public var id: SplitID
    public var userID: UserID
    public var amount: Int64
    public var isSettled: Bool
    public var settledAt: Date?
    public var settledVia: String?

    enum CodingKeys: String, CodingKey {
        case id, userID = "user_id", amount, isSettled = "is_settled", settledAt = "settled_at", settledVia = "settled_via"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(userID, forKey: .userID)
        try container.encode(amount, forKey: .amount)
        try container.encode(isSettled, forKey: .isSettled)
        try container.encode(settledAt, forKey: .settledAt)
        try container.encode(settledVia, forKey: .settledVia)
    }
}

/// An expense or a settlement (spec: Transactions) with its splits.
public struct Expense: Sendable, Codable, Equatable {
    public var id: TransactionID
    public var communityID: CommunityID
    public var createdBy: UserID
    public var type: String
    public var description: String
    public var totalAmount: Int64
    public var currency: String
    public var paidBy: UserID
    public var category: String
    public var receiptURL: String?
    public var linkedEventID: EventID?
    public var transactionDate: String
    public var createdAt: Date
    public var updatedAt: Date
    public var splits: [Split]

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", createdBy = "created_by", type, description, totalAmount = "total_amount", currency
        case paidBy = "paid_by", category, receiptURL = "receipt_url", linkedEventID = "linked_event_id", transactionDate = "transaction_date"
        case createdAt = "created_at", updatedAt = "updated_at", splits
    }

    static let columns = """
        id, community_id, created_by, type::text AS type, description, total_amount, currency, paid_by, category::text AS category,
        receipt_url, linked_event_id, transaction_date::text AS transaction_date, created_at, updated_at
        """

    init(row: PostgresRow, splits: [Split]) throws {
        id = try row.decode("id")
        communityID = try row.decode("community_id")
        createdBy = try row.decode("created_by")
        type = try row.decode("type")
        description = try row.decode("description")
        totalAmount = Int64(try row.decode("total_amount", as: Int32.self))
        currency = try row.decode("currency")
        paidBy = try row.decode("paid_by")
        category = try row.decode("category")
        receiptURL = try row.decode("receipt_url")
        linkedEventID = try row.decode("linked_event_id")
        transactionDate = try row.decode("transaction_date")
        createdAt = try row.decode("created_at")
        updatedAt = try row.decode("updated_at")
        self.splits = splits
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(communityID, forKey: .communityID)
        try container.encode(createdBy, forKey: .createdBy)
        try container.encode(type, forKey: .type)
        try container.encode(description, forKey: .description)
        try container.encode(totalAmount, forKey: .totalAmount)
        try container.encode(currency, forKey: .currency)
        try container.encode(paidBy, forKey: .paidBy)
        try container.encode(category, forKey: .category)
        try container.encode(receiptURL, forKey: .receiptURL)
        try container.encode(linkedEventID, forKey: .linkedEventID)
        try container.encode(transactionDate, forKey: .transactionDate)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(splits, forKey: .splits)
    }
}

/// A balance (positive = is owed), in minor units.
public struct Balance: Sendable, Codable, Equatable {
    public var userID: UserID
    public var currency: String
    public var balance: Int64

    enum CodingKeys: String, CodingKey { case userID = "user_id", currency, balance }
}

/// How an expense is to be split, as people type it: amounts and percentages as decimal text.
public enum SplitRequest: Sendable {
    case equal([UserID])
    case exact([UserID: String])
    case percent([UserID: String])
    case shares([UserID: Int64])
}

/// Dues a community collects (spec: Dues).
public struct Dues: Sendable, Codable, Equatable {
    public var id: DuesID
    public var communityID: CommunityID
    public var name: String
    public var amount: Int64
    public var currency: String
    public var dueDate: String
    public var isActive: Bool
    public var createdBy: UserID
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", name, amount, currency, dueDate = "due_date", isActive = "is_active", createdBy = "created_by"
        case createdAt = "created_at"
    }

    static let columns = "id, community_id, name, amount, currency, due_date::text AS due_date, is_active, created_by, created_at"

    init(row: PostgresRow) throws {
        let amount: Int32
        (id, communityID, name, amount, currency, dueDate, isActive, createdBy, createdAt) = try row.decode(
            (DuesID, CommunityID, String, Int32, String, String, Bool, UserID, Date).self
        )
        self.amount = Int64(amount)
    }
}

/// A recorded dues payment (spec: Dues Payments).
public struct DuesPayment: Sendable, Codable, Equatable {
    public var id: DuesPaymentID
    public var duesID: DuesID
    public var userID: UserID
    public var amountPaid: Int64
    public var currency: String
    public var paidAt: Date
    public var recordedBy: UserID
    public var paymentMethod: String?
    public var notes: String?

    enum CodingKeys: String, CodingKey {
        case id, duesID = "dues_id", userID = "user_id", amountPaid = "amount_paid", currency, paidAt = "paid_at", recordedBy = "recorded_by"
        case paymentMethod = "payment_method", notes
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(duesID, forKey: .duesID)
        try container.encode(userID, forKey: .userID)
        try container.encode(amountPaid, forKey: .amountPaid)
        try container.encode(currency, forKey: .currency)
        try container.encode(paidAt, forKey: .paidAt)
        try container.encode(recordedBy, forKey: .recordedBy)
        try container.encode(paymentMethod, forKey: .paymentMethod)
        try container.encode(notes, forKey: .notes)
    }
}

/// One line of a dues report.
public struct DuesStatus: Sendable, Codable, Equatable {
    public var userID: UserID
    public var amountDue: Int64
    public var amountPaid: Int64
    public var outstanding: Int64
    /// `paid`, `partial` or `unpaid`.
    public var status: String
    public var overdue: Bool
    public var currency: String

    enum CodingKeys: String, CodingKey {
        case userID = "user_id", amountDue = "amount_due", amountPaid = "amount_paid", outstanding, status, overdue, currency
    }
}
