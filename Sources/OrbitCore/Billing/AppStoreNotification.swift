package import Foundation

/// An App Store Server Notification V2 (docs/money.md, "Subscriptions"), as its verified JWS
/// payloads say it: the notification's own fields and its subscription's transaction
/// (`signedTransactionInfo`, itself a JWS the adapter verified too).
package struct AppStoreNotification: Sendable, Equatable {
    /// `notificationUUID`: what the notification is applied once by.
    package var id: String
    /// `notificationType`: SUBSCRIBED, DID_RENEW, DID_FAIL_TO_RENEW, EXPIRED, REFUND, …
    package var type: String
    package var subtype: String?
    /// `signedDate`: what orders the notifications of one subscription.
    package var signedDate: Date
    package var bundleID: String
    /// `Production` or `Sandbox`.
    package var environment: String?
    package var transaction: Transaction?

    /// The fields of a JWSTransactionDecodedPayload billing reads.
    package struct Transaction: Sendable, Equatable {
        /// The subscription: the same through every renewal.
        package var originalTransactionID: String
        package var productID: String?
        package var expiresDate: Date?
        package var revocationDate: Date?
        /// The UUID the app set at purchase: the token the server issued for the community
        /// (`BillingService.appStoreToken`).
        package var appAccountToken: UUID?
    }

    package enum ParseError: Error, Equatable, CustomStringConvertible {
        case notANotification(String)

        package var description: String {
            switch self {
            case .notANotification(let reason): "The payload is not an App Store Server Notification V2: \(reason)."
            }
        }
    }

    /// The transaction's JWS in a verified payload (`data.signedTransactionInfo`), to verify in
    /// turn; nil when it has none.
    package static func signedTransaction(in payload: Data) -> String? {
        let root = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any]
        return (root?["data"] as? [String: Any])?["signedTransactionInfo"] as? String
    }

    /// The notification from its payload's JSON, and its transaction from the transaction JWS's
    /// payload (nil when the notification has none).
    package init(payload: Data, transaction: Data?) throws {
        guard let root = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any] else {
            throw ParseError.notANotification("not a JSON object")
        }
        guard let id = root["notificationUUID"] as? String, (1...255).contains(id.utf8.count) else {
            throw ParseError.notANotification("no notificationUUID")
        }
        guard let type = root["notificationType"] as? String, (1...100).contains(type.utf8.count) else {
            throw ParseError.notANotification("no notificationType")
        }
        guard let signed = Self.milliseconds(root["signedDate"]) else { throw ParseError.notANotification("no signedDate") }
        // `data` in most notifications; `summary` in a renewal extension's for many
        // subscribers, which names no transaction (and is ignored).
        let data = (root["data"] as? [String: Any]) ?? (root["summary"] as? [String: Any])
        guard let bundleID = data?["bundleId"] as? String else { throw ParseError.notANotification("no bundleId in data or summary") }
        self.id = id
        self.type = type
        subtype = root["subtype"] as? String
        signedDate = signed
        self.bundleID = bundleID
        environment = data?["environment"] as? String
        self.transaction = try transaction.map { try Self.transaction($0) }
    }

    private static func transaction(_ json: Data) throws -> Transaction {
        guard let root = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any],
            let original = root["originalTransactionId"] as? String, (1...255).contains(original.utf8.count)
        else { throw ParseError.notANotification("the transaction has no originalTransactionId") }
        return Transaction(
            originalTransactionID: original, productID: root["productId"] as? String, expiresDate: milliseconds(root["expiresDate"]),
            revocationDate: milliseconds(root["revocationDate"]), appAccountToken: (root["appAccountToken"] as? String).flatMap(UUID.init))
    }

    /// Apple's times: milliseconds since 1970.
    private static func milliseconds(_ value: Any?) -> Date? {
        guard let number = value as? NSNumber else { return nil }
        let seconds = number.doubleValue / 1000
        guard seconds.isFinite, seconds > 0, seconds < 32_503_680_000 else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }
}

extension BillingService {
    /// What an App Store notification means for its subscription: SUBSCRIBED and DID_RENEW
    /// active until the transaction's expiry; DID_FAIL_TO_RENEW past due (in a grace period or
    /// billing retry alike); EXPIRED canceled at the expiry; REFUND canceled at the revocation.
    /// Every other type changes nothing.
    static func change(of notification: AppStoreNotification) -> SubscriptionChange? {
        guard let transaction = notification.transaction else { return nil }
        let (status, expiry): (SubscriptionStatus, Date?)
        switch notification.type {
        case "SUBSCRIBED", "DID_RENEW": (status, expiry) = (.active, transaction.expiresDate)
        case "DID_FAIL_TO_RENEW": (status, expiry) = (.pastDue, nil)
        case "EXPIRED": (status, expiry) = (.canceled, transaction.expiresDate ?? notification.signedDate)
        case "REFUND": (status, expiry) = (.canceled, transaction.revocationDate ?? notification.signedDate)
        default: return nil
        }
        // The community comes from the token (`applyAppStore`), never from the purchase itself.
        return SubscriptionChange(
            subscription: transaction.originalTransactionID, community: nil, customer: nil, status: status, expiresAt: expiry)
    }

    /// Applies a verified App Store notification once, by its `notificationUUID`, in the order of
    /// `signedDate` per subscription (the original transaction), as `applyStripe` does. The
    /// community is the one whose creator was issued the purchase's `appAccountToken`
    /// (`appStoreToken`), later the one that has the subscription; a token of no community names
    /// nothing. A notification of an environment not `accepted` is recorded and ignored.
    package func applyAppStore(_ notification: AppStoreNotification, accepted: Bool = true) async throws -> BillingReceipt {
        try await runner.asOperator { connection in
            var change = Self.change(of: notification)
            let type = notification.subtype.map { "\(notification.type).\($0)" } ?? notification.type
            let received = Received(
                provider: .appStore, eventID: notification.id, type: type, created: notification.signedDate,
                subscription: notification.transaction?.originalTransactionID)
            guard let record = try await Self.record(received, on: connection) else {
                return try await Self.duplicate(received, on: connection)
            }
            guard accepted else {
                return try await Self.finish(
                    record, received, .ignored, community: nil,
                    detail: "a notification of the \(notification.environment ?? "unnamed") environment, which this server does not take",
                    on: connection)
            }
            let token = notification.transaction?.appAccountToken
            change?.community = try await connection.query(
                "SELECT community_id FROM billing_app_account_tokens WHERE token = \(token)"
            ).first?.decode("community_id", as: CommunityID.self)
            return try await Self.apply(change, received, record: record, on: connection)
        }
    }

    /// The `appAccountToken` the app sets on an App Store purchase of community `id`'s
    /// subscription (its creator only; the same token every time). Refused while the
    /// subscription is active.
    package func appStoreToken(for id: CommunityID, as actor: UserID) async throws -> UUID {
        try await requireSubscribable(id, by: actor)
        return try await runner.asOperator { connection in
            try await connection.query(
                """
                INSERT INTO billing_app_account_tokens (community_id, issued_to) VALUES (\(id), \(actor))
                ON CONFLICT (community_id) DO UPDATE SET issued_to = EXCLUDED.issued_to
                RETURNING token
                """
            ).single().decode("token", as: UUID.self)
        }
    }
}
