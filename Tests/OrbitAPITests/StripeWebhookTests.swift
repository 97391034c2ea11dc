import Foundation
import OrbitAPI
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// `POST /webhooks/stripe` (docs/money.md, "Subscriptions"): signed as Stripe signs, the events
/// as Stripe sends them.
@Suite("Stripe's webhook keeps a community's subscription")
struct StripeWebhookTests {
    static let secret = "whsec_test_0123456789abcdef"
    static let rolledSecret = "whsec_test_fedcba9876543210"

    /// An event as Stripe delivers it.
    static func event(
        _ id: String, _ type: String, created: Int, object: [String: Any]
    ) throws -> Data {
        try JSONSerialization.data(
            withJSONObject: [
                "id": id, "object": "event", "type": type, "created": created, "api_version": "2025-03-31.basil", "livemode": false,
                "data": ["object": object],
            ], options: [.sortedKeys])
    }

    static func subscription(_ id: String, community: CommunityID?, status: String, periodEnd: Int) -> [String: Any] {
        var object: [String: Any] = [
            "id": id, "object": "subscription", "status": status, "customer": "cus_123",
            "items": ["object": "list", "data": [["id": "si_1", "current_period_end": periodEnd]]],
        ]
        object["metadata"] = community.map { ["community_id": $0.description] } ?? [:]
        return object
    }

    /// Posts `body` signed at `time` with `secrets` (or with `signature` as given).
    static func deliver(
        _ harness: APIHarness, _ body: Data, at time: Date, secrets: [String] = [secret], signature: String? = nil
    ) async throws -> TestResponse {
        let header = signature ?? StripeSignature.header(payload: Array(body), secrets: secrets, timestamp: time)
        return try await harness.request(
            .post, "/webhooks/stripe", body: body, headers: ["Stripe-Signature": header, "Content-Type": "application/json"])
    }

    static func community(_ harness: APIHarness, _ id: CommunityID) async throws -> (
        status: String, expires: Date?, subscription: String?, customer: String?
    ) {
        try await harness.database.withConnection { connection in
            let row = try await connection.query(
                """
                SELECT subscription_status::text AS status, subscription_expires_at, stripe_subscription_id, stripe_customer_id
                FROM communities WHERE id = \(id)
                """
            ).single()
            return (
                try row.decode("status"), try row.decode("subscription_expires_at"), try row.decode("stripe_subscription_id"),
                try row.decode("stripe_customer_id")
            )
        }
    }

    static func configured(_ configuration: inout APIConfiguration) {
        configuration.stripeWebhookSecrets = [secret]
    }

    @Test("a signed event is applied once; a redelivery is a duplicate that changes nothing")
    func signedAndReplayed() async throws {
        try await withAPI(configure: Self.configured) { harness in
            let cast = try await APICast.make(harness)
            let now = harness.services.now()
            let periodEnd = Int(now.timeIntervalSince1970) + 30 * 86_400
            let created = Int(now.timeIntervalSince1970) - 10
            let checkout = try Self.event(
                "evt_checkout", "checkout.session.completed", created: created - 5,
                object: [
                    "id": "cs_1", "object": "checkout.session", "mode": "subscription", "payment_status": "paid",
                    "client_reference_id": cast.community.description, "customer": "cus_123", "subscription": "sub_1", "metadata": [:],
                ])
            let first = try await Self.deliver(harness, checkout, at: now)
            #expect(first.status == 200, "\(first.text)")
            #expect(try first.string("outcome") == "applied")
            #expect(try first.string("community_id") == cast.community.description)
            var state = try await Self.community(harness, cast.community)
            #expect(state.status == "active")
            #expect(state.subscription == "sub_1")
            #expect(state.customer == "cus_123")

            let created1 = try Self.event(
                "evt_created", "customer.subscription.created", created: created,
                object: Self.subscription("sub_1", community: cast.community, status: "active", periodEnd: periodEnd))
            #expect(try await Self.deliver(harness, created1, at: now).string("outcome") == "applied")
            state = try await Self.community(harness, cast.community)
            #expect(state.expires == Date(timeIntervalSince1970: TimeInterval(periodEnd)))

            // Stripe redelivers (a timeout on its side): the same id is not applied again, even
            // after an operator changed the status by hand meanwhile.
            try await harness.database.withConnection { connection in
                try await connection.query("UPDATE communities SET subscription_status = 'free' WHERE id = \(cast.community)")
            }
            let again = try await Self.deliver(harness, created1, at: now.addingTimeInterval(60))
            #expect(again.status == 200)
            #expect(try again.string("outcome") == "duplicate")
            #expect(try await Self.community(harness, cast.community).status == "free")
            let rows = try await harness.database.withConnection { connection in
                try await connection.query("SELECT count(*) AS n FROM billing_events WHERE event_id = 'evt_created'").single().decode(
                    "n", as: Int.self)
            }
            #expect(rows == 1)
        }
    }

