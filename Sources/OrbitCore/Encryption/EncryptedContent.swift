package import Foundation

/// Content a client encrypted for its community (docs/e2e.md): the ciphertext as sent, which the
/// server stores and returns byte for byte and never reads, and the version of the community key
/// it was encrypted with.
package struct EncryptedContent: Sendable, Equatable {
    package var ciphertext: Data
    package var keyVersion: Int

    /// At most 64 KiB of ciphertext: a post's 10,000 characters of text and then some.
    package static let maximumSize = 65_536

    package init(ciphertext: Data, keyVersion: Int) {
        self.ciphertext = ciphertext
        self.keyVersion = keyVersion
    }

    /// The content of a request: `content_encrypted` (standard base64) and `encryption_version`,
    /// both or neither.
    /// - Throws: `ServiceError.invalidInput` naming the field.
    package static func parse(base64: String?, version: Int?) throws -> EncryptedContent? {
        switch (base64, version) {
        case (nil, nil):
            return nil
        case (nil, _?):
            throw ServiceError.invalidInput(field: "content_encrypted", reason: "is required with encryption_version")
        case (_?, nil):
            throw ServiceError.invalidInput(field: "encryption_version", reason: "is required with content_encrypted (the key version)")
        case (let text?, let version?):
            guard let data = Data(base64Encoded: text), !data.isEmpty else {
                throw ServiceError.invalidInput(field: "content_encrypted", reason: "must be the ciphertext in base64 (RFC 4648, with padding)")
            }
            guard data.count <= maximumSize else {
                throw ServiceError.invalidInput(field: "content_encrypted", reason: "must be at most \(maximumSize) bytes")
            }
            guard (1...1_000_000).contains(version) else {
                throw ServiceError.invalidInput(field: "encryption_version", reason: "must be a key version, 1 or more")
            }
            return EncryptedContent(ciphertext: data, keyVersion: version)
        }
    }
}

extension EncryptedContent {
    /// A client's content is text or ciphertext, not both (`required`: one of them): posts,
    /// comments and chat messages alike. `field` names the text's field in the refusal.
    static func requireOneForm(_ content: String?, _ encrypted: EncryptedContent?, field: String = "content", required: Bool = false) throws {
        if content != nil && encrypted != nil {
            throw ServiceError.invalidInput(
                field: field, reason: "must be left out when content_encrypted is sent (ciphertext or plaintext, not both)")
        }
        if required && content == nil && encrypted == nil {
            throw ServiceError.invalidInput(field: field, reason: "is required (or content_encrypted with encryption_version)")
        }
    }
}
