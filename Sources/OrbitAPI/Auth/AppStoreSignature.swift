import Crypto
package import Foundation
import SwiftASN1
package import X509

/// Verifies the App Store's signed payloads (JWS, compact form): the `x5c` chain in the header
/// up to a configured root (Apple Root CA - G3 in production, a test root in the tests), with
/// Apple's markers on the leaf and the intermediate, each certificate valid now, and the ES256
/// signature of `header.payload` under the leaf's key. What it returns is the payload's bytes;
/// nothing of a payload is read before this passed.
package struct AppStoreSignature: Sendable {
    /// Apple's marker on the certificate that signs App Store payloads (the leaf).
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 11, 1]
    /// Apple's marker on the intermediate (Apple Worldwide Developer Relations CA - G6).
    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 6, 2, 1]

    let roots: [Certificate]
    /// The app whose notifications these are (`data.bundleId`).
    package let bundleID: String
    /// The environments whose notifications change subscriptions (`Production`, `Sandbox`):
    /// a sandbox purchase costs nothing, so production takes only its own by default.
    package let environments: Set<String>

    package init(roots: [Certificate], bundleID: String, environments: Set<String> = ["Production"]) {
        self.roots = roots
        self.bundleID = bundleID
        self.environments = environments
    }

    /// The environments `--app-store-environment` names: `production` (the default), `sandbox` or
    /// `both`; nil for any other name.
    package static func environments(named name: String) -> Set<String>? {
        switch name {
        case "production": ["Production"]
        case "sandbox": ["Sandbox"]
        case "both": ["Production", "Sandbox"]
        default: nil
        }
    }

    /// A root certificate from its file: DER (Apple distributes `AppleRootCA-G3.cer` so) or PEM.
    package static func root(fromFile bytes: [UInt8]) throws -> Certificate {
        if let text = String(validating: bytes, as: UTF8.self), text.contains("-----BEGIN CERTIFICATE-----") {
            return try Certificate(pemEncoded: text)
        }
        return try Certificate(derEncoded: bytes)
    }

    package enum Failure: Error, Equatable, CustomStringConvertible {
        case malformed(String)
        case untrustedChain(String)
        case badSignature

        package var description: String {
            switch self {
            case .malformed(let reason): "The signed payload is malformed: \(reason)."
            case .untrustedChain(let reason): "The payload's certificate chain is not trusted: \(reason)."
            case .badSignature: "The payload's signature does not match its certificate."
            }
        }
    }

    /// The largest notification body read (Apple's are a few kilobytes).
    package static let maximumBody = 64 << 10
    /// The largest certificate of a chain (Apple's are about 1.5 kB).
    static let maximumCertificate = 8 << 10

    /// The payload of `jws` once its chain and signature are verified.
    package func verify(_ jws: String) async throws -> Data {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard jws.utf8.count <= Self.maximumBody else { throw Failure.malformed("larger than \(Self.maximumBody) bytes") }
        guard parts.count == 3 else { throw Failure.malformed("not three base64url parts") }
        guard let headerData = Self.base64URL(parts[0]), let payload = Self.base64URL(parts[1]), let signature = Self.base64URL(parts[2]) else {
            throw Failure.malformed("not base64url")
        }
        guard let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any] else {
            throw Failure.malformed("the header is not a JSON object")
        }
        guard header["alg"] as? String == "ES256" else { throw Failure.malformed("the algorithm is not ES256") }
        // Apple's chain is exactly leaf, intermediate and root, each small: anything else is
        // refused before a certificate is parsed (what one anonymous request can make us do).
        guard let x5c = header["x5c"] as? [String] else { throw Failure.malformed("no certificate chain (x5c)") }
        guard x5c.count == 3, x5c.allSatisfy({ $0.utf8.count <= Self.maximumCertificate }) else {
            throw Failure.malformed(
                "the x5c chain must be three certificates (leaf, intermediate, root) of at most \(Self.maximumCertificate) bytes each")
        }
        var chain: [Certificate] = []
        for encoded in x5c {
            guard let der = Data(base64Encoded: encoded) else { throw Failure.malformed("an x5c entry is not base64") }
            do {
                chain.append(try Certificate(derEncoded: Array(der)))
            } catch {
                throw Failure.malformed("an x5c entry is not a certificate")
            }
        }
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy()
            AppleMarkers()
        }
        let result = await verifier.validate(leaf: chain[0], intermediates: CertificateStore(chain.dropFirst()))
        guard case .validCertificate = result else {
            if case .couldNotValidate(let failures) = result, let first = failures.first {
                throw Failure.untrustedChain(String(describing: first.policyFailureReason))
            }
            throw Failure.untrustedChain("no chain to the configured root")
        }
        guard let key = P256.Signing.PublicKey(chain[0].publicKey),
            let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            key.isValidSignature(ecdsa, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { throw Failure.badSignature }
        return payload
    }

    /// The leaf and the intermediate carry Apple's markers, and the chain is leaf, intermediate,
    /// root: what Apple's own library checks beyond RFC 5280.
    struct AppleMarkers: VerifierPolicy {
        let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []

        func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
            let certificates = Array(chain)
            guard certificates.count == 3 else {
                return .failsToMeetPolicy(reason: "the chain is \(certificates.count) certificates, not leaf, intermediate and root")
            }
            guard certificates[0].extensions[oid: AppStoreSignature.leafMarker] != nil else {
                return .failsToMeetPolicy(reason: "the leaf lacks Apple's App Store marker")
            }
            guard certificates[1].extensions[oid: AppStoreSignature.intermediateMarker] != nil else {
                return .failsToMeetPolicy(reason: "the intermediate lacks Apple's marker")
            }
            return .meetsPolicy
        }
    }

    static func base64URL(_ part: Substring) -> Data? {
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !text.contains("=") else { return nil }
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        return Data(base64Encoded: text)
    }
}
