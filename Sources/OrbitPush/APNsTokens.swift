package import Foundation
import JWTKit

/// The provider tokens of APNs token authentication: ES256 JWTs naming the key (`kid`) and the
/// team (`iss`) with the time they were made (`iat`). APNs refuses a token older than an hour
/// and one replaced more often than every 20 minutes, so one token serves all requests for
/// `lifetime` and is then made anew.
package actor APNsTokens {
    /// A token is replaced once it is this old.
    package static let lifetime: TimeInterval = 50 * 60

    struct Claims: JWTPayload {
        var iss: String
        var iat: Int

        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    private let keys: JWTKeyCollection
    private let keyID: JWKIdentifier
    private let teamID: String
    private let now: @Sendable () -> Date
    private var current: (token: String, issuedAt: Date)?

    /// - Throws: `APNsConfigurationError` when `keyPEM` is not a P-256 private key.
    package init(keyPEM: String, keyID: String, teamID: String, now: @escaping @Sendable () -> Date = Date.init) async throws {
        let key: ES256PrivateKey
        do {
            key = try ES256PrivateKey(pem: keyPEM)
        } catch {
            throw APNsConfigurationError("the APNs key is not a P-256 private key in PEM (the .p8 file from Apple): \(error)")
        }
        keys = JWTKeyCollection()
        self.keyID = JWKIdentifier(string: keyID)
        await keys.add(ecdsa: key, kid: self.keyID)
        self.teamID = teamID
        self.now = now
    }

    /// The token to send now.
    package func token() async throws -> String {
        let now = now()
        if let current, now.timeIntervalSince(current.issuedAt) < Self.lifetime, now >= current.issuedAt {
            return current.token
        }
        let token = try await keys.sign(Claims(iss: teamID, iat: Int(now.timeIntervalSince1970)), kid: keyID)
        current = (token, now)
        return token
    }

    /// Forgets `token` after APNs called it expired or invalid, so the next request makes a new one.
    package func discard(_ token: String) {
        if current?.token == token { current = nil }
    }
}
