import Foundation
import OrbitAPI
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Dues paid online (docs/money.md, "Dues paid online"): Stripe's signed events record a member's
/// payment once, through the rule that refuses overpaying, and a refund reverses it; money's
/// history shows both.
@Suite("Dues paid online")
struct DuesPaidOnlineTests {
    static func configured(_ configuration: inout APIConfiguration) {
        configuration.stripeWebhookSecrets = [StripeWebhookTests.secret]
    }

    /// The dues most tests pay: "Season fee", 25.00 USD, set by the cast's admin.
    static func seasonFee(_ harness: APIHarness, _ cast: APICast) async throws -> Dues {
        try await harness.services.dues.create(
            in: cast.community, name: "Season fee", amount: try dollars("25"), dueDate: try day("2030-01-01"), as: cast.admin)
    }

    /// A paid Checkout Session in payment mode, as our checkout made it.
    static func paid(
        _ event: String, type: String = "checkout.session.completed", dues: DuesID, user: UserID, amount: Int, intent: String,
        currency: String = "usd", created: Date
    ) throws -> Data {
        try StripeWebhookTests.event(
            event, type, created: Int(created.timeIntervalSince1970),
            object: [
                "id": "cs_\(event)", "object": "checkout.session", "mode": "payment", "payment_status": "paid",
                "client_reference_id": dues.description, "payment_intent": intent, "amount_total": amount, "currency": currency,
                "metadata": ["dues_id": dues.description, "user_id": user.description],
            ])
    }

    static func refunded(_ event: String, intent: String, amount: Int, refunded: Int, created: Date) throws -> Data {
        try StripeWebhookTests.event(
            event, "charge.refunded", created: Int(created.timeIntervalSince1970),
            object: [
                "id": "ch_\(intent)", "object": "charge", "payment_intent": intent, "amount": amount, "amount_refunded": refunded,
                "refunded": refunded == amount, "currency": "usd", "metadata": [:],
            ])
    }

    static func deliver(_ harness: APIHarness, _ body: Data) async throws -> TestResponse {
        let answer = try await StripeWebhookTests.deliver(harness, body, at: harness.services.now())
        #expect(answer.status == 200, "\(answer.text)")
        return answer
    }

    static func payments(_ harness: APIHarness, _ dues: DuesID, token: String) async throws -> [[String: Any]] {
        try await harness.request(.get, "/dues/\(dues)/payments", token: token).items
    }

