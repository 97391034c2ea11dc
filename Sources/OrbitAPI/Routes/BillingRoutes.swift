import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OrbitCore

extension OrbitAPI {
    /// The payment providers' webhooks (docs/money.md, "Subscriptions"), on `open`: the caller is
    /// the provider, whose signature over the raw body is its credential, checked before the body
    /// is parsed.
    func addBillingRoutes(open router: RouterGroup<APIContext>) {
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
            context.logger.info(
                "stripe event", metadata: ["event_id": "\(receipt.eventID)", "type": "\(receipt.type)", "outcome": "\(receipt.outcome.rawValue)"])
            return JSON(receipt)
        }
    }

    static let stripeSignature = HTTPField.Name("Stripe-Signature")!
}
