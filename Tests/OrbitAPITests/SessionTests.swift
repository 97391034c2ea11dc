import Foundation
import OrbitAPI
import OrbitCore
import Testing

@Suite("Sign-in, tokens and sessions")
struct SessionTests {
    @Test("Sign in with Apple creates the account once, then signs the same user in")
    func signInWithAppleCreatesTheAccount() async throws {
        try await withAPI { harness in
            let token = try await harness.apple.identityToken(subject: "001234.apple", email: "new@example.com")
            let first = try await harness.request(
                .post, "/auth/apple", json: ["identity_token": token, "device_name": "Ada's iPhone", "display_name": "Ada"])
            #expect(first.status == 200, "\(first.text)")
            let access = try first.string("access_token")
            #expect(try first.string("token_type") == "Bearer")
            #expect(try first.json["expires_in"] as? Int == 900)
            let me = try await harness.request(.get, "/users/me", token: access)
            #expect(me.status == 200)
            #expect(try me.string("email") == "new@example.com")
            #expect(try me.string("display_name") == "Ada")
            #expect(try me.string("apple_id") == "001234.apple")

            // Apple sends the email only the first time.
            let again = try await harness.request(
                .post, "/auth/apple", json: ["identity_token": try await harness.apple.identityToken(subject: "001234.apple")])
            #expect(again.status == 200)
            #expect(try again.string("user_id") == (try first.string("user_id")))
            let devices = try await harness.database.withConnection { connection in
                try await connection.query("SELECT device_name FROM refresh_tokens ORDER BY created_at").map {
                    try $0.decode("device_name", as: String?.self)
                }
            }
            #expect(devices == ["Ada's iPhone", nil])
        }
    }

    @Test(
        "an identity token that is not Apple's for this app is refused with 401",
        arguments: ["wrong audience", "wrong issuer", "expired", "other key", "garbage"])
    func anIdentityTokenThatIsNotApples(_ defect: String) async throws {
        try await withAPI { harness in
            let apple = harness.apple
            let token: String
            switch defect {
            case "wrong audience": token = try await apple.identityToken(subject: "s", email: "a@example.com", audience: "com.other.app")
            case "wrong issuer": token = try await apple.identityToken(subject: "s", email: "a@example.com", issuer: "https://evil.example.com")
            case "expired": token = try await apple.identityToken(subject: "s", email: "a@example.com", expires: Date().addingTimeInterval(-60))
            case "other key": token = try await TestApple.make().identityToken(subject: "s", email: "a@example.com")
            default: token = "not.a.jwt"
            }
            let response = try await harness.request(.post, "/auth/apple", json: ["identity_token": token])
            #expect(response.status == 401, "\(response.text)")
            #expect(response.headers[.contentType] == "application/problem+json")
            #expect(try response.string("type") == "https://orbitcove.app/problems/unauthenticated")
            let users = try await harness.database.withConnection {
                try await $0.query("SELECT count(*) AS n FROM users").single().decode("n", as: Int.self)
            }
            #expect(users == 0)
        }
    }

    @Test("a refresh token works once; presenting it again revokes the whole sign-in")
    func aRefreshTokenWorksOncePresentingIt() async throws {
        try await withAPI { harness in
            let signIn = try await harness.request(
                .post, "/auth/apple", json: ["identity_token": try await harness.apple.identityToken(subject: "s1", email: "r@example.com")]
            )
            let first = try signIn.string("refresh_token")
            let rotated = try await harness.request(.post, "/auth/refresh", json: ["refresh_token": first])
            #expect(rotated.status == 200)
            let second = try rotated.string("refresh_token")
            #expect(second != first)
            #expect(try await harness.request(.get, "/users/me", token: try rotated.string("access_token")).status == 200)

            // The used token again: someone has a copy. It fails, and so does its successor.
            let reuse = try await harness.request(.post, "/auth/refresh", json: ["refresh_token": first])
            #expect(reuse.status == 401)
            #expect(try reuse.string("detail").contains("already used"))
            #expect(try await harness.request(.post, "/auth/refresh", json: ["refresh_token": second]).status == 401)

            // Tokens are stored as hashes only.
            let stored = try await harness.database.withConnection { connection in
                try await connection.query("SELECT token_hash FROM refresh_tokens").map { try $0.decode("token_hash", as: String.self) }
            }
            #expect(stored.count == 2)
            #expect(!stored.contains(first) && !stored.contains(second))
            #expect(stored.allSatisfy { $0.count == 64 })
        }
    }

