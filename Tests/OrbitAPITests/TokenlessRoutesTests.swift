import Foundation
import Hummingbird
import NIOCore
import OrbitAPI
import OrbitCore
import OrbitTestSupport
import Testing

/// The routes without a token (issue 52, item 4; docs/security.md): the calendar feeds and the
/// webhooks are limited per client address, each in a bucket of its own; the Stripe webhook
/// refuses an unsigned request before it reads the body; the App Store's bounds what certificate
/// work one anonymous request can cause.
@Suite("Routes without a token")
struct TokenlessRoutesTests {
    @Test("an invite's preview: no token, its join_url under --public-url, 404 and 410 alike for what is not there, a limit per address")
    func invitePreview() async throws {
        try await withAPI(configure: { configuration in
            configuration.publicURL = "https://orbit.example.com/"
            configuration.invitePreviewRateLimit = .init(perMinute: 1, burst: 8)
        }) { harness in
            let cast = try await APICast.make(harness)
            let created = try await harness.request(
                .post, "/communities/\(cast.community)/invites", token: cast.adminToken, json: ["max_uses": 1])
            let code = try created.string("code")
            #expect(try created.string("join_url") == "https://orbit.example.com/invites/\(code)", "\(created.text)")
            let listed = try await harness.request(.get, "/communities/\(cast.community)/invites", token: cast.adminToken)
            #expect(try listed.items.first?["join_url"] as? String == "https://orbit.example.com/invites/\(code)", "\(listed.text)")

            let shown = try await harness.request(.get, "/invites/\(code.lowercased())")
            #expect(shown.status == 200, "\(shown.text)")
            #expect(try shown.string("community_name") == "Tigers U10" && (try shown.json["member_count"] as? Int) == 2, "\(shown.text)")
            #expect(
                try Set(shown.json.keys) == ["code", "community_name", "member_count", "inviter_name", "expires_at", "guest_name"], "\(shown.text)")
            let unknown = try await harness.request(.get, "/invites/ZZZZZZ")
            #expect(unknown.status == 404, "\(unknown.text)")
            let malformed = try await harness.request(.get, "/invites/no")
            #expect(malformed.status == 404, "\(malformed.text)")
            _ = try await harness.request(.post, "/invites/redeem", token: cast.outsiderToken, json: ["code": code])
            let usedUp = try await harness.request(.get, "/invites/\(code)")
            #expect(usedUp.status == 410, "\(usedUp.text)")
            // Guessing codes: the address's bucket runs dry.
            var statuses: [Int] = []
            for _ in 0..<20 { statuses.append(try await harness.request(.get, "/invites/ZZZZZZ").status) }
            #expect(statuses.filter { $0 == 429 }.count >= 10, "\(statuses)")
        }
    }

    @Test("guessing feed tokens and posting webhooks are limited per address, each with its own limit")
    func perAddressLimits() async throws {
        try await withAPI(configure: { configuration in
            // One more a minute: however slow the machine, the bursts are what the test sees.
            configuration.calendarFeedRateLimit = .init(perMinute: 1, burst: 10)
            configuration.webhookRateLimit = .init(perMinute: 1, burst: 5)
            configuration.stripeWebhookSecrets = [StripeWebhookTests.secret]
        }) { harness in
            var feeds: [Int] = []
            for _ in 0..<40 {
                feeds.append(try await harness.request(.get, "/calendar/\(String(repeating: "A", count: 43)).ics").status)
            }
            #expect(feeds.prefix(10).allSatisfy { $0 == 404 }, "\(feeds)")
            #expect(feeds.filter { $0 == 429 }.count >= 25, "\(feeds)")
            // The webhooks' bucket is their own: the feeds' guesses did not use it up.
            var hooks: [Int] = []
            for _ in 0..<20 {
                hooks.append(
                    try await harness.request(.post, "/webhooks/stripe", body: Data("{}".utf8), headers: ["Content-Type": "application/json"]).status)
            }
            #expect(hooks.prefix(5).allSatisfy { $0 == 400 }, "\(hooks)")
            #expect(hooks.filter { $0 == 429 }.count >= 10, "\(hooks)")
            // Signed-in routes are not counted there.
            let cast = try await APICast.make(harness)
            #expect(try await harness.request(.get, "/communities", token: cast.memberToken).status == 200)
        }
    }

    @Test("the Stripe webhook refuses a request without a signature (or a stale one) before reading its body")
    func stripeSignatureFirst() async throws {
        try await withAPI(configure: { $0.stripeWebhookSecrets = [StripeWebhookTests.secret] }) { harness in
            // Two megabytes: reading it would answer 413 (payload-too-large), not the signature's 400.
            let large = ByteBuffer(repeating: UInt8(ascii: " "), count: 2 << 20)
            let unsigned = try await harness.request(
                .post, "/webhooks/stripe", token: nil, streaming: RequestBody(buffer: large), headers: ["Content-Type": "application/json"])
            #expect(unsigned.status == 400, "\(unsigned.text)")
            #expect(unsigned.text.contains("invalid-signature"), "\(unsigned.text)")
            let stale = try await harness.request(
                .post, "/webhooks/stripe", token: nil, streaming: RequestBody(buffer: large),
                headers: ["Content-Type": "application/json", "Stripe-Signature": "t=1000000000,v1=\(String(repeating: "0", count: 64))"])
            #expect(stale.status == 400 && stale.text.contains("5 minutes"), "\(stale.text)")
            // With a current signature the body is read (and this one is too large).
            let signed = try await harness.request(
                .post, "/webhooks/stripe", token: nil, streaming: RequestBody(buffer: large),
                headers: [
                    "Content-Type": "application/json",
                    "Stripe-Signature": "t=\(Int(harness.services.now().timeIntervalSince1970)),v1=\(String(repeating: "0", count: 64))",
                ])
            #expect(signed.status == 413, "\(signed.text)")
        }
    }

    /// A compact JWS whose header carries `x5c` as given (its signature is never reached).
    static func jws(x5c: [String]) throws -> String {
        func encoded(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": x5c])
        return "\(encoded(header)).\(encoded(Data("{}".utf8))).\(encoded(Data(repeating: 1, count: 64)))"
    }

    @Test("the App Store webhook parses no certificate of a chain that is not three small ones, and reads no large body")
    func appStoreBounds() async throws {
        let store = try TestAppStore.make()
        try await withAPI(configure: { $0.appStore = store.verifier }) { harness in
            let certificate = Data(repeating: 0x30, count: 1200).base64EncodedString()
            let long = try await AppStoreWebhookTests.deliver(harness, try Self.jws(x5c: Array(repeating: certificate, count: 4)))
            #expect(long.status == 400 && long.text.contains("three certificates"), "\(long.text)")
            let huge = Data(repeating: 0x30, count: 9000).base64EncodedString()
            let large = try await AppStoreWebhookTests.deliver(harness, try Self.jws(x5c: [huge, certificate, certificate]))
            #expect(large.status == 400 && large.text.contains("three certificates"), "\(large.text)")
            let body = try await AppStoreWebhookTests.deliver(harness, String(repeating: "a", count: 100_000))
            #expect(body.status == 413, "\(body.text)")
        }
    }
}
