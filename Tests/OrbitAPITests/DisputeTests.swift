import Foundation
import OrbitAPI
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Disputes of dues paid online (issue 52, item 2; docs/money.md, "Disputes"): Stripe's
/// `charge.dispute.*` events mark the payment, take its money off while the bank holds it or
/// kept it, put it back when the dispute is won, each once, in any order, beside refunds; money's
/// history, the audit log and the treasurer hear of each.
@Suite("Disputes of dues paid online")
struct DisputeTests {
    static func dispute(
        _ event: String, _ type: String, dispute: String = "dp_1", intent: String, amount: Int = 2500, status: String, created: Date
    ) throws -> Data {
        try StripeWebhookTests.event(
            event, type, created: Int(created.timeIntervalSince1970),
            object: [
                "id": dispute, "object": "dispute", "amount": amount, "currency": "usd", "charge": "ch_\(intent)", "payment_intent": intent,
                "status": status, "reason": "fraudulent", "metadata": [:],
            ])
    }

    /// The member's payment of `dues` (amount and mark) and their report line's mark.
    static func state(_ harness: APIHarness, _ cast: APICast, _ dues: DuesID) async throws -> (paid: Int64, payment: String?, line: String?) {
        let payments = try await harness.services.dues.payments(of: dues, as: cast.admin).items.filter { $0.providerPaymentID != nil }
        let line = try await harness.services.dues.report(dues, as: cast.admin).first { $0.userID == cast.member }
        return (line?.amountPaid ?? -1, payments.first?.disputeStatus, line?.disputeStatus)
    }

    @Test("opened, funds withdrawn, won: marked, taken off, put back; history, audit and the treasurer hear of each")
    func lifecycle() async throws {
        try await withAPI(configure: DuesPaidOnlineTests.configured) { harness in
            let cast = try await APICast.make(harness)
            let dues = try await DuesPaidOnlineTests.seasonFee(harness, cast).id
            let now = harness.services.now()
            _ = try await DuesPaidOnlineTests.deliver(
                harness, try DuesPaidOnlineTests.paid("evt_pay", dues: dues, user: cast.member, amount: 2500, intent: "pi_d", created: now))

            let opened = try await DuesPaidOnlineTests.deliver(
                harness, try Self.dispute("evt_d1", "charge.dispute.created", intent: "pi_d", status: "needs_response", created: now))
            #expect(try opened.string("outcome") == "applied", "\(opened.text)")
            var state = try await Self.state(harness, cast, dues)
            #expect(state.paid == 2500 && state.payment == "open" && state.line == "open", "\(state)")

            let withdrawn = try await DuesPaidOnlineTests.deliver(
                harness, try Self.dispute("evt_d2", "charge.dispute.funds_withdrawn", intent: "pi_d", status: "needs_response", created: now))
            #expect(try withdrawn.string("outcome") == "applied", "\(withdrawn.text)")
            state = try await Self.state(harness, cast, dues)
            #expect(state.paid == 0 && state.payment == "funds_withdrawn", "\(state)")
            let owed = try await harness.services.dues.report(dues, as: cast.admin).first { $0.userID == cast.member }
            #expect(owed?.outstanding == 2500 && owed?.status == .unpaid)
            // The payment stays, at 0, marked: the treasurer sees what became of it.
            let listing = try await harness.request(.get, "/dues/\(dues)/payments", token: cast.adminToken)
            #expect(listing.status == 200, "\(listing.text)")
            let listed = try listing.items
            #expect(listed.first?["amount_paid"] as? Int == 0 && listed.first?["dispute_status"] as? String == "funds_withdrawn")

            // Delivered again, or an update that says nothing new: nothing happens twice.
            #expect(
                try await DuesPaidOnlineTests.deliver(
                    harness, try Self.dispute("evt_d2", "charge.dispute.funds_withdrawn", intent: "pi_d", status: "needs_response", created: now)
                ).string("outcome") == "duplicate")
            #expect(
                try await DuesPaidOnlineTests.deliver(
                    harness, try Self.dispute("evt_d2b", "charge.dispute.updated", intent: "pi_d", status: "under_review", created: now)
                ).string("outcome") == "stale")

            let won = try await DuesPaidOnlineTests.deliver(
                harness, try Self.dispute("evt_d3", "charge.dispute.closed", intent: "pi_d", status: "won", created: now))
            #expect(try won.string("outcome") == "applied", "\(won.text)")
            state = try await Self.state(harness, cast, dues)
            #expect(state.paid == 2500 && state.payment == "won" && state.line == "won", "\(state)")