    @Test("out of order: the newest created wins per subscription, an older event that arrives later is stale")
    func outOfOrder() async throws {
        try await withAPI(configure: Self.configured) { harness in
            let cast = try await APICast.make(harness)
            let now = harness.services.now()
            let base = Int(now.timeIntervalSince1970) - 600
            let periodEnd = base + 30 * 86_400
            let failed = try Self.event(
                "evt_failed", "invoice.payment_failed", created: base + 100,
                object: [
                    "id": "in_2", "object": "invoice", "customer": "cus_123",
                    "parent": [
                        "type": "subscription_details",
                        "subscription_details": ["subscription": "sub_9", "metadata": ["community_id": cast.community.description]],
                    ],
                ])
            let updated = try Self.event(
                "evt_updated", "customer.subscription.updated", created: base,
                object: Self.subscription("sub_9", community: cast.community, status: "active", periodEnd: periodEnd))
            let deleted = try Self.event(
                "evt_deleted", "customer.subscription.deleted", created: base + 200,
                object: Self.subscription("sub_9", community: nil, status: "canceled", periodEnd: periodEnd))
            // The payment failure (newer) arrives first, then the update it follows.
            #expect(try await Self.deliver(harness, failed, at: now).string("outcome") == "applied")
            #expect(try await Self.community(harness, cast.community).status == "past_due")
            #expect(try await Self.deliver(harness, updated, at: now).string("outcome") == "stale")
            #expect(try await Self.community(harness, cast.community).status == "past_due")
            // The deletion names no community: the subscription does.
            let deletion = try await Self.deliver(harness, deleted, at: now)
            #expect(try deletion.string("outcome") == "applied")
            #expect(try deletion.string("community_id") == cast.community.description)
            #expect(try await Self.community(harness, cast.community).status == "canceled")
            // An event of a type billing does not act on is kept and ignored.
            let other = try Self.event("evt_other", "customer.created", created: base, object: ["id": "cus_1", "object": "customer"])
            #expect(try await Self.deliver(harness, other, at: now).string("outcome") == "ignored")
        }
    }

    @Test("forged, tampered, expired, malformed and missing signatures are refused before the body is read; a rolled secret's second v1 passes")
    func signatures() async throws {
        try await withAPI(configure: { $0.stripeWebhookSecrets = [Self.secret] }) { harness in
            let cast = try await APICast.make(harness)
            let now = harness.services.now()
            let body = try Self.event(
                "evt_sig", "customer.subscription.updated", created: Int(now.timeIntervalSince1970),
                object: Self.subscription("sub_s", community: cast.community, status: "active", periodEnd: Int(now.timeIntervalSince1970) + 86_400))
            func refused(_ response: TestResponse, _ what: String) throws {
                #expect(response.status == 400, "\(what): \(response.text)")
                #expect(try response.string("type").hasSuffix("/invalid-signature"), "\(what)")
            }
            try refused(try await Self.deliver(harness, body, at: now, secrets: ["whsec_forged"]), "another secret")
            var tampered = body
            tampered[tampered.count - 2] ^= 0x01
            try refused(
                try await Self.deliver(
                    harness, tampered, at: now, signature: StripeSignature.header(payload: Array(body), secrets: [Self.secret], timestamp: now)),
                "a body changed after signing")
            try refused(try await Self.deliver(harness, body, at: now.addingTimeInterval(-400)), "signed 400 s ago")
            try refused(try await Self.deliver(harness, body, at: now.addingTimeInterval(400)), "signed 400 s ahead")
            try refused(try await Self.deliver(harness, body, at: now, signature: "v1=abc"), "no timestamp")
            try refused(try await Self.deliver(harness, body, at: now, signature: "t=\(Int(now.timeIntervalSince1970))"), "no v1")
            let unsigned = try await harness.request(.post, "/webhooks/stripe", body: body)
            try refused(unsigned, "no header")
            #expect(try await Self.community(harness, cast.community).status == "free")
            let nothing = try await harness.database.withConnection { connection in
                try await connection.query("SELECT count(*) AS n FROM billing_events").single().decode("n", as: Int.self)
            }
            #expect(nothing == 0)

            // During a roll Stripe signs with the old and the new secret: either v1 may be ours.
            let rolled = try await Self.deliver(harness, body, at: now.addingTimeInterval(-240), secrets: [Self.rolledSecret, Self.secret])
            #expect(rolled.status == 200, "\(rolled.text)")
            #expect(try await Self.community(harness, cast.community).status == "active")

            // Signed, but not an event.
            let notAnEvent = try await Self.deliver(harness, Data(#"{"object":"customer"}"#.utf8), at: now)
            #expect(notAnEvent.status == 400)
            #expect(try notAnEvent.string("type").hasSuffix("/validation"))
        }
    }

    @Test("without a webhook secret the route answers 501, saying what is missing")
    func notConfigured() async throws {
        try await withAPI { harness in
            let response = try await Self.deliver(harness, Data("{}".utf8), at: harness.services.now())
            #expect(response.status == 501)
            #expect(try response.string("type").hasSuffix("/not-configured"))
            #expect(try response.string("detail").contains("--stripe-webhook-secret-file"))
        }
    }

    @Test("the same event delivered twice at once is applied once")
    func concurrentDeliveries() async throws {
        try await withAPI(configure: Self.configured) { harness in
            let cast = try await APICast.make(harness)
            let now = harness.services.now()
            let body = try Self.event(
                "evt_twice", "invoice.paid", created: Int(now.timeIntervalSince1970),
                object: [
                    "id": "in_1", "object": "invoice", "customer": "cus_123", "subscription": "sub_t",
                    "metadata": ["community_id": cast.community.description],
                    "lines": ["data": [["period": ["start": 1, "end": Int(now.timeIntervalSince1970) + 86_400]]]],
                ])
            let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<4 { group.addTask { try await Self.deliver(harness, body, at: now).string("outcome") } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(outcomes.sorted() == ["applied", "duplicate", "duplicate", "duplicate"])
        }
    }
}
