package import Foundation
import OrbitPostgres

package enum DuesTag {}
package enum DuesPaymentTag {}
package typealias DuesID = Identifier<DuesTag>
package typealias DuesPaymentID = Identifier<DuesPaymentTag>

/// Dues a community collects (spec: Dues).
package struct Dues: Sendable, Codable, Equatable {
    package var id: DuesID
    package var communityID: CommunityID
    package var name: String
    package var amount: Int64
    package var currency: String
    package var dueDate: CivilDate
    package var isActive: Bool
    /// The recurring dues these are an occurrence of, or nil.
    package var recurringChargeID: RecurringChargeID?
    /// Dues per attendee: the event (or occurrence) whose attendees owe them, `amount` per head
    /// (`DuesService.chargeAttendees`); nil for dues every member owes.
    package var linkedEventID: EventID?
    package var createdBy: UserID
    package var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", name, amount, currency, dueDate = "due_date", isActive = "is_active"
        case recurringChargeID = "recurring_charge_id", linkedEventID = "linked_event_id", createdBy = "created_by", createdAt = "created_at"
    }

    static let columns = "id, community_id, name, amount, currency, due_date, is_active, recurring_charge_id, linked_event_id, created_by, created_at"

    init(row: PostgresRow) throws {
        let amount: Int32
        (id, communityID, name, amount, currency, dueDate, isActive, recurringChargeID, linkedEventID, createdBy, createdAt) = try row.decode(
            (DuesID, CommunityID, String, Int32, String, CivilDate, Bool, RecurringChargeID?, EventID?, UserID, Date).self
        )
        self.amount = Int64(amount)
    }
}

/// A recorded dues payment (spec: Dues Payments).
package struct DuesPayment: Sendable, Codable, Equatable {
    package var id: DuesPaymentID
    package var duesID: DuesID
    package var userID: UserID
    package var amountPaid: Int64
    package var currency: String
    package var paidAt: Date
    package var recordedBy: UserID
    package var paymentMethod: String?
    package var notes: String?
    /// The payment provider's id of a payment made online (Stripe's PaymentIntent, `pi_…`);
    /// nil for one a treasurer recorded.
    package var providerPaymentID: String?
    /// A payment made online that the payer's bank disputes: `open` (it still counts),
    /// `funds_withdrawn` or `lost` (taken off `amount_paid`, to 0 when all of it), `won` (back).
    package var disputeStatus: String?

    enum CodingKeys: String, CodingKey {
        case id, duesID = "dues_id", userID = "user_id", amountPaid = "amount_paid", currency, paidAt = "paid_at", recordedBy = "recorded_by"
        case paymentMethod = "payment_method", notes, providerPaymentID = "provider_payment_id", disputeStatus = "dispute_status"
    }

    static let columns = "id, dues_id, user_id, amount_paid, paid_at, recorded_by, payment_method, notes, provider_payment_id, dispute_status"

    /// - Parameter currency: the dues' currency (payments are in it).
    init(row: PostgresRow, currency: String) throws {
        let amount: Int32
        (id, duesID, userID, amount, paidAt, recordedBy, paymentMethod, notes, providerPaymentID, disputeStatus) = try row.decode(
            (DuesPaymentID, DuesID, UserID, Int32, Date, UserID, String?, String?, String?, String?).self)
        amountPaid = Int64(amount)
        self.currency = currency
    }
}

/// One line of a dues report.
package struct DuesStatus: Sendable, Codable, Equatable {
    /// How much of what they owe a member has paid.
    package enum State: String, DatabaseEnum {
        case paid, partial, unpaid
    }

    package var userID: UserID
    package var amountDue: Int64
    package var amountPaid: Int64
    package var outstanding: Int64
    package var status: State
    package var overdue: Bool
    package var currency: String
    /// The member's payment under dispute, if any: `open`, `funds_withdrawn`, `lost` or `won`
    /// (the most pressing of their payments').
    package var disputeStatus: String? = nil

    enum CodingKeys: String, CodingKey {
        case userID = "user_id", amountDue = "amount_due", amountPaid = "amount_paid", outstanding, status, overdue, currency
        case disputeStatus = "dispute_status"
    }
}
