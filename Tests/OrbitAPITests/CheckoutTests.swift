import Foundation
import OrbitAPI
import OrbitCore
import OrbitPostgres
import OrbitStripe
import OrbitTestSupport
import Testing

/// The API with Stripe's client pointed at a local server that checks requests as Stripe does.
func withStripe(
    secretKey: String = TestStripeAPI.secretKey,
    configure: @escaping @Sendable (inout APIConfiguration) -> Void = { _ in },
    _ body: @escaping @Sendable (APIHarness, TestStripeAPI) async throws -> Void
) async throws {
    try await TestStripeAPI.with { stripe in
        var settings = try StripeConfiguration(secretKey: secretKey)
        settings.apiURL = stripe.url
        settings.trustRootsPEM = [stripe.certificatePEM]
        settings.requestTimeout = .seconds(10)
        let client = try StripeClient(configuration: settings)
        do {
            try await withAPI(configure: { configuration in
                configuration.payments = client
                configuration.subscriptionPrice = TestStripeAPI.price
                configuration.checkout = CheckoutSettings(returnURL: "https://app.example.com/checkout")
                configuration.stripeWebhookSecrets = [StripeWebhookTests.secret]
                configure(&configuration)
            }) { harness in
                try await body(harness, stripe)
            }
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }
}

/// `POST /communities/{id}/subscription/checkout` and `POST /dues/{id}/checkout` (docs/money.md):
/// a Stripe Checkout Session made through Stripe's API, as a local server checks it.
@Suite("Checkout through Stripe's API")
struct CheckoutTests {
    @Test("the creator's subscription checkout: form-encoded, with the key and an Idempotency-Key; a retry gets the same session")
    func subscriptionCheckout() async throws {
        try await withStripe { harness, stripe in
            let cast = try await APICast.make(harness)
            let path = "/communities/\(cast.community)/subscription/checkout"
            let first = try await harness.request(.post, path, token: cast.adminToken)
            #expect(first.status == 200, "\(first.text)")
            #expect(try first.string("url") == "https://checkout.stripe.com/c/pay/cs_test_1")
            #expect(try first.string("id") == "cs_test_1")

            let received = try #require(stripe.received.first)
            #expect(received.status == 200, "\(received.error ?? "")")
            #expect(received.headers["authorization"] == "Bearer \(TestStripeAPI.secretKey)")
            #expect(received.headers["content-type"] == "application/x-www-form-urlencoded")
            let key = try #require(received.headers["idempotency-key"])
            #expect(key.contains(cast.community.description))
            #expect(received.form["mode"] == "subscription")
            #expect(received.form["line_items[0][price]"] == TestStripeAPI.price)
            #expect(received.form["client_reference_id"] == cast.community.description)
            #expect(received.form["metadata[community_id]"] == cast.community.description)
            #expect(received.form["subscription_data[metadata][community_id]"] == cast.community.description)
            #expect(received.form["success_url"]?.contains("checkout=success") == true)
            #expect(received.form["success_url"]?.contains("{CHECKOUT_SESSION_ID}") == true)
            #expect(received.form["cancel_url"]?.hasPrefix("https://app.example.com/checkout?checkout=cancel") == true)

            // Tapped twice: Stripe answers the same key with the same session.
            let again = try await harness.request(.post, path, token: cast.adminToken)
            #expect(try again.string("id") == "cs_test_1")
            #expect(stripe.sessions == 1)
            #expect(stripe.received.last?.headers["idempotency-key"] == key)

            // Only the creator; a stranger does not learn the community exists.
            let member = try await harness.request(.post, path, token: cast.memberToken)
            #expect(member.status == 403, "\(member.text)")
            let outsider = try await harness.request(.post, path, token: cast.outsiderToken)
            #expect(outsider.status == 404, "\(outsider.text)")

            // Paid: Stripe's event makes it active; a second checkout is refused.
            let now = harness.services.now()
            let completed = try StripeWebhookTests.event(
                "evt_sub_paid", "checkout.session.completed", created: Int(now.timeIntervalSince1970) - 1,
                object: [
                    "id": "cs_test_1", "object": "checkout.session", "mode": "subscription", "payment_status": "paid",
                    "client_reference_id": cast.community.description, "customer": "cus_9", "subscription": "sub_9", "metadata": [:],
                ])
            let delivered = try await StripeWebhookTests.deliver(harness, completed, at: now)
            #expect(try delivered.string("outcome") == "applied")
            let active = try await harness.request(.post, path, token: cast.adminToken)
            #expect(active.status == 409, "\(active.text)")
            #expect(stripe.sessions == 1)
        }
    }

    @Test("a community that has a Stripe customer keeps it in its next checkout")
    func customerKept() async throws {
        try await withStripe { harness, stripe in
            let cast = try await APICast.make(harness)
            try await harness.database.withConnection { connection in
                try await connection.query(
                    "UPDATE communities SET stripe_customer_id = 'cus_kept', subscription_status = 'canceled' WHERE id = \(cast.community)")
            }
            let answer = try await harness.request(.post, "/communities/\(cast.community)/subscription/checkout", token: cast.adminToken)
            #expect(answer.status == 200, "\(answer.text)")
            #expect(stripe.received.last?.form["customer"] == "cus_kept")
        }
    }

    @Test("without a secret key, a price or a return page the checkouts answer 501 naming what is missing")
    func notConfigured() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let dues = try await harness.services.dues.create(
                in: cast.community, name: "Season", amount: try dollars("25"), dueDate: try day("2030-01-01"), as: cast.admin)
            let subscription = try await harness.request(.post, "/communities/\(cast.community)/subscription/checkout", token: cast.adminToken)
            #expect(subscription.status == 501)
            #expect(try subscription.string("detail").contains("--stripe-secret-key-file"))
            let duesCheckout = try await harness.request(.post, "/dues/\(dues.id)/checkout", token: cast.memberToken)
            #expect(duesCheckout.status == 501)
            #expect(try duesCheckout.string("detail").contains("ORBIT_STRIPE_SECRET_KEY_FILE"))
        }
        try await withStripe(configure: { $0.subscriptionPrice = nil }) { harness, stripe in
            let cast = try await APICast.make(harness)
            let answer = try await harness.request(.post, "/communities/\(cast.community)/subscription/checkout", token: cast.adminToken)
            #expect(answer.status == 501)
            #expect(try answer.string("detail").contains("--stripe-price"))
            #expect(stripe.received.isEmpty)
        }
        try await withStripe(configure: { $0.checkout = nil }) { harness, stripe in
            let cast = try await APICast.make(harness)
            let answer = try await harness.request(.post, "/communities/\(cast.community)/subscription/checkout", token: cast.adminToken)
            #expect(answer.status == 501)
            #expect(try answer.string("detail").contains("--stripe-return-url"))
        }
    }

    @Test(
        "Stripe's failures: a 429 retried with the same key, a 5xx (which Stripe keeps for its key) with a new one; a refusal is a 502 and makes nothing"
    )
    func providerFailures() async throws {
        try await withStripe { harness, stripe in
            let cast = try await APICast.make(harness)
            let path = "/communities/\(cast.community)/subscription/checkout"
            stripe.script([429, 500])
            let retried = try await harness.request(.post, path, token: cast.adminToken)
            #expect(retried.status == 200, "\(retried.text)")
            #expect(stripe.received.map(\.status) == [429, 500, 200])
            let keys = stripe.received.compactMap { $0.headers["idempotency-key"] }
            #expect(keys.count == 3 && keys[0] == keys[1] && keys[1] != keys[2], "\(keys)")
            #expect(stripe.sessions == 1)

            stripe.script([500, 500, 500])
            let failed = try await harness.request(.post, "/communities/\(cast.otherCommunity)/subscription/checkout", token: cast.outsiderToken)
            #expect(failed.status == 502, "\(failed.text)")
            #expect(try failed.string("type").hasSuffix("/payment-provider"))
            #expect(stripe.sessions == 1)
        }
        try await withStripe(secretKey: "sk_test_not_known_to_stripe") { harness, stripe in
            let cast = try await APICast.make(harness)
            let answer = try await harness.request(.post, "/communities/\(cast.community)/subscription/checkout", token: cast.adminToken)
            #expect(answer.status == 502, "\(answer.text)")
            // A refusal is not retried.
            #expect(stripe.received.map(\.status) == [401])
        }
    }

    @Test(
        "a member's dues checkout is for what they still owe, named for the dues and the member; a remainder below Stripe's least charge is a 409"
    )
    func duesCheckout() async throws {
        try await withStripe { harness, stripe in
            let cast = try await APICast.make(harness)
            let dues = try await DuesPaidOnlineTests.seasonFee(harness, cast)
            let path = "/dues/\(dues.id)/checkout"
            let first = try await harness.request(.post, path, token: cast.memberToken)
            #expect(first.status == 200, "\(first.text)")
            let form = try #require(stripe.received.last?.form)
            #expect(form["mode"] == "payment")
            #expect(form["line_items[0][price_data][currency]"] == "usd")
            #expect(form["line_items[0][price_data][unit_amount]"] == "2500")
            #expect(form["line_items[0][price_data][product_data][name]"] == "Season fee")
            #expect(form["client_reference_id"] == dues.id.description)
            #expect(form["metadata[dues_id]"] == dues.id.description)
            #expect(form["metadata[user_id]"] == cast.member.description)
            #expect(form["payment_intent_data[metadata][user_id]"] == cast.member.description)

            // After a partial payment by hand: the rest, under a new key.
            _ = try await harness.services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("10"), as: cast.admin)
            let rest = try await harness.request(.post, path, token: cast.memberToken)
            #expect(rest.status == 200, "\(rest.text)")
            #expect(stripe.received.last?.form["line_items[0][price_data][unit_amount]"] == "1500")
            #expect(stripe.sessions == 2)

            // Paid online, refunded in full: what is owed is the same as before, but the checkout is
            // a new one (Stripe would answer the old, paid session for the old key).
            let paidOnline = try DuesPaidOnlineTests.paid(
                "evt_rest", dues: dues.id, user: cast.member, amount: 1500, intent: "pi_rest", created: harness.services.now())
            #expect(try await DuesPaidOnlineTests.deliver(harness, paidOnline).string("outcome") == "applied")
            let refunded = try DuesPaidOnlineTests.refunded(
                "evt_rest_refund", intent: "pi_rest", amount: 1500, refunded: 1500, created: harness.services.now())
            #expect(try await DuesPaidOnlineTests.deliver(harness, refunded).string("outcome") == "applied")
            let again = try await harness.request(.post, path, token: cast.memberToken)
            #expect(again.status == 200, "\(again.text)")
            #expect(stripe.received.last?.form["line_items[0][price_data][unit_amount]"] == "1500")
            #expect(stripe.sessions == 3)

            // A remainder below Stripe's least charge (USD 0.50): a 409 in Stripe's words, not a 502.
            _ = try await harness.services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("14.80"), as: cast.admin)
            let small = try await harness.request(.post, path, token: cast.memberToken)
            #expect(small.status == 409, "\(small.text)")
            #expect(try small.string("detail").contains("Stripe cannot charge this amount: Amount must be at least 50"), "\(small.text)")
            #expect(stripe.received.last?.error == "amount_too_small")
            #expect(stripe.sessions == 3)

            _ = try await harness.services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("0.20"), as: cast.admin)
            let paid = try await harness.request(.post, path, token: cast.memberToken)
            #expect(paid.status == 409, "\(paid.text)")
            let outsider = try await harness.request(.post, path, token: cast.outsiderToken)
            #expect(outsider.status == 404, "\(outsider.text)")
            _ = try await harness.services.dues.deactivate(dues.id, as: cast.admin)
            let closed = try await harness.request(.post, path, token: cast.adminToken)
            #expect(closed.status == 409, "\(closed.text)")
            #expect(stripe.sessions == 3)
        }
    }
}
