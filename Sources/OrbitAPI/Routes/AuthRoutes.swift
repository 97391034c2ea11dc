import Foundation
import Hummingbird
import OrbitCore

/// What every sign-in and refresh returns.
struct TokenResponse: Encodable, Sendable {
    var accessToken: String
    var tokenType = "Bearer"
    /// Seconds until the access token expires.
    var expiresIn: Int
    var refreshToken: String
    var refreshTokenExpiresAt: Date
    var userID: UserID

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token", tokenType = "token_type", expiresIn = "expires_in", refreshToken = "refresh_token"
        case refreshTokenExpiresAt = "refresh_token_expires_at", userID = "user_id"
    }
}

extension OrbitAPI {
    func addAuthRoutes(to router: RouterGroup<APIContext>) {
        let auth = router.group("auth")
            .add(middleware: RateLimitMiddleware(limiter: limiter, scope: .authByIP, limit: configuration.authRateLimit))

        struct AppleSignIn: Decodable {
            var identityToken: String
            var deviceName: String?
            var email: String?
            var displayName: String?
        }
        auth.post("apple") { request, context in
            let body = try await request.decodeJSON(AppleSignIn.self, context: context)
            let identity: AppleIdentity
            do {
                identity = try await appleVerifier.verify(body.identityToken)
            } catch AppleIdentityError.keysUnavailable {
                throw APIProblem(
                    "apple-unavailable", title: "Sign in with Apple unavailable", status: .serviceUnavailable,
                    detail: "Apple's signing keys could not be loaded; try again later."
                )
            } catch {
                throw APIProblem.unauthenticated("The Sign in with Apple identity token is not valid for this app.")
            }
            let (user, grant) = try await services.sessions.signIn(
                appleID: identity.subject, email: identity.email ?? body.email, displayName: body.displayName,
                device: body.deviceName, refreshLifetime: configuration.refreshTokenLifetime
            )
            context.notes.user = user.id
            return JSON(try await tokenResponse(grant))
        }

        struct Refresh: Decodable {
            var refreshToken: String
        }
        auth.post("refresh") { request, context in
            let body = try await request.decodeJSON(Refresh.self, context: context)
            let grant = try await services.sessions.rotate(body.refreshToken, lifetime: configuration.refreshTokenLifetime)
            context.notes.user = grant.userID
            return JSON(try await tokenResponse(grant))
        }
        struct Logout: Decodable {
            var refreshToken: String
            /// This phone's APNs token: it stops getting the user's pushes.
            var deviceToken: String?
        }
        auth.post("logout") { request, context in
            let body = try await request.decodeJSON(Logout.self, context: context)
            try await services.sessions.revoke(body.refreshToken, deviceToken: body.deviceToken)
            return NoContent()
        }

        // Development only: tokens for any existing user, by email. Never registered unless the
        // server was started with --dev-auth, which refuses non-loopback addresses.
        if configuration.devAuth {
            struct DevSignIn: Decodable {
                var email: String
                var deviceName: String?
            }
            auth.post("dev") { request, context in
                let body = try await request.decodeJSON(DevSignIn.self, context: context)
                guard body.email.contains("@") else { throw APIProblem.validation(field: "email", "email must be an email address.") }
                let user: UserID
                do {
                    user = try await services.users.resolve(body.email)
                } catch let error as ServiceError where error.code == .notFound {
                    throw APIProblem.notFound("No user has that email.")
                }
                let grant = try await services.sessions.start(
                    for: user, device: body.deviceName ?? "dev-auth", lifetime: configuration.refreshTokenLifetime
                )
                context.notes.user = user
                return JSON(try await tokenResponse(grant))
            }
        }
    }

    private func tokenResponse(_ grant: RefreshGrant) async throws -> TokenResponse {
        TokenResponse(
            accessToken: try await tokens.issue(for: grant.userID),
            expiresIn: Int(tokens.lifetime.components.seconds),
            refreshToken: grant.token,
            refreshTokenExpiresAt: grant.expiresAt,
            userID: grant.userID
        )
    }
}
