import Crypto
import Foundation
import OrbitAPI
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing
import X509

/// `POST /webhooks/app-store` (docs/money.md, "Subscriptions"): App Store Server Notifications V2,
/// signed as Apple signs them, with a test root in place of Apple Root CA - G3.
@Suite("App Store notifications keep a community's subscription")
struct AppStoreWebhookTests {
    static func deliver(_ harness: APIHarness, _ signedPayload: String) async throws -> TestResponse {
        try await harness.request(.post, "/webhooks/app-store", json: ["signedPayload": signedPayload])
    }

    /// The appAccountToken the community's creator gets for a purchase.
    static func token(_ harness: APIHarness, _ cast: APICast) async throws -> UUID {
        let answer = try await harness.request(.post, "/communities/\(cast.community)/subscription/app-store-token", token: cast.adminToken)
        #expect(answer.status == 200, "\(answer.text)")
        return try #require(UUID(uuidString: try answer.string("app_account_token")))
    }

    static func state(_ harness: APIHarness, _ id: CommunityID) async throws -> (status: String, expires: Date?) {
        let community = try await StripeWebhookTests.community(harness, id)
        return (community.status, community.expires)
    }

    @Test("SUBSCRIBED, DID_RENEW, DID_FAIL_TO_RENEW, EXPIRED and REFUND set the status; each once; the newest signedDate wins")
    func lifecycle() async throws {
        let store = try TestAppStore.make()
        try await withAPI(configure: { $0.appStore = store.verifier }) { harness in
            let cast = try await APICast.make(harness)
            let token = try await Self.token(harness, cast)
            let now = Date()
            let month = now.addingTimeInterval(30 * 86_400)
            let subscribed = try store.notification(
                "n-1", "SUBSCRIBED", subtype: "INITIAL_BUY", signed: now.addingTimeInterval(-60), originalTransaction: "2000001",
                community: token, expires: month)
            let first = try await Self.deliver(harness, subscribed)
            #expect(first.status == 200, "\(first.text)")
            #expect(try first.string("outcome") == "applied")
            #expect(try first.string("type") == "SUBSCRIBED.INITIAL_BUY")
            var state = try await Self.state(harness, cast.community)
            #expect(state.status == "active")
            #expect(abs((state.expires ?? .distantPast).timeIntervalSince(month)) < 1)

            // Apple sends it again (no 200 seen, or a retry): applied once.
            let replay = try await Self.deliver(harness, subscribed)
            #expect(try replay.string("outcome") == "duplicate")

            // Renewed; the renewal fails; then it expires. A renewal signed before the expiry
            // that arrives after it is stale: the subscription stays expired.
            let later = now.addingTimeInterval(60 * 86_400)
            let renew = try store.notification(
                "n-2", "DID_RENEW", signed: now.addingTimeInterval(-50), originalTransaction: "2000001", community: nil, expires: later)
            #expect(try await Self.deliver(harness, renew).string("outcome") == "applied")
            #expect(try await Self.state(harness, cast.community).expires.map { abs($0.timeIntervalSince(later)) < 1 } == true)
            let failed = try store.notification(
                "n-3", "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signed: now.addingTimeInterval(-40), originalTransaction: "2000001",
                community: nil)
            #expect(try await Self.deliver(harness, failed).string("outcome") == "applied")
            #expect(try await Self.state(harness, cast.community).status == "past_due")
            let expired = try store.notification(
                "n-4", "EXPIRED", subtype: "BILLING_RETRY", signed: now.addingTimeInterval(-20), originalTransaction: "2000001",
                community: nil, expires: now.addingTimeInterval(-30))
            #expect(try await Self.deliver(harness, expired).string("outcome") == "applied")
            let lateRenewal = try store.notification(
                "n-2b", "DID_RENEW", signed: now.addingTimeInterval(-30), originalTransaction: "2000001", community: nil, expires: later)
            #expect(try await Self.deliver(harness, lateRenewal).string("outcome") == "stale")
            state = try await Self.state(harness, cast.community)
            #expect(state.status == "canceled")

            // A refund of another subscription of the community's (bought again): canceled at
            // the revocation.
            let again = try store.notification(
                "n-5", "SUBSCRIBED", subtype: "RESUBSCRIBE", signed: now.addingTimeInterval(-10), originalTransaction: "2000002",
                community: token, expires: month)
            #expect(try await Self.deliver(harness, again).string("outcome") == "applied")
            #expect(try await Self.state(harness, cast.community).status == "active")
            let revoked = now.addingTimeInterval(-5)
            let refund = try store.notification(
                "n-6", "REFUND", signed: now.addingTimeInterval(-5), originalTransaction: "2000002", community: nil, expires: month,
                revoked: revoked)
            #expect(try await Self.deliver(harness, refund).string("outcome") == "applied")
            state = try await Self.state(harness, cast.community)
            #expect(state.status == "canceled")
            #expect(state.expires.map { abs($0.timeIntervalSince(revoked)) < 1 } == true)

            // A type billing does not act on, a subscription naming nothing of ours, and one
            // naming the community by its id instead of its token (any member knows the id).
            let other = try store.notification(
                "n-7", "PRICE_INCREASE", signed: now, originalTransaction: "2000002", community: nil, expires: month)
            #expect(try await Self.deliver(harness, other).string("outcome") == "ignored")
            let stranger = try store.notification(
                "n-8", "SUBSCRIBED", signed: now, originalTransaction: "9999999", community: UUID(), expires: month)
            #expect(try await Self.deliver(harness, stranger).string("outcome") == "ignored")
            let byID = try store.notification(
                "n-9", "SUBSCRIBED", signed: now, originalTransaction: "9999998", community: cast.community.uuid, expires: month)
            #expect(try await Self.deliver(harness, byID).string("outcome") == "ignored")
            #expect(try await Self.state(harness, cast.community).status == "canceled")
        }
    }

