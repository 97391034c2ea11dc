import Crypto
import Foundation
import OrbitAPI
import SwiftASN1
import X509

/// The App Store's signing, played locally: a root (in production, Apple Root CA - G3), an
/// intermediate and a leaf with Apple's markers, as Apple's chain is made, and payloads signed as
/// App Store Server Notifications V2 are: a compact JWS, ES256 under the leaf's key, the chain in
/// `x5c` (leaf, intermediate, root).
struct TestAppStore: Sendable {
    static let bundleID = "app.orbitcove.tests"

    struct Authority: Sendable {
        var key: P256.Signing.PrivateKey
        var certificate: Certificate
        var der: [UInt8] {
            get throws {
                var serializer = DER.Serializer()
                try serializer.serialize(certificate)
                return serializer.serializedBytes
            }
        }
    }

    var root: Authority
    var intermediate: Authority
    var leaf: Authority

    /// The verifier the server is configured with: this root, the test app.
    var verifier: AppStoreSignature { AppStoreSignature(roots: [root.certificate], bundleID: Self.bundleID) }

    /// A chain as Apple's is made; `markers: false` leaves Apple's markers out, `leafExpired` makes
    /// a leaf whose validity ended yesterday.
    static func make(markers: Bool = true, leafExpired: Bool = false, rootName: String = "Test Root CA - G3") throws -> TestAppStore {
        let now = Date()
        let rootKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName(rootName) }
        let root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: now.addingTimeInterval(-86_400),
            notValidAfter: now.addingTimeInterval(3650 * 86_400), issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            }, issuerPrivateKey: .init(rootKey))

        let intermediateKey = P256.Signing.PrivateKey()
        let intermediateName = try DistinguishedName { CommonName("Test Worldwide Developer Relations CA - G6") }
        var intermediateExtensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        }
        if markers {
            try intermediateExtensions.append(Certificate.Extension(oid: [1, 2, 840, 113_635, 100, 6, 2, 1], critical: false, value: [0x05, 0x00]))
        }
        let intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey), notValidBefore: now.addingTimeInterval(-86_400),
            notValidAfter: now.addingTimeInterval(3650 * 86_400), issuer: rootName, subject: intermediateName,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: intermediateExtensions, issuerPrivateKey: .init(rootKey))

        let leafKey = P256.Signing.PrivateKey()
        let leafName = try DistinguishedName { CommonName("Test Prod ECC Mac App Store and iTunes Store Receipt Signing") }
        var leafExtensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            Critical(KeyUsage(digitalSignature: true))
        }
        if markers {
            try leafExtensions.append(Certificate.Extension(oid: [1, 2, 840, 113_635, 100, 6, 11, 1], critical: false, value: [0x05, 0x00]))
        }
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey),
            notValidBefore: now.addingTimeInterval(leafExpired ? -10 * 86_400 : -86_400),
            notValidAfter: now.addingTimeInterval(leafExpired ? -86_400 : 365 * 86_400), issuer: intermediateName, subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: leafExtensions, issuerPrivateKey: .init(intermediateKey))
        return TestAppStore(
            root: Authority(key: rootKey, certificate: root), intermediate: Authority(key: intermediateKey, certificate: intermediate),
            leaf: Authority(key: leafKey, certificate: leaf))
    }

    /// `payload` as a compact JWS: ES256 under the leaf's key (or `key`), the chain in `x5c`.
    func sign(_ payload: [String: Any], key: P256.Signing.PrivateKey? = nil, algorithm: String = "ES256") throws -> String {
        let header: [String: Any] = [
            "alg": algorithm,
            "x5c": try [leaf.der, intermediate.der, root.der].map { Data($0).base64EncodedString() },
        ]
        let head = try JSONSerialization.data(withJSONObject: header).base64URL
        let body = try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys]).base64URL
        let signature = try (key ?? leaf.key).signature(for: Data("\(head).\(body)".utf8))
        return "\(head).\(body).\(signature.rawRepresentation.base64URL)"
    }

    /// A notification's signed payload, its transaction signed inside it as Apple does;
    /// `community` is the purchase's appAccountToken.
    func notification(
        _ id: String, _ type: String, subtype: String? = nil, signed: Date, originalTransaction: String, community: UUID?,
        expires: Date? = nil, revoked: Date? = nil, bundleID: String = TestAppStore.bundleID, environment: String = "Production"
    ) throws -> String {
        var transaction: [String: Any] = [
            "originalTransactionId": originalTransaction, "transactionId": "\(originalTransaction)-\(id)",
            "productId": "app.orbitcove.community.monthly", "bundleId": bundleID, "type": "Auto-Renewable Subscription",
            "purchaseDate": Int(signed.timeIntervalSince1970 * 1000), "environment": environment,
        ]
        if let community { transaction["appAccountToken"] = community.uuidString.lowercased() }
        if let expires { transaction["expiresDate"] = Int(expires.timeIntervalSince1970 * 1000) }
        if let revoked { transaction["revocationDate"] = Int(revoked.timeIntervalSince1970 * 1000) }
        var payload: [String: Any] = [
            "notificationType": type, "notificationUUID": id, "version": "2.0", "signedDate": Int(signed.timeIntervalSince1970 * 1000),
            "data": [
                "appAppleId": 1_234_567_890, "bundleId": bundleID, "bundleVersion": "42", "environment": environment, "status": 1,
                "signedTransactionInfo": try sign(transaction),
            ] as [String: Any],
        ]
        if let subtype { payload["subtype"] = subtype }
        return try sign(payload)
    }
}