    @Test("a paid checkout records the payment once (method stripe, its PaymentIntent); refunds reverse it; the history shows both")
    func paidReplayedRefunded() async throws {
        try await withAPI(configure: Self.configured) { harness in
            let cast = try await APICast.make(harness)
            let dues = try await DuesPaidOnlineTests.seasonFee(harness, cast)
            let now = harness.services.now()
            let event = try Self.paid("evt_pay", dues: dues.id, user: cast.member, amount: 2500, intent: "pi_1", created: now)
            let first = try await Self.deliver(harness, event)
            #expect(try first.string("outcome") == "applied")
            #expect(try first.string("community_id") == cast.community.description)

            let recorded = try await Self.payments(harness, dues.id, token: cast.adminToken)
            #expect(recorded.count == 1)
            #expect(recorded.first?["payment_method"] as? String == "stripe")
            #expect(recorded.first?["provider_payment_id"] as? String == "pi_1")
            #expect(recorded.first?["amount_paid"] as? Int == 2500)
            #expect(recorded.first?["recorded_by"] as? String == cast.member.description)
            let report = try await harness.services.dues.report(dues.id, as: cast.admin)
            #expect(report.first(where: { $0.userID == cast.member })?.status == .paid)

            // Stripe delivers it again, and then its async twin for the same PaymentIntent.
            let again = try await Self.deliver(harness, event)
            #expect(try again.string("outcome") == "duplicate")
            let twin = try await Self.deliver(
                harness,
                try Self.paid(
                    "evt_pay_async", type: "checkout.session.async_payment_succeeded", dues: dues.id, user: cast.member, amount: 2500,
                    intent: "pi_1", created: now))
            #expect(try twin.string("outcome") == "duplicate")
            #expect(try await Self.payments(harness, dues.id, token: cast.adminToken).count == 1)

            // A partial refund leaves the rest; the full one removes the payment; an older
            // partial refund that arrives after it changes nothing.
            let partial = try await Self.deliver(
                harness, try Self.refunded("evt_refund_1", intent: "pi_1", amount: 2500, refunded: 1000, created: now.addingTimeInterval(5)))
            #expect(try partial.string("outcome") == "applied")
            #expect(try await Self.payments(harness, dues.id, token: cast.adminToken).first?["amount_paid"] as? Int == 1500)
            let full = try await Self.deliver(
                harness, try Self.refunded("evt_refund_2", intent: "pi_1", amount: 2500, refunded: 2500, created: now.addingTimeInterval(9)))
            #expect(try full.string("outcome") == "applied")
            #expect(try await Self.payments(harness, dues.id, token: cast.adminToken).isEmpty)
            let late = try await Self.deliver(
                harness, try Self.refunded("evt_refund_0", intent: "pi_1", amount: 2500, refunded: 500, created: now.addingTimeInterval(3)))
            #expect(try late.string("outcome") == "ignored")
            let owed = try await harness.services.dues.report(dues.id, as: cast.admin).first(where: { $0.userID == cast.member })
            #expect(owed?.outstanding == 2500)

            // Every member reads it in money's history: paid, then refunded twice.
            let history = try await harness.request(
                .get, "/communities/\(cast.community)/money-activity?dues_id=\(dues.id)", token: cast.memberToken
            ).items
            #expect(history.map { $0["action"] as? String } == ["refunded", "refunded", "paid", "created"])
            let paidAfter = (history[2]["after"] as? [String: Any])?["payers"] as? [[String: Any]]
            #expect(paidAfter?.first?["amount"] as? Int == 2500)
            let lastRefund = history[0]
            #expect(lastRefund["actor_id"] is NSNull)
            #expect(((lastRefund["before"] as? [String: Any])?["payers"] as? [[String: Any]])?.first?["amount"] as? Int == 1500)
            #expect(((lastRefund["after"] as? [String: Any])?["payers"] as? [[String: Any]])?.isEmpty == true)
        }
    }