    @Test("only the creator gets the purchase token, the same each time; sandbox notifications change nothing on production")
    func tokensAndEnvironments() async throws {
        let store = try TestAppStore.make()
        try await withAPI(configure: { $0.appStore = store.verifier }) { harness in
            let cast = try await APICast.make(harness)
            let token = try await Self.token(harness, cast)
            #expect(try await Self.token(harness, cast) == token)
            let path = "/communities/\(cast.community)/subscription/app-store-token"
            #expect(try await harness.request(.post, path, token: cast.memberToken).status == 403)
            #expect(try await harness.request(.post, path, token: cast.outsiderToken).status == 404)

            let sandbox = try store.notification(
                "s-1", "SUBSCRIBED", signed: Date(), originalTransaction: "4000001", community: token,
                expires: Date().addingTimeInterval(86_400), environment: "Sandbox")
            let answer = try await Self.deliver(harness, sandbox)
            #expect(try answer.string("outcome") == "ignored")
            #expect(try answer.string("detail").contains("Sandbox"))
            #expect(try await Self.state(harness, cast.community).status == "free")
        }
    }

    @Test("--app-store-environment sandbox takes only Sandbox notifications, both takes both; another name is refused")
    func environmentSettings() async throws {
        let store = try TestAppStore.make()
        #expect(AppStoreSignature.environments(named: "production") == ["Production"])
        #expect(AppStoreSignature.environments(named: "Sandbox") == nil && AppStoreSignature.environments(named: "all") == nil)
        for (name, taken) in [("sandbox", ["Sandbox"]), ("both", ["Production", "Sandbox"])] {
            let environments = try #require(AppStoreSignature.environments(named: name))
            #expect(environments == Set(taken))
            let verifier = AppStoreSignature(roots: [store.root.certificate], bundleID: TestAppStore.bundleID, environments: environments)
            try await withAPI(configure: { $0.appStore = verifier }) { harness in
                let cast = try await APICast.make(harness)
                let token = try await Self.token(harness, cast)
                let month = Date().addingTimeInterval(30 * 86_400)
                for (index, environment) in ["Production", "Sandbox"].enumerated() {
                    let notification = try store.notification(
                        "\(name)-\(environment)", "SUBSCRIBED", signed: Date().addingTimeInterval(Double(index)),
                        originalTransaction: "500000\(index)", community: token, expires: month, environment: environment)
                    let answer = try await Self.deliver(harness, notification)
                    #expect(answer.status == 200, "\(answer.text)")
                    if taken.contains(environment) {
                        #expect(try answer.string("outcome") == "applied", "\(name): \(environment): \(answer.text)")
                    } else {
                        #expect(try answer.string("outcome") == "ignored", "\(name): \(environment): \(answer.text)")
                        #expect(try answer.string("detail").contains(environment))
                    }
                }
                // Sandbox alone: the production purchase changed nothing, the sandbox one made it active.
                #expect(try await Self.state(harness, cast.community).status == "active")
            }
        }
    }

