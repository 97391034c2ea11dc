package import Foundation
import JWTKit
import Logging
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Who a Sign in with Apple identity token says the user is.
package struct AppleIdentity: Sendable, Equatable {
    /// Apple's stable user id (`sub`).
    package var subject: String
    /// Only on the first sign-in, and possibly a private relay address.
    package var email: String?

    package init(subject: String, email: String?) {
        self.subject = subject
        self.email = email
    }
}

/// Verifies Sign in with Apple identity tokens.
package protocol AppleIdentityVerifier: Sendable {
    /// The identity in `token`, or throws `ServiceError.unauthenticated`-like errors.
    func verify(_ token: String) async throws -> AppleIdentity
}

/// Verification against a JSON Web Key Set, by default Apple's published keys: the signature
/// (RS256 with the key named by `kid`), `iss` = https://appleid.apple.com, `aud` = the app's
/// bundle id, and `exp`. The key set is loaded on first use and again when a token names a key
/// it does not hold (Apple rotates keys), at most once a minute.
package final class AppleJWKSVerifier: AppleIdentityVerifier {
    package enum KeySource: Sendable {
        case url(URL)
        case file(String)
        case json(String)

        package static let apple = KeySource.url(URL(string: "https://appleid.apple.com/auth/keys")!)
    }

    private let source: KeySource
    private let bundleID: String
    private let state = Mutex<(keys: JWTKeyCollection?, loadedAt: ContinuousClock.Instant?)>((nil, nil))

    package init(source: KeySource = .apple, bundleID: String) {
        self.source = source
        self.bundleID = bundleID
    }

    package func verify(_ token: String) async throws -> AppleIdentity {
        let keys = try await keySet(reload: false)
        let identity: AppleIdentityToken
        do {
            identity = try await keys.verify(token, as: AppleIdentityToken.self, expectedAudience: bundleID)
        } catch let error as JWTError where error.errorType == .unknownKID {
            identity = try await verifyAfterReload(token)
        } catch {
            throw AppleIdentityError.invalid
        }
        return AppleIdentity(subject: identity.subject.value, email: identity.email)
    }

    private func verifyAfterReload(_ token: String) async throws -> AppleIdentityToken {
        do {
            return try await keySet(reload: true).verify(token, as: AppleIdentityToken.self, expectedAudience: bundleID)
        } catch let error as AppleIdentityError {
            throw error
        } catch {
            throw AppleIdentityError.invalid
        }
    }

    private func keySet(reload: Bool) async throws -> JWTKeyCollection {
        let (cached, loadedAt) = state.withLock { $0 }
        if let cached, !reload || (loadedAt.map { ContinuousClock.now - $0 < .seconds(60) } ?? false) {
            return cached
        }
        let json: String
        do {
            switch source {
            case .json(let text):
                json = text
            case .file(let path):
                json = try String(contentsOfFile: path, encoding: .utf8)
            case .url(let url):
                let (data, _) = try await URLSession.shared.data(from: url)
                json = String(decoding: data, as: UTF8.self)
            }
        } catch {
            throw AppleIdentityError.keysUnavailable
        }
        let keys = JWTKeyCollection()
        do {
            try await keys.add(jwksJSON: json)
        } catch {
            throw AppleIdentityError.keysUnavailable
        }
        state.withLock { $0 = (keys, .now) }
        return keys
    }
}

package enum AppleIdentityError: Error, Sendable {
    /// The token is malformed, forged, expired, or for another app.
    case invalid
    /// Apple's key set could not be loaded.
    case keysUnavailable
}