    @Test("logout revokes the refresh token; an unknown token is not an error")
    func logoutRevokesTheRefreshTokenAnUnknown() async throws {
        try await withAPI { harness in
            let signIn = try await harness.request(
                .post, "/auth/apple", json: ["identity_token": try await harness.apple.identityToken(subject: "s2", email: "l@example.com")]
            )
            let refresh = try signIn.string("refresh_token")
            #expect(try await harness.request(.post, "/auth/logout", json: ["refresh_token": refresh]).status == 204)
            #expect(try await harness.request(.post, "/auth/refresh", json: ["refresh_token": refresh]).status == 401)
            #expect(try await harness.request(.post, "/auth/logout", json: ["refresh_token": "unknown"]).status == 204)
        }
    }

    @Test("expired, forged and malformed access tokens are 401 with WWW-Authenticate")
    func expiredForgedAndMalformedAccessTokensAre() async throws {
        try await withAPI { harness in
            let user = try await harness.services.users.create(email: "t@example.com", displayName: "T").id
            let expired = try await harness.api.tokens.issue(for: user, now: Date().addingTimeInterval(-3600))
            let forged = try await AccessTokens(secret: AccessTokens.randomSecret()).issue(for: user)
            for token in [expired, forged, "abc"] {
                let response = try await harness.request(.get, "/users/me", token: token)
                #expect(response.status == 401)
                #expect(response.headers[.wwwAuthenticate] == "Bearer")
            }
            let wrongScheme = try await harness.request(.get, "/users/me", headers: ["Authorization": "Basic dXNlcjpwYXNz"])
            #expect(wrongScheme.status == 401)
        }
    }

    @Test("a token that verified once (and is remembered) is still refused once it has expired; a child's token stays a child's")
    func rememberedTokensStillExpire() async throws {
        let tokens = try await AccessTokens(secret: AccessTokens.randomSecret())
        let user = UserID.random()
        let issued = Date()
        let token = try await tokens.issue(for: user, now: issued)
        let expiry = issued.addingTimeInterval(TimeInterval(tokens.lifetime.components.seconds))
        #expect(await tokens.verifyPrincipal(token, now: issued) == .user(user))
        #expect(await tokens.verifyPrincipal(token, now: issued.addingTimeInterval(60)) == .user(user))
        #expect(await tokens.verifyPrincipal(token, now: expiry.addingTimeInterval(1)) == nil)
        // Dropped once expired: asking with an earlier clock verifies it afresh.
        #expect(await tokens.verifyPrincipal(token, now: issued) == .user(user))

        let child = ChildSession(child: FamilyMemberID.random(), device: ChildDeviceID.random())
        let childToken = try await tokens.issue(forChild: child, now: issued)
        for _ in 0..<2 {
            #expect(await tokens.verifyPrincipal(childToken, now: issued) == .child(child))
            #expect(await tokens.verifyWithExpiry(childToken)?.user == nil)
        }
        #expect(await tokens.verifyPrincipal(token + "x", now: issued) == nil)
    }

    @Test("dev auth exists only when enabled and only on loopback")
    func devAuthExistsOnlyWhenEnabledAnd() async throws {
        try await withAPI { harness in
            _ = try await harness.services.users.create(email: "dev@example.com", displayName: "Dev").id
            #expect(try await harness.request(.post, "/auth/dev", json: ["email": "dev@example.com"]).status == 404)
        }
        try await withAPI(configure: { $0.devAuth = true }) { harness in
            _ = try await harness.services.users.create(email: "dev@example.com", displayName: "Dev").id
            let response = try await harness.request(.post, "/auth/dev", json: ["email": "dev@example.com"])
            #expect(response.status == 200)
            #expect(try await harness.request(.get, "/users/me", token: try response.string("access_token")).status == 200)
            #expect(try await harness.request(.post, "/auth/dev", json: ["email": "nobody@example.com"]).status == 404)
        }
        var configuration = APIConfiguration()
        configuration.devAuth = true
        configuration.host = "0.0.0.0"
        #expect(throws: APIConfigurationError.self) { try configuration.validate() }
    }

    @Test("sign-in is rate limited per IP with Retry-After")
    func signInIsRateLimitedPerIP() async throws {
        try await withAPI(configure: { $0.authRateLimit = .init(perMinute: 3, burst: 3) }) { harness in
            var statuses: [Int] = []
            for _ in 0..<5 {
                statuses.append(try await harness.request(.post, "/auth/refresh", json: ["refresh_token": "x"]).status)
            }
            #expect(statuses == [401, 401, 401, 429, 429])
            let limited = try await harness.request(.post, "/auth/refresh", json: ["refresh_token": "x"])
            #expect(limited.headers[.retryAfter].flatMap(Int.init).map { $0 >= 1 } == true)
            #expect(try limited.string("type") == "https://orbitcove.app/problems/rate-limited")
        }
    }
}
