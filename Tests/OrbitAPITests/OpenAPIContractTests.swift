import Foundation
import Hummingbird
import OrbitAPI
import OrbitCore
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

    @Test("docs/api.md lists every operation of the document, and nothing else")
    func docsListEveryOperation() throws {
        let root = URL(fileURLWithPath: Self.documentPath).deletingLastPathComponent()
        let documented = Self.documentedOperations(try String(contentsOfFile: Self.documentPath, encoding: .utf8))
        // The operation tables' rows: "| METHOD | `/path` | ...".
        var listed: Set<String> = []
        for line in try String(contentsOf: root.appending(path: "docs/api.md"), encoding: .utf8).split(separator: "\n") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2, ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(cells[0]),
                cells[1].hasPrefix("`/"), cells[1].hasSuffix("`")
            else { continue }
            listed.insert("\(cells[0]) \(cells[1].dropFirst().dropLast())")
        }
        #expect(documented.subtracting(listed).sorted() == [], "in openapi.yaml, missing from docs/api.md")
        #expect(listed.subtracting(documented).sorted() == [], "in docs/api.md, not in openapi.yaml")
    }

    /// The values of a component schema's multi-line `enum: [ … ]`.
    static func documentedEnum(_ schema: String) throws -> Set<String> {
        let yaml = try String(contentsOfFile: documentPath, encoding: .utf8)
        let start = try #require(yaml.range(of: "\n    \(schema):\n"))
        let open = try #require(yaml.range(of: "enum: [", range: start.upperBound..<yaml.endIndex))
        let close = try #require(yaml.range(of: "]", range: open.upperBound..<yaml.endIndex))
        return Set(
            yaml[open.upperBound..<close.lowerBound].split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                .filter { !$0.isEmpty })
    }

    @Test("Currency lists exactly the codes the server accepts")
    func currenciesAreTheServers() throws {
        let documented = try Self.documentedEnum("Currency")
        #expect(documented == Set(Currency.exponents.keys))
        #expect(documented.contains("EUR") && documented.contains("JPY") && !documented.contains("usd"))
    }

    @Test("every TimeZoneName the document lists is accepted, Asia/Kolkata and its old name among them")
    func timeZoneNamesAreTheServers() throws {
        let documented = try Self.documentedEnum("TimeZoneName")
        #expect(documented.subtracting(CommunitySettings.timeZoneNames).sorted() == [])
        for name in ["America/New_York", "UTC", "Asia/Kolkata", "Asia/Calcutta", "Europe/Kyiv"] {
            #expect(documented.contains(name), "\(name)")
        }
        #expect(!documented.contains("EST") && !documented.contains("Etc/GMT+5"))
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
