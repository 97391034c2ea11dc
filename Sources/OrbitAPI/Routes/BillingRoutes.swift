import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OrbitCore

extension OrbitAPI {
    /// The payment providers' webhooks (docs/money.md, "Subscriptions"), on `open`: the caller is
    /// the provider, whose signature over the raw body is its credential, checked before the body
    /// is parsed.
    func addBillingRoutes(open router: RouterGroup<APIContext>, signedIn app: RouterGroup<APIContext>) {
        router.post("webhooks/app-store") { request, context in
            let receipt = try await appStoreNotification(request, context: context)
            context.logger.info(
                "app store notification",
                metadata: ["notification": "\(receipt.eventID)", "type": "\(receipt.type)", "outcome": "\(receipt.outcome.rawValue)"])
            return JSON(receipt)
        }
        // The token an App Store purchase of the community's subscription carries (its creator).
        app.post("communities/:community_id/subscription/app-store-token") { _, context in
            guard configuration.appStore != nil else {
                throw APIProblem.notConfigured("App Store notifications (--app-store-root-cert-file and --app-store-bundle-id)")
            }
            return JSON(
                AppStoreToken(
                    appAccountToken: try await services.billing.appStoreToken(
                        for: try context.id("community_id"), as: try context.requireUser())))
        }
        // A Stripe Checkout for the community's subscription (its creator): the URL to open.
        app.post("communities/:community_id/subscription/checkout") { _, context in
            let (provider, settings) = try paymentProvider()
            guard let price = configuration.subscriptionPrice else {
                throw APIProblem.notConfigured("the subscription's Stripe price (--stripe-price or ORBIT_STRIPE_PRICE)")
            }
            return JSON(
                try await services.billing.subscriptionCheckout(
                    for: try context.id("community_id"), price: price, as: try context.requireUser(), provider: provider, settings: settings))
        }
        router.post("webhooks/stripe") { request, context in
            // The header first: a request without a signature Stripe could have made (none, or
            // one outside its 5 minutes) is refused before a byte of its body is read, and before
            // anything is said of this server's settings.
            do {
                try StripeSignature.precheck(header: request.headers[Self.stripeSignature], now: services.now())
            } catch {
                throw APIProblem("invalid-signature", title: "Invalid signature", status: .badRequest, detail: "\(error)")
            }
            guard !configuration.stripeWebhookSecrets.isEmpty else {
                throw APIProblem.notConfigured("a Stripe webhook secret (--stripe-webhook-secret-file or ORBIT_STRIPE_WEBHOOK_SECRET_FILE)")
            }
            var request = request
            // Stripe's events are a few kilobytes; a megabyte is far beyond any of them.
            let body = Array(buffer: try await request.collectBody(upTo: 1 << 20))
            do {
                try StripeSignature.verify(
                    payload: body, header: request.headers[Self.stripeSignature], secrets: configuration.stripeWebhookSecrets,
                    now: services.now())
            } catch {
                throw APIProblem("invalid-signature", title: "Invalid signature", status: .badRequest, detail: "\(error)")
            }
            let event: StripeEvent
            do {
                event = try StripeEvent(json: body)
            } catch {
                throw APIProblem.validation(field: nil, "\(error)")
            }
            let receipt = try await services.billing.applyStripe(event)
            if let payment = receipt.refund {
                try await giveBack(payment, receipt: receipt, logger: context.logger)
            }
            context.logger.info(
                "stripe event", metadata: ["event_id": "\(receipt.eventID)", "type": "\(receipt.type)", "outcome": "\(receipt.outcome.rawValue)"])
            return JSON(receipt)
        }
    }

    static let stripeSignature = HTTPField.Name("Stripe-Signature")!

