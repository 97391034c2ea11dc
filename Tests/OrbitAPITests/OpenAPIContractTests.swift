import Foundation
import Hummingbird
import OrbitAPI
import Testing

/// The server and openapi.yaml describe the same API: every route is documented and every
/// documented operation is served.
@Suite("The OpenAPI document and the server agree")
struct OpenAPIContractTests {
    static let documentPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "openapi.yaml").path

    /// "METHOD /path/{param}" for each operation in the document. The document's layout is
    /// fixed: paths at two spaces of indent, methods at four.
    static func documentedOperations(_ yaml: String) -> Set<String> {
        var operations: Set<String> = []
        var inPaths = false
        var path: String?
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" {
                inPaths = true
                continue
            }
            guard inPaths else { continue }
            if !line.isEmpty, !line.hasPrefix(" ") { break }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let method = line.trimmingCharacters(in: .whitespaces).dropLast()
                if ["get", "post", "put", "patch", "delete"].contains(method) { operations.insert("\(method.uppercased()) \(path)") }
            }
        }
        return operations
    }

    @Test("every route of the server is in openapi.yaml and every documented operation is served")
    func everyRouteOfTheServerIsIn() async throws {
        try await withAPI(configure: { $0.devAuth = true }) { harness in
            let yaml = try String(contentsOfFile: Self.documentPath, encoding: .utf8)
            let documented = Self.documentedOperations(yaml)
            let served = Set(harness.api.makeRouter().routes.map { "\($0.method.rawValue) \($0.path)" })
            #expect(documented.count > 60)
            #expect(served.subtracting(documented).sorted() == [], "served but not documented")
            #expect(documented.subtracting(served).sorted() == [], "documented but not served")
        }
    }

    @Test("GET /openapi.yaml serves the document of the repository")
    func getOpenapiYamlServesTheDocumentOf() async throws {
        try await withAPI { harness in
            let response = try await harness.request(.get, "/openapi.yaml")
            #expect(response.status == 200)
            #expect(response.headers[.contentType]?.hasPrefix("application/yaml") == true)
            #expect(response.text == (try String(contentsOfFile: Self.documentPath, encoding: .utf8)))
        }
    }
}
