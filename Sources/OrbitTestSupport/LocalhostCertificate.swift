import Crypto
import Foundation
package import NIOSSL
import SwiftASN1
import X509

/// A self-signed certificate for `localhost`, made for one test server that speaks TLS (the
/// local APNs, the local Stripe): what the server presents, and what its client is told to trust.
package struct LocalhostCertificate: Sendable {
    /// The certificate, PEM: the client's only trust root.
    package let pem: String
    /// The server's side: the certificate and its key.
    package let serverTLS: TLSConfiguration

    package init() throws {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("localhost") }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: Date().addingTimeInterval(-3600),
            notValidAfter: Date().addingTimeInterval(86_400), issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { SubjectAlternativeNames([.dnsName("localhost")]) },
            issuerPrivateKey: .init(key))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        let der = serializer.serializedBytes
        pem = PEMDocument(type: "CERTIFICATE", derBytes: der).pemString
        serverTLS = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: der, format: .der))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem)))
    }
}
