package import Foundation

/// A Stripe event as the webhook delivers it, with the fields of its object that billing reads
/// (docs/money.md, "Subscriptions"). Stripe's API versions moved some of them (a subscription's
/// period end onto its items, an invoice's subscription under `parent`): both places are read.
package struct StripeEvent: Sendable, Equatable {
    package var id: String
    package var type: String
    /// Stripe's time of the event: what orders the events of one subscription.
    package var created: Date
    package var object: Object

    package struct Object: Sendable, Equatable {
        /// The object's own id (`sub_…` for a subscription, `cs_…` for a Checkout Session).
        package var id: String?
        /// `subscription`, `checkout.session`, `invoice`.
        package var kind: String?
        package var status: String?
        package var customer: String?
        /// The subscription a Checkout Session or an invoice belongs to.
        package var subscription: String?
        package var clientReferenceID: String?
        /// A Checkout Session's `mode`: `subscription` or `payment`.
        package var mode: String?
        package var paymentStatus: String?
        package var metadata: [String: String]
        /// A subscription's `current_period_end`, an invoice's line's `period.end`.
        package var periodEnd: Date?
        /// When a subscription ended (`ended_at`).
        package var endedAt: Date?
        /// The PaymentIntent of a Checkout Session in `payment` mode, or of a charge.
        package var paymentIntent: String?
        /// What a Checkout Session took (`amount_total`) or a charge was for (`amount`), in the
        /// currency's smallest unit.
        package var amount: Int64?
        /// How much of a charge has been refunded so far (`amount_refunded`).
        package var amountRefunded: Int64?
        /// What an invoice took (`amount_paid`).
        package var amountPaid: Int64?
        /// ISO 4217, upper case (Stripe writes it in lower case).
        package var currency: String?

        package init(
            id: String? = nil, kind: String? = nil, status: String? = nil, customer: String? = nil, subscription: String? = nil,
            clientReferenceID: String? = nil, mode: String? = nil, paymentStatus: String? = nil, metadata: [String: String] = [:],
            periodEnd: Date? = nil, endedAt: Date? = nil, paymentIntent: String? = nil, amount: Int64? = nil, amountRefunded: Int64? = nil,
            amountPaid: Int64? = nil, currency: String? = nil
        ) {
            self.id = id
            self.kind = kind
            self.status = status
            self.customer = customer
            self.subscription = subscription
            self.clientReferenceID = clientReferenceID
            self.mode = mode
            self.paymentStatus = paymentStatus
            self.metadata = metadata
            self.periodEnd = periodEnd
            self.endedAt = endedAt
            self.paymentIntent = paymentIntent
            self.amount = amount
            self.amountRefunded = amountRefunded
            self.amountPaid = amountPaid
            self.currency = currency
        }
    }

    package enum ParseError: Error, Equatable, CustomStringConvertible {
        case notAnEvent(String)

        package var description: String {
            switch self {
            case .notAnEvent(let reason): "The body is not a Stripe event: \(reason)."
            }
        }
    }

    package init(id: String, type: String, created: Date, object: Object) {
        self.id = id
        self.type = type
        self.created = created
        self.object = object
    }

    /// Parses a delivered body (checked first: `StripeSignature`).
    package init(json: [UInt8]) throws {
        let root: [String: Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any] else {
                throw ParseError.notAnEvent("not a JSON object")
            }
            root = parsed
        } catch let error as ParseError {
            throw error
        } catch {
            throw ParseError.notAnEvent("not JSON")
        }
        guard root["object"] as? String == "event" else { throw ParseError.notAnEvent("object is not \"event\"") }
        guard let id = root["id"] as? String, (1...255).contains(id.utf8.count) else { throw ParseError.notAnEvent("no id") }
        guard let type = root["type"] as? String, (1...255).contains(type.utf8.count) else { throw ParseError.notAnEvent("no type") }
        guard let created = Self.seconds(root["created"]) else { throw ParseError.notAnEvent("no created") }
        guard let data = root["data"] as? [String: Any], let object = data["object"] as? [String: Any] else {
            throw ParseError.notAnEvent("no data.object")
        }
        self.init(id: id, type: type, created: created, object: Self.object(object))
    }

    private static func object(_ json: [String: Any]) -> Object {
        let parent = (json["parent"] as? [String: Any])?["subscription_details"] as? [String: Any]
        var metadata = strings(json["metadata"])
        // An invoice carries its subscription's metadata under parent (API 2025-03 and later).
        for (key, value) in strings(parent?["metadata"]) where metadata[key] == nil { metadata[key] = value }
        let firstItem = ((json["items"] as? [String: Any])?["data"] as? [[String: Any]])?.first
        let firstLine = ((json["lines"] as? [String: Any])?["data"] as? [[String: Any]])?.first
        let periodEnd =
            seconds(json["current_period_end"]) ?? seconds(firstItem?["current_period_end"])
            ?? seconds((firstLine?["period"] as? [String: Any])?["end"])
        return Object(
            id: json["id"] as? String, kind: json["object"] as? String, status: json["status"] as? String,
            customer: reference(json["customer"]), subscription: reference(json["subscription"]) ?? reference(parent?["subscription"]),
            clientReferenceID: json["client_reference_id"] as? String, mode: json["mode"] as? String,
            paymentStatus: json["payment_status"] as? String, metadata: metadata, periodEnd: periodEnd,
            endedAt: seconds(json["ended_at"]), paymentIntent: reference(json["payment_intent"]),
            amount: integer(json["amount_total"]) ?? integer(json["amount"]), amountRefunded: integer(json["amount_refunded"]),
            amountPaid: integer(json["amount_paid"]), currency: (json["currency"] as? String)?.uppercased())
    }

    /// A whole number of minor units, as Stripe writes amounts.
    private static func integer(_ value: Any?) -> Int64? {
        guard let number = value as? NSNumber else { return nil }
        let double = number.doubleValue
        guard double.isFinite, double == double.rounded(), abs(double) < 1e15 else { return nil }
        return Int64(double)
    }

    /// An id, or an expanded object's id.
    private static func reference(_ value: Any?) -> String? {
        if let id = value as? String { return id }
        return (value as? [String: Any])?["id"] as? String
    }

    private static func strings(_ value: Any?) -> [String: String] {
        (value as? [String: Any] ?? [:]).compactMapValues { $0 as? String }
    }

    private static func seconds(_ value: Any?) -> Date? {
        guard let number = value as? NSNumber else { return nil }
        let seconds = number.doubleValue
        guard seconds.isFinite, seconds > 0, seconds < 32_503_680_000 else { return nil }
        return Date(timeIntervalSince1970: seconds.rounded(.down))
    }
}
