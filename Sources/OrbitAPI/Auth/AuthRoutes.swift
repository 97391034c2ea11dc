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

/// A paired child device's token (kept on the device; with the PIN it signs the child in).
struct PairedDeviceToken: Encodable, Sendable {
    var deviceToken: String
    var familyMemberID: FamilyMemberID

    enum CodingKeys: String, CodingKey { case deviceToken = "device_token", familyMemberID = "family_member_id" }
}

/// A child's access token: it reaches only the child's chores, rewards and points in the one
/// community the device was paired for.
struct ChildToken: Encodable, Sendable {
    var accessToken: String
    var tokenType = "Bearer"
    var expiresIn: Int
    var familyMemberID: FamilyMemberID
    var deviceID: ChildDeviceID
    var communityID: CommunityID

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token", tokenType = "token_type", expiresIn = "expires_in", familyMemberID = "family_member_id"
        case deviceID = "device_id", communityID = "community_id"
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

        // A child's sign-in (docs/chores.md): a pairing code once, for the device's token; then
        // the device's token and the child's PIN, for a child's access token.
        struct ChildSignIn: Decodable {
            var pairingCode: String?
            var deviceToken: String?
            var pin: String?
        }
        auth.post("child") { request, context in
            let body = try await request.decodeJSON(ChildSignIn.self, context: context)
            switch (body.pairingCode, body.deviceToken, body.pin) {
            case (let code?, nil, nil):
                let (child, token) = try await services.family.finishPairing(code: code)
                return try APIJSON.response(PairedDeviceToken(deviceToken: token, familyMemberID: child), status: .created)
            case (nil, let token?, let pin?):
                switch try await services.family.signInChild(deviceToken: token, pin: pin) {
                case .signedIn(let session, let community):
                    let response = ChildToken(
                        accessToken: try await tokens.issue(forChild: session), expiresIn: Int(tokens.childLifetime.components.seconds),
                        familyMemberID: session.child, deviceID: session.device, communityID: community)
                    return try APIJSON.response(response, status: .ok)
                case .wrongPIN:
                    throw APIProblem.unauthenticated("That PIN is not right.")
                case .locked(let until):
                    var problem = APIProblem(
                        "child-locked", title: "Sign-in locked", status: .tooManyRequests,
                        detail: "Too many wrong PINs: sign-in is locked until \(until.formatted(.iso8601)); a parent can set a new PIN.")
                    problem.retryAfter = max(1, Int(until.timeIntervalSinceNow.rounded(.up)))
                    throw problem
                case .unknownDevice:
                    throw APIProblem.unauthenticated("This device is not paired (or was unpaired): ask a parent for a pairing code.")
                case .deviceExpired:
                    throw APIProblem.unauthenticated(
                        "This device was not used for 30 days and must be paired again: ask a parent for a pairing code.")
                case .noPIN:
                    throw APIProblem(ServiceError.conflict("No PIN is set for this child yet: a parent sets one first."))
                }
            default:
                throw APIProblem.validation(field: nil, "Send either pairing_code, or device_token and pin.")
            }
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
