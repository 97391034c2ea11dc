import Foundation

/// The schema's SQL files: versioned migrations in version order, then repeatable files in
/// name order. `sql/seed/` (demo data for `orbitctl dev`) is not part of the schema.
package struct MigrationCatalog: Sendable {
    package let migrations: [SQLFile]
    package let repeatables: [SQLFile]
    /// Files under `sql/seed/`, in name order.
    package let seeds: [SQLFile]

    /// The files built into this binary (the package's `migrations/` and `sql/` at build time).
    package static func embedded() throws -> MigrationCatalog {
        try MigrationCatalog(files: EmbeddedSQLFiles.files())
    }

    /// The files of `directory`, a folder holding `migrations/` and optionally `sql/`.
    package static func load(directory: String) throws -> MigrationCatalog {
        let root = URL(fileURLWithPath: directory, isDirectory: true).standardizedFileURL
        let migrationsFolder = root.appending(path: "migrations")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: migrationsFolder.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw MigrationError(.invalidFile, message: "\(directory) has no migrations/ folder")
        }
        var files: [(path: String, bytes: Data)] = []
        for folder in ["migrations", "sql"] {
            let url = root.appending(path: folder)
            guard let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil) else { continue }
            for case let file as URL in enumerator where file.pathExtension == "sql" {
                let relative = String(file.standardizedFileURL.path.dropFirst(root.path.count).drop { $0 == "/" })
                do {
                    files.append((relative, try Data(contentsOf: file)))
                } catch {
                    throw MigrationError(.invalidFile, file: relative, message: "cannot read \(file.path): \(error.localizedDescription)")
                }
            }
        }
        return try MigrationCatalog(files: files)
    }

    init(files: [(path: String, bytes: Data)]) throws {
        var migrations: [SQLFile] = []
        var repeatables: [SQLFile] = []
        var seeds: [SQLFile] = []
        for (path, bytes) in files {
            let file = try SQLFile(path: path, bytes: bytes)
            if path.hasPrefix("migrations/") {
                guard !path.dropFirst("migrations/".count).contains("/") else { continue }
                migrations.append(file)
            } else if path.hasPrefix("sql/seed/") {
                seeds.append(file)
            } else if path.hasPrefix("sql/"), !path.dropFirst("sql/".count).contains("/") {
                repeatables.append(file)
            }
        }
        migrations.sort { ($0.version ?? 0, $0.path) < ($1.version ?? 0, $1.path) }
        for (previous, next) in zip(migrations, migrations.dropFirst()) where previous.version == next.version {
            throw MigrationError(
                .invalidFile, file: next.path,
                message: "\(previous.path) and \(next.path) have the same version number"
            )
        }
        self.migrations = migrations
        self.repeatables = repeatables.sorted { $0.path < $1.path }
        self.seeds = seeds.sorted { $0.path < $1.path }
    }

    /// The version the next `migrate new` file gets.
    package var nextVersion: Int { (migrations.last?.version ?? 0) + 1 }
}

/// Filled in by the EmbedFiles build plugin (`EmbeddedSQLFiles.encoded`).
enum EmbeddedSQLFiles {
    static func files() throws -> [(path: String, bytes: Data)] {
        try encoded.map { entry in
            guard let bytes = Data(base64Encoded: entry.base64) else {
                throw MigrationError(.invalidFile, file: entry.path, message: "the embedded copy of \(entry.path) is damaged")
            }
            return (entry.path, bytes)
        }
    }
}
