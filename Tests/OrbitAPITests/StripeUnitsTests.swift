import Foundation
import OrbitAPI
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Stripe's units are not ISO 4217's (docs/money.md, "Stripe's units"): what a checkout asks
/// Stripe to charge and what a webhook says Stripe took go through one table, `StripeUnits`.
@Suite("Stripe's units, both ways")
struct StripeUnitsTests {
    /// Dues of `owed` in `currency`, and what Stripe must be asked for (nil: Stripe cannot charge
    /// that amount exactly).
    struct Case: Sendable, CustomTestStringConvertible {
        var currency: String
        var owed: String
        var stripe: Int?
        var testDescription: String { "\(owed) \(currency)" }

        init(_ currency: String, _ owed: String, _ stripe: Int?) {
            self.currency = currency
            self.owed = owed
            self.stripe = stripe
        }
    }

    static let cases: [Case] = [
        // Two decimals, as ISO.
        Case("USD", "25", 2500),
        // Zero-decimal, and none in ISO either.
        Case("JPY", "5000", 5000),
        Case("XOF", "1500", 1500),
        // Zero-decimal at Stripe, two decimals in ISO: whole ariary only.
        Case("MGA", "100", 100),
        Case("MGA", "100.50", nil),
        // Three decimals, the last one 0.
        Case("KWD", "5.12", 5120),
        Case("KWD", "5.124", nil),
        Case("BHD", "1.5", 1500),
        // The special cases: ISK is two-decimal at Stripe (whole krónur), zero in ISO; HUF and
        // TWD are charged in two decimals; UGX is zero-decimal in both.
        Case("ISK", "5000", 500_000),
        Case("HUF", "1000.50", 100_050),
        Case("TWD", "300", 30_000),
        Case("UGX", "5000", 5000),
    ]

    static func dues(_ harness: APIHarness, _ cast: APICast, _ test: Case) async throws -> Dues {
        let amount = try Money(parsing: test.owed, currency: try Currency.parse(test.currency))
        return try await harness.services.dues.create(
            in: cast.community, name: "Season fee", amount: amount, dueDate: try day("2030-01-01"), as: cast.admin)
    }

    @Test("a dues checkout asks Stripe for what is owed in Stripe's units, or answers 409 naming it and asks nothing", arguments: cases)
    func checkout(_ test: Case) async throws {
        try await withStripe { harness, stripe in
            let cast = try await APICast.make(harness)
            let dues = try await Self.dues(harness, cast, test)
            let answer = try await harness.request(.post, "/dues/\(dues.id)/checkout", token: cast.memberToken)
            if let expected = test.stripe {
                #expect(answer.status == 200, "\(answer.text)")
                let received = try #require(stripe.received.last)
                #expect(received.status == 200, "\(received.error ?? "")")
                #expect(received.form["line_items[0][price_data][currency]"] == test.currency.lowercased())
                #expect(received.form["line_items[0][price_data][unit_amount]"] == String(expected))
            } else {
                #expect(answer.status == 409, "\(answer.text)")
                let owed = try Money(parsing: test.owed, currency: try Currency.parse(test.currency))
                #expect(answer.text.contains(owed.description), "\(answer.text)")
                #expect(stripe.received.isEmpty)
            }
        }
    }

    /// A paid Checkout Session (payment mode) of `amount` in Stripe's units.
    static func paid(_ event: String, dues: DuesID, user: UserID, amount: Int, currency: String, intent: String, created: Date) throws -> Data {
        try DuesPaidOnlineTests.paid(event, dues: dues, user: user, amount: amount, intent: intent, currency: currency, created: created)
    }

    static func refunded(_ event: String, intent: String, amount: Int, refunded: Int, currency: String, created: Date) throws -> Data {
        try StripeWebhookTests.event(
            event, "charge.refunded", created: Int(created.timeIntervalSince1970),
            object: [
                "id": "ch_\(intent)", "object": "charge", "payment_intent": intent, "amount": amount, "amount_refunded": refunded,
                "refunded": refunded == amount, "currency": currency, "metadata": [:],
            ])
    }

