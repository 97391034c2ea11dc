package import Foundation

/// A balance (positive = is owed), in minor units.
package struct Balance: Sendable, Codable, Equatable {
    package var userID: UserID
    package var currency: String
    package var balance: Int64

    enum CodingKeys: String, CodingKey { case userID = "user_id", currency, balance }
}

/// What one person owes another in one currency, from the ledger's lines between the two of them
/// before any simplification: `from` owes `to` `amount` (positive, minor units). A person's debts
/// and credits over all their pairs add up to their balance.
package struct PairDebt: Sendable, Codable, Equatable {
    package var from: UserID
    package var to: UserID
    package var amount: Int64
    package var currency: String

    package init(from: UserID, to: UserID, amount: Int64, currency: String) {
        self.from = from
        self.to = to
        self.amount = amount
        self.currency = currency
    }

    enum CodingKeys: String, CodingKey { case from = "from_user_id", to = "to_user_id", amount, currency }
}

/// An amount in one currency, in minor units: a person's balance (positive = is owed) or where
/// they stand with someone.
package struct CurrencyBalance: Sendable, Codable, Equatable {
    package var currency: String
    package var balance: Int64

    package init(currency: String, balance: Int64) {
        self.currency = currency
        self.balance = balance
    }
}

/// Where the actor stands with one other member (`GET …/balances/with/{member}`): the figure per
/// currency, and the expenses and settlements behind it, newest first.
package struct PairStatement: Sendable, Codable, Equatable {
    /// One currency's figure: positive = the member owes the actor, negative = the actor owes them.
    package typealias Figure = CurrencyBalance

    /// One transaction's share of the figure, signed as the figure is.
    package struct Entry: Sendable, Codable, Equatable {
        package var transactionID: TransactionID
        package var type: TransactionType
        package var description: String
        package var transactionDate: CivilDate
        package var currency: String
        package var amount: Int64

        enum CodingKeys: String, CodingKey {
            case transactionID = "transaction_id", type, description, transactionDate = "transaction_date", currency, amount
        }
    }

    package var memberID: UserID
    /// Only the currencies whose lines do not cancel out.
    package var balances: [Figure]
    /// The unsettled lines between the two, one per transaction; a page.
    package var entries: [Entry]
    package var nextCursor: String?

    enum CodingKeys: String, CodingKey { case memberID = "member_id", balances, entries, nextCursor = "next_cursor" }
}
