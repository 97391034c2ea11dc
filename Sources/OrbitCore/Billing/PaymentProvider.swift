package import Foundation

/// A hosted payment page the provider makes for us (Stripe Checkout): a subscription for a
/// community, or a one-off payment of dues. What the payer does there comes back as a signed
/// event (`BillingService.applyStripe`), never as this call's answer.
package struct CheckoutRequest: Sendable, Equatable {
    package enum Mode: Sendable, Equatable {
        /// A subscription to the provider's price `price`.
        case subscription(price: String)
        /// A one-off payment of `amount`, shown as `name`.
        case payment(amount: Money, name: String)
    }

    package var mode: Mode
    /// Where the payer lands after paying, and after giving up.
    package var successURL: String
    package var cancelURL: String
    /// What the completed session names back (`client_reference_id`): the community, or the dues.
    package var clientReferenceID: String
    /// Copied onto the session and onto what it creates (the subscription, the PaymentIntent),
    /// so that each later event names what it is for.
    package var metadata: [String: String]
    /// The provider's customer the community already has, so that its subscriptions stay together.
    package var customer: String?
    /// The same key for the same intent: the provider answers a retry with the session it made
    /// the first time instead of making a second.
    package var idempotencyKey: String

    package init(
        mode: Mode, successURL: String, cancelURL: String, clientReferenceID: String, metadata: [String: String], customer: String? = nil,
        idempotencyKey: String
    ) {
        self.mode = mode
        self.successURL = successURL
        self.cancelURL = cancelURL
        self.clientReferenceID = clientReferenceID
        self.metadata = metadata
        self.customer = customer
        self.idempotencyKey = idempotencyKey
    }
}

/// The hosted page the payer is sent to.
package struct CheckoutSession: Sendable, Codable, Equatable {
    /// The provider's id (`cs_…`).
    package var id: String
    package var url: String
    package var expiresAt: Date?

    package init(id: String, url: String, expiresAt: Date?) {
        self.id = id
        self.url = url
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case id, url, expiresAt = "expires_at"
    }
}

/// Makes checkout sessions: Stripe's API in production (OrbitStripe), a local server that checks
/// what Stripe checks in the tests. Called outside any database transaction: a slow provider
/// holds no connection and no lock.
package protocol PaymentProvider: Sendable {
    func createCheckoutSession(_ request: CheckoutRequest) async throws -> CheckoutSession
    /// Refuses an amount the provider cannot charge exactly in its own units (Stripe's:
    /// `StripeUnits`), before anything is asked of it.
    /// - Throws: `ServiceError.conflict` naming the currency and the amount.
    func requireChargeable(_ amount: Money) throws
    /// Gives back all of a payment (Stripe's PaymentIntent) taken for what the rules refused to
    /// record: the same key asks once, however often it is sent.
    func refund(payment: String, idempotencyKey: String) async throws
}

/// The provider refused the request or could not be reached: nothing was created.
package struct PaymentProviderError: Error, Sendable, CustomStringConvertible {
    /// The provider's HTTP status, nil when no answer came.
    package var status: Int?
    package var message: String
    /// The provider's code for a refusal (Stripe's `error.code`, such as `amount_too_small`).
    package var code: String?

    package init(status: Int?, message: String, code: String? = nil) {
        self.status = status
        self.message = message
        self.code = code
    }

    package var description: String { message }
}

/// Where a checkout sends the payer back to (`--stripe-return-url`).
package struct CheckoutSettings: Sendable, Equatable {
    /// The app's page the payer returns to (a universal link); `checkout=success|cancel`, what
    /// was paid for and, on success, the session's id are added to its query.
    package var returnURL: String

    package init(returnURL: String) {
        self.returnURL = returnURL
    }

    /// `returnURL` with `checkout=<outcome>` (and Stripe's placeholder for the session's id on
    /// success) added to its query.
    func returnURL(_ outcome: String, for kind: String, id: String) -> String {
        let separator = returnURL.contains("?") ? "&" : "?"
        let session = outcome == "success" ? "&session_id={CHECKOUT_SESSION_ID}" : ""
        return "\(returnURL)\(separator)checkout=\(outcome)&\(kind)=\(id)\(session)"
    }
}
