import Foundation
import Testing

@testable import OrbitMigrations

@Suite("The migration catalog")
struct MigrationCatalogTests {
    @Test("the embedded catalog has contiguous versions and the repeatable files, in order")
    func embedded() throws {
        let catalog = try MigrationCatalog.embedded()
        #expect(catalog.migrations.compactMap(\.version) == Array(1...catalog.migrations.count))
        #expect(catalog.migrations.first?.path == "migrations/0001_roles_and_schemas.sql")
        #expect(!catalog.repeatables.isEmpty)
        #expect(catalog.repeatables.map(\.path) == catalog.repeatables.map(\.path).sorted())
        #expect(catalog.repeatables.allSatisfy { $0.path.hasPrefix("sql/") && !$0.path.hasPrefix("sql/seed/") })
    }

    @Test("the embedded files are byte for byte the package's files")
    func embeddedMatchesDisk() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let disk = try MigrationCatalog.load(directory: root.path)
        let embedded = try MigrationCatalog.embedded()
        #expect(disk.migrations.map(\.checksum) == embedded.migrations.map(\.checksum))
        #expect(disk.repeatables.map(\.checksum) == embedded.repeatables.map(\.checksum))
    }

    @Test("checksums are SHA-256 of the bytes")
    func checksum() throws {
        let file = try SQLFile(path: "migrations/0001_x.sql", bytes: Data("abc".utf8))
        #expect(file.checksum == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(file.version == 1 && file.name == "x")
    }

    @Test(
        "misnamed migration files are refused, naming the file",
        arguments: [
            "migrations/1_short.sql", "migrations/0001-dash.sql", "migrations/0001_Upper.sql", "migrations/abcd_x.sql",
            "migrations/0001_.sql",
        ])
    func misnamed(path: String) {
        #expect {
            try SQLFile(path: path, bytes: Data())
        } throws: { error in
            (error as? MigrationError)?.code == .invalidFile && (error as? MigrationError)?.file == path
        }
    }

    @Test("two migrations with one version are refused")
    func duplicateVersions() {
        #expect(throws: MigrationError.self) {
            try MigrationCatalog(files: [("migrations/0001_a.sql", Data()), ("migrations/0001_b.sql", Data())])
        }
    }
}