    @Test("a renewal extension's summary (no transaction, `summary` for `data`) is recorded once and changes nothing")
    func summaryNotifications() async throws {
        let store = try TestAppStore.make()
        try await withAPI(configure: { $0.appStore = store.verifier }) { harness in
            let cast = try await APICast.make(harness)
            let token = try await Self.token(harness, cast)
            let month = Date().addingTimeInterval(30 * 86_400)
            let subscribed = try store.notification(
                "x-1", "SUBSCRIBED", signed: Date(), originalTransaction: "6000001", community: token, expires: month)
            #expect(try await Self.deliver(harness, subscribed).string("outcome") == "applied")
            let before = try await Self.state(harness, cast.community)

            func summary(_ id: String, bundleID: String = TestAppStore.bundleID, environment: String = "Production") throws -> String {
                try store.sign([
                    "notificationType": "RENEWAL_EXTENSION", "subtype": "SUMMARY", "notificationUUID": id, "version": "2.0",
                    "signedDate": Int(Date().timeIntervalSince1970 * 1000),
                    "summary": [
                        "requestIdentifier": UUID().uuidString.lowercased(), "environment": environment, "appAppleId": 1_234_567_890,
                        "bundleId": bundleID, "productId": "app.orbitcove.community.monthly", "storefrontCountryCodes": ["USA", "MEX"],
                        "failedCount": 0, "succeededCount": 3,
                    ] as [String: Any],
                ])
            }
            let answer = try await Self.deliver(harness, try summary("x-2"))
            #expect(answer.status == 200, "\(answer.text)")
            #expect(try answer.string("outcome") == "ignored", "\(answer.text)")
            #expect(try await Self.deliver(harness, try summary("x-2")).string("outcome") == "duplicate")
            let after = try await Self.state(harness, cast.community)
            #expect(after.status == before.status && after.expires == before.expires)
            // The summary's own bundle and environment are checked as a notification's are.
            let otherApp = try await Self.deliver(harness, try summary("x-3", bundleID: "com.example.other"))
            #expect(otherApp.status == 400 && otherApp.text.contains("com.example.other"), "\(otherApp.text)")
            let sandbox = try await Self.deliver(harness, try summary("x-4", environment: "Sandbox"))
            #expect(try sandbox.string("outcome") == "ignored" && sandbox.string("detail").contains("Sandbox"), "\(sandbox.text)")
            let received = try await harness.database.withConnection { connection in
                try await connection.query(
                    "SELECT count(*)::int AS n FROM billing_events WHERE provider = 'app_store' AND event_type = 'RENEWAL_EXTENSION.SUMMARY'"
                ).single().decode("n", as: Int.self)
            }
            #expect(received == 2, "x-2 once, and x-4; the other app's is refused before it is recorded")
        }
    }

    @Test("a community's status is the best of its subscriptions: an App Store one ending leaves a running Stripe one active")
    func bestOfSubscriptions() async throws {
        let store = try TestAppStore.make()
        try await withAPI(configure: {
            $0.appStore = store.verifier
            $0.stripeWebhookSecrets = [StripeWebhookTests.secret]
        }) { harness in
            let cast = try await APICast.make(harness)
            let token = try await Self.token(harness, cast)
            let now = Date()
            let month = Int(now.timeIntervalSince1970) + 30 * 86_400
            let apple = try store.notification(
                "b-1", "SUBSCRIBED", signed: now.addingTimeInterval(-100), originalTransaction: "5000001", community: token,
                expires: now.addingTimeInterval(86_400))
            #expect(try await Self.deliver(harness, apple).string("outcome") == "applied")
            let stripe = try StripeWebhookTests.event(
                "evt_best", "customer.subscription.updated", created: Int(now.timeIntervalSince1970) - 50,
                object: StripeWebhookTests.subscription("sub_best", community: cast.community, status: "active", periodEnd: month))
            #expect(try await StripeWebhookTests.deliver(harness, stripe, at: now).string("outcome") == "applied")
            let expired = try store.notification(
                "b-2", "EXPIRED", signed: now.addingTimeInterval(-10), originalTransaction: "5000001", community: nil,
                expires: now.addingTimeInterval(-20))
            #expect(try await Self.deliver(harness, expired).string("outcome") == "applied")
            let state = try await Self.state(harness, cast.community)
            #expect(state.status == "active")
            #expect(state.expires.map { Int($0.timeIntervalSince1970) } == month)
        }
    }

