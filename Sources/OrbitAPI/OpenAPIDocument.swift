import Foundation

/// `openapi.yaml` of the package root, built in by the EmbedFiles plugin.
enum EmbeddedAPIFiles {}

package enum OpenAPIDocument {
    /// The API's OpenAPI 3.1 document, served at `GET /openapi.yaml`.
    package static let yaml: String = {
        guard let file = EmbeddedAPIFiles.encoded.first, let data = Data(base64Encoded: file.base64) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }()
}