    /// App Store Server Notifications V2: `{"signedPayload": JWS}`, the JWS's chain and
    /// signature checked (and the transaction's JWS inside it) before anything of it is read,
    /// then the app's bundle id.
    func appStoreNotification(_ request: Request, context: APIContext) async throws -> BillingReceipt {
        guard let verifier = configuration.appStore else {
            throw APIProblem.notConfigured(
                "Apple's root certificate and the app's bundle id (--app-store-root-cert-file and --app-store-bundle-id, or ORBIT_APP_STORE_ROOT_CERT_FILE and ORBIT_APP_STORE_BUNDLE_ID)"
            )
        }
        struct Body: Decodable { var signedPayload: String }
        // Apple's notifications are a few kilobytes: a larger body is not read, let alone
        // verified (the certificate work one anonymous request can cause is bounded here, by the
        // chain's shape in AppStoreSignature, and by the per-address limit).
        var request = request
        let raw = try await request.collectBody(upTo: AppStoreSignature.maximumBody)
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: Data(buffer: raw))
        } catch {
            throw APIProblem.validation(field: "signedPayload", "The body is not {\"signedPayload\": \"…\"}.")
        }
        let notification: AppStoreNotification
        do {
            let payload = try await verifier.verify(body.signedPayload)
            var transaction: Data?
            if let signed = AppStoreNotification.signedTransaction(in: payload) { transaction = try await verifier.verify(signed) }
            notification = try AppStoreNotification(payload: payload, transaction: transaction)
        } catch let failure as AppStoreSignature.Failure {
            throw APIProblem("invalid-signature", title: "Invalid signature", status: .badRequest, detail: failure.description)
        } catch let error as AppStoreNotification.ParseError {
            throw APIProblem.validation(field: "signed_payload", error.description)
        }
        guard notification.bundleID == verifier.bundleID else {
            throw APIProblem.validation(field: "signed_payload", "The notification is for the app \(notification.bundleID), not this server's.")
        }
        return try await services.billing.applyAppStore(
            notification, accepted: verifier.environments.contains(notification.environment ?? ""))
    }

    /// Refunds a payment the rules refused to record (a treasurer recorded one meanwhile), after
    /// the event's transaction: nothing is paid twice. If Stripe cannot do it now the webhook
    /// answers 503, Stripe delivers the event again, and its duplicate asks again (the same key:
    /// one refund). Without a secret key the operator is told to refund it in the Dashboard.
    func giveBack(_ payment: String, receipt: BillingReceipt, logger: Logger) async throws {
        guard let provider = configuration.payments else {
            logger.warning(
                "stripe payment refused and not refunded (no secret key): refund it in the Dashboard",
                metadata: ["event_id": "\(receipt.eventID)", "payment_intent": "\(payment)", "detail": "\(receipt.detail ?? "")"])
            return
        }
        do {
            try await provider.refund(payment: payment, idempotencyKey: "orbit-refund-\(payment)")
            logger.notice(
                "stripe payment refused and refunded", metadata: ["payment_intent": "\(payment)", "detail": "\(receipt.detail ?? "")"])
        } catch {
            logger.error("refunding a refused payment failed", metadata: ["payment_intent": "\(payment)", "error": "\(error)"])
            var problem = APIProblem(
                "unavailable", title: "Service unavailable", status: .serviceUnavailable,
                detail: "The refused payment could not be refunded yet; deliver the event again.")
            problem.retryAfter = 60
            throw problem
        }
    }

    /// What a checkout needs, or 501 naming what the operator has not set.
    func paymentProvider() throws -> (any PaymentProvider, CheckoutSettings) {
        guard let provider = configuration.payments else {
            throw APIProblem.notConfigured("a Stripe secret key (--stripe-secret-key-file or ORBIT_STRIPE_SECRET_KEY_FILE)")
        }
        guard let settings = configuration.checkout else {
            throw APIProblem.notConfigured("the app's page a checkout returns to (--stripe-return-url or --public-url)")
        }
        return (provider, settings)
    }
}

/// What an App Store purchase of a community's subscription carries as its `appAccountToken`.
struct AppStoreToken: Encodable {
    var appAccountToken: UUID

    enum CodingKeys: String, CodingKey {
        case appAccountToken = "app_account_token"
    }
}
