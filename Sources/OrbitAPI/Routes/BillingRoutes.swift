import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OrbitCore

extension OrbitAPI {
    /// The payment providers' webhooks (docs/money.md, "Subscriptions"), on `open`: the caller is
    /// the provider, whose signature over the raw body is its credential, checked before the body
    /// is parsed.
    func addBillingRoutes(open router: RouterGroup<APIContext>, signedIn app: RouterGroup<APIContext>) {
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
            if receipt.outcome == .refused {
                // Money was taken that the rules would not record: someone must refund it.
                context.logger.warning(
                    "stripe payment refused: refund it", metadata: ["event_id": "\(receipt.eventID)", "detail": "\(receipt.detail ?? "")"])
            }
            context.logger.info(
                "stripe event", metadata: ["event_id": "\(receipt.eventID)", "type": "\(receipt.type)", "outcome": "\(receipt.outcome.rawValue)"])
            return JSON(receipt)
        }
    }

    static let stripeSignature = HTTPField.Name("Stripe-Signature")!

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
