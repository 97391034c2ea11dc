package import Foundation

/// The PostgreSQL server programs on this machine (`initdb`, `pg_ctl`, `postgres`).
package struct PostgresInstallation: Sendable {
    /// The directory holding the programs, for example `/usr/lib/postgresql/15/bin`.
    package let binDirectory: String

    package init(binDirectory: String) {
        self.binDirectory = binDirectory
    }

    /// The path of one of the programs.
    package func program(_ name: String) -> String { "\(binDirectory)/\(name)" }

    /// Finds the server programs: `$ORBIT_PG_BINDIR`, `pg_config --bindir`, the newest
    /// `/usr/lib/postgresql/*/bin` (Debian, Ubuntu), then `PATH`.
    /// - Throws: `LocalPostgresError` saying which package to install when none is found.
    package static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PostgresInstallation {
        var candidates: [String] = []
        if let explicit = environment["ORBIT_PG_BINDIR"], !explicit.isEmpty { candidates.append(explicit) }
        if let pgConfig = Subprocess.which("pg_config"),
            let output = try? Subprocess.runBlocking(pgConfig, ["--bindir"]), output.succeeded
        {
            candidates.append(output.output.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        candidates.append(contentsOf: debianBinDirectories())
        if let initdb = Subprocess.which("initdb") {
            candidates.append((initdb as NSString).deletingLastPathComponent)
        }
        for directory in candidates where isComplete(directory) {
            return PostgresInstallation(binDirectory: directory)
        }
        throw LocalPostgresError(
            "PostgreSQL server programs (initdb, pg_ctl, postgres) were not found. "
                + "Install them with: sudo apt-get install -y postgresql (Debian/Ubuntu) or brew install postgresql@15 (macOS), "
                + "or set ORBIT_PG_BINDIR to their directory."
        )
    }

    /// `/usr/lib/postgresql/<version>/bin`, newest version first.
    private static func debianBinDirectories() -> [String] {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return
            versions
            .compactMap { name in Int(name).map { ($0, "\(root)/\(name)/bin") } }
            .sorted { $0.0 > $1.0 }
            .map(\.1)
    }

    private static func isComplete(_ directory: String) -> Bool {
        ["initdb", "pg_ctl", "postgres"].allSatisfy {
            FileManager.default.isExecutableFile(atPath: "\(directory)/\($0)")
        }
    }
}
