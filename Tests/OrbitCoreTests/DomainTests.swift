import Foundation
import OrbitCore
import Testing

/// "Adding a domain" (docs/architecture.md) as a test: every domain OrbitCore lists (`Domain`)
/// has each part around its service, or an exemption beside the list that says why; an
/// exemption of a part that exists is stale and fails too, and every folder of OrbitCore is a
/// domain or a named mechanism.
@Suite("Adding a domain: every domain has its parts, or an exemption that says why")
struct DomainTests {
    /// The repository: this file is Tests/OrbitCoreTests/DomainTests.swift.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path, isDirectory: &directory) && directory.boolValue
    }

    static func files(under path: String) throws -> [String] {
        let base = root.appendingPathComponent(path)
        guard let enumerator = FileManager.default.enumerator(atPath: base.path) else { throw CocoaError(.fileNoSuchFile) }
        return enumerator.compactMap { $0 as? String }.map { ($0 as NSString).lastPathComponent }
    }

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    static func has(_ part: Domain.Part, of domain: Domain) throws -> Bool {
        switch part {
        case .coreFolder:
            return isDirectory("Sources/OrbitCore/\(domain.rawValue)")
        case .routes:
            return FileManager.default.fileExists(atPath: root.appendingPathComponent("Sources/OrbitAPI/Routes/\(domain.stem)Routes.swift").path)
        case .commands:
            return isDirectory("Sources/orbitctl/\(domain.rawValue)")
        case .sql:
            return try files(under: "sql").contains {
                $0.range(of: #"^[0-9]{3}_"#, options: .regularExpression) != nil && $0.dropFirst(4) == "\(domain.sqlName).sql"
            }
        case .tests:
            return try files(under: "Tests").contains("\(domain.stem)Tests.swift")
        case .docs:
            return try text("docs/api.md").split(separator: "\n").contains { $0 == "### \(domain.apiSection)" || $0 == "## \(domain.apiSection)" }
        case .authorizationMatrix:
            guard !domain.matrixPath.isEmpty else { return false }
            return try text("Tests/OrbitAPITests/AuthorizationMatrixTests.swift").contains(#"path: "\#(domain.matrixPath)"#)
        }
    }

    @Test("each domain has its Core folder, routes, commands, SQL file, tests, docs section and authorization rows, or says why not")
    func everyDomainHasItsParts() throws {
        var missing: [String] = []
        var stale: [String] = []
        for domain in Domain.allCases {
            for part in Domain.Part.allCases {
                let exemption = domain.exemptions[part]
                let has = try Self.has(part, of: domain)
                if !has && (exemption ?? "").isEmpty { missing.append("\(domain.rawValue): \(part)") }
                if has && exemption != nil { stale.append("\(domain.rawValue): \(part) exists, but is exempted") }
            }
        }
        #expect(missing == [], "add the part, or an exemption with its reason in Sources/OrbitCore/Domains.swift")
        #expect(stale == [], "remove the exemption")
    }

    @Test("every folder of OrbitCore is a domain or a named shared mechanism, never both")
    func everyFolderIsListed() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources/OrbitCore").path)
            .filter { Self.isDirectory("Sources/OrbitCore/\($0)") }
        #expect(Set(folders) == Set(Domain.allCases.map(\.rawValue)).union(Domain.mechanisms.keys))
        #expect(Set(Domain.allCases.map(\.rawValue)).isDisjoint(with: Domain.mechanisms.keys))
    }
}

@Suite("The docs describe the product as it is")
struct DocsTests {
    @Test("no page of the docs tells the history of an issue (\"issue 38\", \"item 4\")")
    func noIssueHistory() throws {
        let pages =
            try FileManager.default.contentsOfDirectory(atPath: DomainTests.root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/\($0)" } + ["README.md", "sql/README.md"]
        var found: [String] = []
        for page in pages {
            for (number, line) in try DomainTests.text(page).split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.range(of: #"\b(issues?|items?) [0-9]"#, options: [.regularExpression, .caseInsensitive]) != nil {
                found.append("\(page):\(number + 1): \(line.prefix(120))")
            }
        }
        #expect(found == [])
    }
}