            // Money's history: paid, disputed, taken back, won.
            let history = try await harness.request(
                .get, "/communities/\(cast.community)/money-activity?dues_id=\(dues)", token: cast.memberToken
            ).items.map { $0["action"] as? String }
            #expect(history == ["dispute_won", "dispute_lost", "disputed", "paid", "created"], "\(history)")
            // The audit log, under the payer.
            let audit = try await harness.services.communities.auditLog(cast.community, as: cast.admin).items.filter {
                $0.action == "dues.disputed"
            }
            #expect(audit.count == 3 && audit.allSatisfy { $0.userID == cast.member })
            // The treasurer (who set the dues up) is told each time; the member is not.
            let told = try await harness.services.notifications.list(limit: 50, as: cast.admin).items.filter { $0.type == .paymentDisputed }
            #expect(told.count == 3, "\(told.map(\.body))")
            #expect(told.contains { $0.body.contains("took back 25.00 USD") }, "\(told.map(\.body))")
            #expect(try await harness.services.notifications.list(limit: 50, as: cast.member).items.allSatisfy { $0.type != .paymentDisputed })
        }
    }

    /// The events of one dispute and where they leave the payment.
    static let orders: [(events: [(String, String)], paid: Int64, status: String)] = [
        (
            [("charge.dispute.created", "needs_response"), ("charge.dispute.funds_withdrawn", "needs_response"), ("charge.dispute.closed", "lost")],
            0, "lost"
        ),
        (
            [
                ("charge.dispute.created", "needs_response"), ("charge.dispute.funds_withdrawn", "needs_response"),
                ("charge.dispute.funds_reinstated", "under_review"), ("charge.dispute.closed", "won"),
            ], 2500, "won"
        ),
    ]

    static func permutations<Element>(_ items: [Element]) -> [[Element]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { index in
            var rest = items
            let first = rest.remove(at: index)
            return permutations(rest).map { [first] + $0 }
        }
    }

    @Test("each dispute's events end the same in any order, and each applies once")
    func anyOrder() async throws {
        try await withAPI(configure: DuesPaidOnlineTests.configured) { harness in
            let cast = try await APICast.make(harness)
            let now = harness.services.now()
            var run = 0
            for order in Self.orders {
                for events in Self.permutations(order.events) {
                    run += 1
                    let dues = try await DuesPaidOnlineTests.seasonFee(harness, cast).id
                    let intent = "pi_order_\(run)"
                    _ = try await DuesPaidOnlineTests.deliver(
                        harness,
                        try DuesPaidOnlineTests.paid("evt_pay_\(run)", dues: dues, user: cast.member, amount: 2500, intent: intent, created: now))
                    for (index, (type, status)) in events.enumerated() {
                        _ = try await DuesPaidOnlineTests.deliver(
                            harness, try Self.dispute("evt_\(run)_\(index)", type, dispute: "dp_\(run)", intent: intent, status: status, created: now)
                        )
                    }
                    let state = try await Self.state(harness, cast, dues)
                    #expect(state.paid == order.paid && state.payment == order.status, "\(events.map(\.0)) → \(state)")
                }
            }
            #expect(run == 6 + 24)
        }
    }

    @Test("beside refunds: a partial refund, then a dispute of the rest; a dispute that comes before its payment's event")
    func besideRefunds() async throws {
        try await withAPI(configure: DuesPaidOnlineTests.configured) { harness in
            let cast = try await APICast.make(harness)
            let dues = try await DuesPaidOnlineTests.seasonFee(harness, cast).id
            let now = harness.services.now()
            _ = try await DuesPaidOnlineTests.deliver(
                harness, try DuesPaidOnlineTests.paid("evt_pay", dues: dues, user: cast.member, amount: 2500, intent: "pi_r", created: now))
            _ = try await DuesPaidOnlineTests.deliver(
                harness, try DuesPaidOnlineTests.refunded("evt_ref", intent: "pi_r", amount: 2500, refunded: 1000, created: now))
            _ = try await DuesPaidOnlineTests.deliver(
                harness,
                try Self.dispute("evt_w", "charge.dispute.funds_withdrawn", intent: "pi_r", amount: 1500, status: "needs_response", created: now))
            #expect(try await Self.state(harness, cast, dues).paid == 0)
            _ = try await DuesPaidOnlineTests.deliver(
                harness, try Self.dispute("evt_won", "charge.dispute.closed", intent: "pi_r", amount: 1500, status: "won", created: now))
            #expect(try await Self.state(harness, cast, dues).paid == 1500)
            // A later, larger refund still counts against what is back.
            _ = try await DuesPaidOnlineTests.deliver(
                harness, try DuesPaidOnlineTests.refunded("evt_ref2", intent: "pi_r", amount: 2500, refunded: 2000, created: now))
            #expect(try await Self.state(harness, cast, dues).paid == 500)

            // A dispute that arrives first: the payment is recorded less what it took.
            let other = try await DuesPaidOnlineTests.seasonFee(harness, cast).id
            let early = try await DuesPaidOnlineTests.deliver(
                harness,
                try Self.dispute(
                    "evt_early", "charge.dispute.funds_withdrawn", dispute: "dp_early", intent: "pi_e", amount: 500, status: "needs_response",
                    created: now))
            #expect(try early.string("outcome") == "ignored", "\(early.text)")
            _ = try await DuesPaidOnlineTests.deliver(
                harness, try DuesPaidOnlineTests.paid("evt_pay_e", dues: other, user: cast.member, amount: 2500, intent: "pi_e", created: now))
            let state = try await Self.state(harness, cast, other)
            #expect(state.paid == 2000 && state.payment == "funds_withdrawn", "\(state)")
        }
    }

    @Test("orbit_app cannot mark a payment disputed, nor read the disputes")
    func serverOnly() async throws {
        try await withAPI(configure: DuesPaidOnlineTests.configured) { harness in
            let cast = try await APICast.make(harness)
            let dues = try await DuesPaidOnlineTests.seasonFee(harness, cast).id
            let error = await #expect(throws: PostgresError.self) {
                try await harness.database.withConnection { connection in
                    try await connection.asApp(cast.admin.uuid) { connection in
                        try await connection.query(
                            """
                            INSERT INTO dues_payments (dues_id, user_id, amount_paid, recorded_by, dispute_status)
                            VALUES (\(dues), \(cast.member), 100, \(cast.admin), 'won')
                            """)
                    }
                }
            }
            #expect(error?.sqlState == "23514", "\(String(describing: error))")
        }
    }
}
