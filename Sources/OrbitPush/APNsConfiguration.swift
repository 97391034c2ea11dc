package import Foundation
package import OrbitCore

/// What `orbitctl serve` needs to send pushes through APNs with token authentication: the
/// `.p8` signing key from the Apple Developer account, its key id and the team id.
package struct APNsConfiguration: Sendable {
    /// The key as Apple hands it out (PEM, `-----BEGIN PRIVATE KEY-----`).
    package var keyPEM: String
    /// The 10-character id of the key (the JWT's `kid`).
    package var keyID: String
    /// The 10-character team id (the JWT's `iss`).
    package var teamID: String
    /// The environments this server sends to; devices registered for another are skipped.
    package var environments: Set<APNsEnvironment>
    /// Where each environment's provider API is. Apple's by default; tests point both at a
    /// local server.
    package var hosts: [APNsEnvironment: URL] = [
        .production: URL(string: "https://api.push.apple.com")!,
        .sandbox: URL(string: "https://api.sandbox.push.apple.com")!,
    ]
    /// PEM certificates to trust instead of the system's (tests only).
    package var trustRootsPEM: [String]?
    /// How long connecting may take (a refused connection is retried within it).
    package var connectTimeout: Duration = .seconds(10)
    /// How long one request may take, connecting included.
    package var requestTimeout: Duration = .seconds(30)

    package init(keyPEM: String, keyID: String, teamID: String, environments: Set<APNsEnvironment>) throws {
        guard keyID.count == 10, keyID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw APNsConfigurationError("the APNs key id is the 10 letters and digits Apple shows with the key, not \"\(keyID)\"")
        }
        guard teamID.count == 10, teamID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw APNsConfigurationError("the team id is the 10 letters and digits of the Apple Developer account, not \"\(teamID)\"")
        }
        guard !environments.isEmpty else { throw APNsConfigurationError("name at least one APNs environment") }
        self.keyPEM = keyPEM
        self.keyID = keyID
        self.teamID = teamID
        self.environments = environments
    }
}

/// A setting APNs delivery cannot start with.
package struct APNsConfigurationError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