    @Test("a payment beyond what is still owed, in another currency or by someone who owes nothing is refused, and said why")
    func refused() async throws {
        try await withAPI(configure: Self.configured) { harness in
            let cast = try await APICast.make(harness)
            let dues = try await DuesPaidOnlineTests.seasonFee(harness, cast)
            _ = try await harness.services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("20"), as: cast.admin)
            let now = harness.services.now()
            let over = try await Self.deliver(
                harness, try Self.paid("evt_over", dues: dues.id, user: cast.member, amount: 2500, intent: "pi_over", created: now))
            #expect(try over.string("outcome") == "refused")
            #expect(try over.string("detail").contains("more than the"))
            let euros = try await Self.deliver(
                harness,
                try Self.paid("evt_eur", dues: dues.id, user: cast.member, amount: 500, intent: "pi_eur", currency: "eur", created: now))
            #expect(try euros.string("outcome") == "refused")
            #expect(try euros.string("detail").contains("EUR"))
            let stranger = try await Self.deliver(
                harness, try Self.paid("evt_stranger", dues: dues.id, user: cast.outsider, amount: 500, intent: "pi_x", created: now))
            #expect(try stranger.string("outcome") == "refused")
            #expect(try await Self.payments(harness, dues.id, token: cast.adminToken).count == 1)

            // The rest is recorded.
            let rest = try await Self.deliver(
                harness, try Self.paid("evt_rest", dues: dues.id, user: cast.member, amount: 500, intent: "pi_rest", created: now))
            #expect(try rest.string("outcome") == "applied")
            let states = try await harness.database.withConnection { connection in
                try await connection.query("SELECT event_id, outcome, detail FROM billing_events ORDER BY received_at, event_id")
                    .map { try $0.decode((String, String, String?).self) }
            }
            #expect(states.filter { $0.1 == "refused" }.allSatisfy { $0.2 != nil })
        }
    }

    @Test(
        "a payment the rules refuse is given back through Stripe's API once, also when Stripe fails first (keeping the 5xx for its key) and the event comes again, and after the keys expire"
    )
    func refusedIsRefunded() async throws {
        try await withStripe { harness, stripe in
            let cast = try await APICast.make(harness)
            let dues = try await DuesPaidOnlineTests.seasonFee(harness, cast)
            _ = try await harness.services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("25"), as: cast.admin)
            let event = try Self.paid(
                "evt_twice", dues: dues.id, user: cast.member, amount: 2500, intent: "pi_twice", created: harness.services.now())

            // Stripe cannot refund now: the webhook answers 503 so that Stripe delivers it again.
            stripe.script([500, 500, 500])
            let first = try await StripeWebhookTests.deliver(harness, event, at: harness.services.now())
            #expect(first.status == 503, "\(first.text)")
            #expect(stripe.refunds.isEmpty)

            let again = try await Self.deliver(harness, event)
            #expect(try again.string("outcome") == "duplicate")
            #expect(stripe.refunds == ["pi_twice"])
            let refund = try #require(stripe.received.last)
            #expect(refund.path == "v1/refunds")
            #expect(refund.form["reason"] == "duplicate")
            #expect(refund.headers["idempotency-key"]?.hasPrefix("orbit-refund-pi_twice") == true)

            // The first delivery's key keeps its 500 (Stripe replays it); the retry's new key refunded.
            #expect(stripe.received.filter { $0.path == "v1/refunds" }.map(\.status) == [500, 500, 500, 500, 200])

            // Once more, and again after Stripe forgot the keys (24 hours on): Stripe refuses a
            // second refund, which counts as given back, so the webhook answers 200 and Stripe
            // stops delivering the event.
            _ = try await Self.deliver(harness, event)
            stripe.forgetKeys()
            _ = try await Self.deliver(harness, event)
            #expect(stripe.received.last?.error == "charge_already_refunded")
            #expect(stripe.refunds == ["pi_twice"])
            #expect(try await Self.payments(harness, dues.id, token: cast.adminToken).count == 1)
        }
    }

    @Test("a refund that arrives before its payment's event is kept: the payment is recorded less it, or not at all")
    func refundFirst() async throws {
        try await withAPI(configure: Self.configured) { harness in
            let cast = try await APICast.make(harness)
            let dues = try await DuesPaidOnlineTests.seasonFee(harness, cast)
            let now = harness.services.now()
            let early = try await Self.deliver(
                harness, try Self.refunded("evt_r_first", intent: "pi_late", amount: 2500, refunded: 1000, created: now))
            #expect(try early.string("outcome") == "ignored")
            let late = try await Self.deliver(
                harness, try Self.paid("evt_p_late", dues: dues.id, user: cast.member, amount: 2500, intent: "pi_late", created: now))
            #expect(try late.string("outcome") == "applied")
            #expect(try await Self.payments(harness, dues.id, token: cast.adminToken).first?["amount_paid"] as? Int == 1500)

            _ = try await Self.deliver(harness, try Self.refunded("evt_r_all", intent: "pi_gone", amount: 2500, refunded: 2500, created: now))
            let gone = try await Self.deliver(
                harness, try Self.paid("evt_p_gone", dues: dues.id, user: cast.member, amount: 2500, intent: "pi_gone", created: now))
            #expect(try gone.string("outcome") == "stale")
            #expect(try gone.string("detail").contains("refunded in full"))
            #expect(try await Self.payments(harness, dues.id, token: cast.adminToken).count == 1)
        }
    }

    @Test("an admin as orbit_app cannot record a payment as the provider's, nor change its provider id")
    func providerPaymentsAreTheServers() async throws {
        try await withAPI(configure: Self.configured) { harness in
            let cast = try await APICast.make(harness)
            let dues = try await DuesPaidOnlineTests.seasonFee(harness, cast)
            let payment = try await harness.services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("5"), as: cast.admin)
            try await harness.database.withConnection { connection in
                await #expect(throws: PostgresError.self) {
                    try await connection.asApp(cast.admin.uuid) { connection in
                        try await connection.query(
                            """
                            INSERT INTO dues_payments (dues_id, user_id, amount_paid, recorded_by, payment_method, provider_payment_id)
                            VALUES (\(dues.id), \(cast.member), 500, \(cast.admin), 'stripe', 'pi_forged')
                            """)
                    }
                }
                await #expect(throws: PostgresError.self) {
                    try await connection.asApp(cast.admin.uuid) { connection in
                        try await connection.query("UPDATE dues_payments SET provider_payment_id = 'pi_forged' WHERE id = \(payment.id)")
                    }
                }
            }
        }
    }

    @Test("the webhook and a treasurer's manual payment at once: nothing is paid twice, the loser is told why")
    func racedWithManualPayment() async throws {
        try await withAPI(configure: Self.configured) { harness in
            let cast = try await APICast.make(harness)
            var webhookWon = 0
            var manualWon = 0
            // Round 0: the webhook first, then by hand; round 1 the other way round; then at once.
            for round in 0..<8 {
                let dues = try await harness.services.dues.create(
                    in: cast.community, name: "Fee \(round)", amount: try dollars("25"), dueDate: try day("2030-01-01"), as: cast.admin)
                let event = try Self.paid(
                    "evt_race_\(round)", dues: dues.id, user: cast.member, amount: 2500, intent: "pi_race_\(round)",
                    created: harness.services.now())
                let manual: @Sendable () async throws -> TestResponse = {
                    try await harness.request(
                        .post, "/dues/\(dues.id)/payments", token: cast.adminToken,
                        json: ["user_id": cast.member.description, "amount": 2500, "payment_method": "cash"])
                }
                let online: TestResponse
                let byHand: TestResponse
                switch round {
                case 0:
                    online = try await Self.deliver(harness, event)
                    byHand = try await manual()
                case 1:
                    byHand = try await manual()
                    online = try await Self.deliver(harness, event)
                default:
                    async let webhook = Self.deliver(harness, event)
                    async let hand = manual()
                    (online, byHand) = try await (webhook, hand)
                }
                let outcome = try online.string("outcome")
                if outcome == "applied" {
                    webhookWon += 1
                    #expect(byHand.status == 409, "\(byHand.text)")
                    #expect(try byHand.string("detail").contains("more than the 0.00 USD still owed"), "\(byHand.text)")
                } else {
                    manualWon += 1
                    #expect(byHand.status == 201, "\(byHand.text)")
                    #expect(outcome == "refused")
                    #expect(try online.string("detail").contains("more than the 0.00 USD still owed"), "\(online.text)")
                }
                let payments = try await Self.payments(harness, dues.id, token: cast.adminToken)
                #expect(payments.count == 1)
                #expect(payments.compactMap { $0["amount_paid"] as? Int }.reduce(0, +) == 2500)
            }
            // Which side wins a race is the race's; each round checks the winner's answer and the
            // loser's refusal, and the first two rounds make sure each side has won once.
            #expect(webhookWon >= 1 && manualWon >= 1)
            print("DuesPaidOnlineTests race: the webhook first \(webhookWon) times, by hand first \(manualWon) times")
        }
    }
}