    @Test(
        "Stripe's amount for the whole dues pays them in full, recorded in ISO units; a refund of half gives back half",
        arguments: cases.filter { $0.stripe != nil })
    func webhook(_ test: Case) async throws {
        let stripeAmount = try #require(test.stripe)
        try await withAPI(configure: DuesPaidOnlineTests.configured) { harness in
            let cast = try await APICast.make(harness)
            let dues = try await Self.dues(harness, cast, test)
            let now = harness.services.now()
            let code = test.currency.lowercased()
            let paid = try await DuesPaidOnlineTests.deliver(
                harness,
                try Self.paid("evt_paid", dues: dues.id, user: cast.member, amount: stripeAmount, currency: code, intent: "pi_u", created: now))
            #expect(try paid.string("outcome") == "applied", "\(paid.text)")
            let line = try #require(try await harness.services.dues.report(dues.id, as: cast.admin).first { $0.userID == cast.member })
            #expect(line.status == .paid)
            #expect(line.outstanding == 0)
            #expect(line.amountPaid == Int64(dues.amount))

            // Half of it back, in Stripe's units: half of the ISO amount is paid (each class's
            // half is a whole amount in both).
            let half = stripeAmount / 2
            let refund = try await DuesPaidOnlineTests.deliver(
                harness,
                try Self.refunded(
                    "evt_half", intent: "pi_u", amount: stripeAmount, refunded: half, currency: code, created: now.addingTimeInterval(1)))
            #expect(try refund.string("outcome") == "applied", "\(refund.text)")
            let after = try #require(try await harness.services.dues.report(dues.id, as: cast.admin).first { $0.userID == cast.member })
            let expectedLeft = try #require(StripeUnits.money(stripeAmount: Int64(stripeAmount - half), currency: code)).minorUnits
            #expect(after.amountPaid == expectedLeft)
        }
    }

    @Test("Stripe's 5000 in ISK is 50 kr: dues of 5000 kr are not paid by it (issue 52)")
    func iceland() async throws {
        try await withAPI(configure: DuesPaidOnlineTests.configured) { harness in
            let cast = try await APICast.make(harness)
            let dues = try await Self.dues(harness, cast, Case("ISK", "5000", 500_000))
            let answer = try await DuesPaidOnlineTests.deliver(
                harness,
                try Self.paid(
                    "evt_isk", dues: dues.id, user: cast.member, amount: 5000, currency: "isk", intent: "pi_isk", created: harness.services.now()))
            #expect(try answer.string("outcome") == "applied")
            let line = try #require(try await harness.services.dues.report(dues.id, as: cast.admin).first { $0.userID == cast.member })
            #expect(line.amountPaid == 50)
            #expect(line.status == .partial)
            // An amount that is no whole króna is not believed, and is given back.
            let fraction = try await DuesPaidOnlineTests.deliver(
                harness,
                try Self.paid(
                    "evt_isk_f", dues: dues.id, user: cast.member, amount: 5050, currency: "isk", intent: "pi_isk_f", created: harness.services.now())
            )
            #expect(try fraction.string("outcome") == "refused", "\(fraction.text)")
        }
    }

    @Test(
        "a subscription's payment reaches the audit log in ISO units",
        arguments: [
            ("usd", 999, "9.99 USD"), ("jpy", 980, "980 JPY"), ("mga", 2000, "2000.00 MGA"), ("kwd", 5120, "5.120 KWD"),
            ("isk", 500_000, "5000 ISK"), ("huf", 100_050, "1000.50 HUF"),
        ])
    func subscription(currency: String, amount: Int, expected: String) async throws {
        try await withAPI(configure: DuesPaidOnlineTests.configured) { harness in
            let cast = try await APICast.make(harness)
            let now = Int(harness.services.now().timeIntervalSince1970)
            let body = try StripeWebhookTests.event(
                "evt_invoice", "invoice.paid", created: now,
                object: [
                    "id": "in_1", "object": "invoice", "customer": "cus_1", "amount_paid": amount, "currency": currency,
                    "parent": [
                        "type": "subscription_details",
                        "subscription_details": ["subscription": "sub_1", "metadata": ["community_id": cast.community.description]],
                    ],
                    "lines": ["data": [["period": ["start": now, "end": now + 86_400 * 30]]]],
                ])
            let answer = try await DuesPaidOnlineTests.deliver(harness, body)
            #expect(try answer.string("outcome") == "applied", "\(answer.text)")
            let entries = try await harness.services.communities.auditLog(cast.community, as: cast.admin).items
            let changed = try #require(entries.first { $0.action == "subscription.changed" })
            let metadata = try #require(try JSONSerialization.jsonObject(with: Data(changed.metadata.utf8)) as? [String: String])
            #expect(metadata["amount_paid"] == expected)
            #expect(metadata["source"] == "stripe")
            #expect(metadata["event_id"] == "evt_invoice")
            #expect(metadata["from"] == "free")
            #expect(metadata["to"] == "active")
            #expect(changed.userID == cast.admin)
        }
    }
}
