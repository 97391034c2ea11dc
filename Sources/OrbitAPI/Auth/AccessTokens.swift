package import Foundation
import JWTKit
package import OrbitCore
import Synchronization

/// Short-lived access tokens: HS256 JWTs naming the user (`sub`), signed with the server's
/// secret. A token is valid until it expires; signing out revokes the refresh token, and the
/// access token dies on its own within `lifetime`.
package struct AccessTokens: Sendable {
    struct Payload: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim
        var iat: IssuedAtClaim
        var iss: IssuerClaim
        /// "child" for a child's token (`sub` is then a family member id); absent for a user's.
        var kind: String?
        /// A child's token: the paired device it was issued on (the one community it reaches).
        var device: String?

        /// The issuer; the expiry is checked by `check(_:now:)` against its clock.
        func verify(using algorithm: some JWTAlgorithm) throws {
            guard iss.value == AccessTokens.issuer else {
                throw JWTError.claimVerificationFailure(failedClaim: iss, reason: "not issued by OrbitCove")
            }
        }
    }

    static let issuer = "orbitcove"
    private let keys: JWTKeyCollection
    private let verified = VerifiedTokens()
    package let lifetime: Duration

    /// - Parameter secret: at least 32 bytes; the same secret on every server of a deployment.
    package init(secret: [UInt8], lifetime: Duration = .seconds(15 * 60)) async throws {
        guard secret.count >= 32 else {
            throw APIConfigurationError("The access-token secret must be at least 32 bytes.")
        }
        keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        self.lifetime = lifetime
    }

    /// A random secret: tokens stop working when the process ends (development, tests).
    package static func randomSecret() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    package func issue(for user: UserID, now: Date = Date()) async throws -> String {
        let payload = Payload(
            sub: SubjectClaim(value: user.description),
            exp: ExpirationClaim(value: now.addingTimeInterval(TimeInterval(lifetime.components.seconds))),
            iat: IssuedAtClaim(value: now),
            iss: IssuerClaim(value: Self.issuer)
        )
        return try await keys.sign(payload)
    }

    /// How long a child's token lives: four access-token lifetimes (an hour by default), so a
    /// child types their PIN about once an hour; the token reaches only their own chores,
    /// rewards and points in the community their device was paired for, and nothing once the
    /// device is revoked (row-level security checks the device on every request).
    package var childLifetime: Duration { lifetime * 4 }

    /// A token for a signed-in child (docs/chores.md): `sub` is the family member, `kind`
    /// "child", `device` the paired device it was issued on.
    package func issue(forChild session: ChildSession, now: Date = Date()) async throws -> String {
        let payload = Payload(
            sub: SubjectClaim(value: session.child.description),
            exp: ExpirationClaim(value: now.addingTimeInterval(TimeInterval(childLifetime.components.seconds))),
            iat: IssuedAtClaim(value: now),
            iss: IssuerClaim(value: Self.issuer),
            kind: "child",
            device: session.device.description
        )
        return try await keys.sign(payload)
    }

    /// Who a valid token is for: a user or a child; nil for anything else (malformed, forged,
    /// expired at `now`).
    package func verifyPrincipal(_ token: String, now: Date = Date()) async -> Principal? {
        await check(token, now: now)?.principal
    }

    /// The user of a valid token; nil for anything else (malformed, forged, expired).
    package func verify(_ token: String) async -> UserID? {
        await verifyWithExpiry(token)?.user
    }

    /// The user of a valid token and when the token expires.
    package func verifyWithExpiry(_ token: String) async -> (user: UserID, expires: Date)? {
        guard let (principal, expires) = await check(token, now: Date()), case .user(let user) = principal else { return nil }
        return (user, expires)
    }

    /// Who a valid token is for (a user or a child) and when it expires.
    package func verifyPrincipalWithExpiry(_ token: String) async -> (principal: Principal, expires: Date)? {
        await check(token, now: Date())
    }

    /// Who a valid token is for and when it expires. A token's signature is checked once: a
    /// token that verified is remembered until it expires (it is valid until then whatever
    /// happens, so remembering changes no answer), which spares every later request of the
    /// same client the HMAC, the JSON decoding and the key collection's actor.
    private func check(_ token: String, now: Date) async -> (principal: Principal, expires: Date)? {
        if let remembered = verified.lookup(token, now: now) { return remembered }
        guard let payload = try? await keys.verify(token, as: Payload.self), now < payload.exp.value else { return nil }
        let principal: Principal?
        switch payload.kind {
        case nil: principal = UserID(payload.sub.value).map(Principal.user)
        case "child":
            guard let child = FamilyMemberID(payload.sub.value), let device = payload.device.flatMap(ChildDeviceID.init) else { return nil }
            principal = .child(ChildSession(child: child, device: device))
        default: principal = nil
        }
        guard let principal else { return nil }
        verified.remember(token, principal: principal, expires: payload.exp.value, now: now)
        return (principal, payload.exp.value)
    }
}

/// Tokens that verified, until they expire. Bounded: when full, the expired are dropped, and
/// if none were, everything (the next request of each client verifies again).
private final class VerifiedTokens: Sendable {
    static let capacity = 10_000
    private let tokens = Mutex<[String: (principal: Principal, expires: Date)]>([:])

    func lookup(_ token: String, now: Date) -> (principal: Principal, expires: Date)? {
        tokens.withLock { tokens in
            guard let entry = tokens[token] else { return nil }
            guard now < entry.expires else {
                tokens[token] = nil
                return nil
            }
            return entry
        }
    }

    func remember(_ token: String, principal: Principal, expires: Date, now: Date) {
        tokens.withLock { tokens in
            if tokens.count >= Self.capacity {
                tokens = tokens.filter { now < $0.value.expires }
                if tokens.count >= Self.capacity { tokens.removeAll(keepingCapacity: true) }
            }
            tokens[token] = (principal, expires)
        }
    }
}

package struct APIConfigurationError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}