    @Test("forged, tampered, expired, unmarked or another app's notifications are refused and change nothing")
    func refusals() async throws {
        let store = try TestAppStore.make()
        try await withAPI(configure: { $0.appStore = store.verifier }) { harness in
            let cast = try await APICast.make(harness)
            let now = Date()
            func notification(_ id: String, by signer: TestAppStore = store, bundleID: String = TestAppStore.bundleID) throws -> String {
                try signer.notification(
                    id, "SUBSCRIBED", signed: now, originalTransaction: "3000001", community: cast.community.uuid,
                    expires: now.addingTimeInterval(86_400), bundleID: bundleID)
            }
            func refused(_ payload: String, _ type: String, _ detail: String) async throws {
                let answer = try await Self.deliver(harness, payload)
                #expect(answer.status == 400, "\(answer.text)")
                #expect(try answer.string("type").hasSuffix("/\(type)"), "\(answer.text)")
                #expect(try answer.string("detail").contains(detail), "\(answer.text)")
            }
            // A chain of the attacker's own, up to a root of its own named as Apple's.
            try await refused(try notification("f-1", by: try TestAppStore.make(rootName: "Test Root CA - G3")), "invalid-signature", "not trusted")
            // Apple's chain, but signed with another key.
            let otherKey = try store.sign(["notificationUUID": "f-2"], key: P256.Signing.PrivateKey())
            try await refused(otherKey, "invalid-signature", "signature does not match")
            // The payload changed after signing.
            let genuine = try notification("f-3")
            let parts = genuine.split(separator: ".")
            let forgedBody = try JSONSerialization.data(withJSONObject: ["notificationUUID": "f-3", "notificationType": "SUBSCRIBED"]).base64URL
            try await refused("\(parts[0]).\(forgedBody).\(parts[2])", "invalid-signature", "signature does not match")
            // An expired leaf; a chain without Apple's markers.
            let expired = try TestAppStore.make(leafExpired: true)
            try await refused(try notification("f-4", by: try Self.resigned(expired, under: store)), "invalid-signature", "not trusted")
            try await refused(
                try notification("f-5", by: try Self.resigned(try TestAppStore.make(markers: false), under: store)), "invalid-signature",
                "not trusted")
            // Not ES256; no chain; not a JWS.
            try await refused(try store.sign(["notificationUUID": "f-6"], algorithm: "HS256"), "invalid-signature", "ES256")
            try await refused("eyJhbGciOiJFUzI1NiJ9.e30.", "invalid-signature", "x5c")
            try await refused("not a jws", "invalid-signature", "malformed")
            // Signed by Apple, for another app.
            try await refused(try notification("f-7", bundleID: "com.example.other"), "validation", "com.example.other")

            #expect(try await Self.state(harness, cast.community).status == "free")
            let recorded = try await harness.database.withConnection { connection in
                try await connection.query("SELECT count(*)::int AS n FROM billing_events").single().decode("n", as: Int.self)
            }
            #expect(recorded == 0)
        }
    }

    @Test("without a root certificate and bundle id the route answers 501, saying what is missing")
    func notConfigured() async throws {
        try await withAPI { harness in
            let answer = try await Self.deliver(harness, "a.b.c")
            #expect(answer.status == 501)
            #expect(try answer.string("detail").contains("--app-store-root-cert-file"))
        }
    }

    /// `chain`'s intermediate and leaf re-issued under `store`'s root, keeping everything else
    /// (markers, validity): what the configured root would have signed.
    static func resigned(_ chain: TestAppStore, under store: TestAppStore) throws -> TestAppStore {
        var result = chain
        let intermediate = chain.intermediate.certificate
        result.intermediate.certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: intermediate.publicKey, notValidBefore: intermediate.notValidBefore,
            notValidAfter: intermediate.notValidAfter, issuer: store.root.certificate.subject, subject: intermediate.subject,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: intermediate.extensions, issuerPrivateKey: .init(store.root.key))
        result.root = store.root
        return result
    }
}
