import Foundation

/// The operating-system user a local PostgreSQL server runs as.
///
/// PostgreSQL refuses to run as root. As root, the server runs as the `postgres` system user
/// (created by Debian's postgresql package) through `runuser`; as anyone else it runs as that user.
package struct ServerAccount: Sendable {
    package let name: String
    package let uid: UInt32
    package let gid: UInt32
    /// `runuser`, when programs must switch to `name`; nil when we already are that user.
    let runuser: String?

    /// The account for this process: `postgres` when running as root, otherwise the current user.
    /// - Throws: `LocalPostgresError` when running as root without a `postgres` user or `runuser`.
    package static func current() throws -> ServerAccount {
        let uid = geteuid()
        guard uid == 0 else {
            let name = passwordEntry(uid: uid)?.name ?? ProcessInfo.processInfo.userName
            return ServerAccount(name: name, uid: uid, gid: getegid(), runuser: nil)
        }
        guard let entry = passwordEntry(name: "postgres") else {
            throw LocalPostgresError(
                "running as root, PostgreSQL must run as the 'postgres' system user, which does not exist. "
                    + "Install the server (sudo apt-get install -y postgresql) or run as an ordinary user."
            )
        }
        guard
            let runuser = Subprocess.which("runuser")
                ?? ["/usr/sbin/runuser", "/sbin/runuser"].first(where: {
                    FileManager.default.isExecutableFile(atPath: $0)
                })
        else {
            throw LocalPostgresError("running as root needs runuser (util-linux) to start PostgreSQL as 'postgres'.")
        }
        return ServerAccount(name: entry.name, uid: entry.uid, gid: entry.gid, runuser: runuser)
    }

    /// True when programs are run as another user than this process.
    package var switchesUser: Bool { runuser != nil }

    /// Runs `executable` as this account.
    func run(_ executable: String, _ arguments: [String]) async throws -> ProcessOutput {
        if let runuser {
            return try await Subprocess.run(runuser, ["-u", name, "--", executable] + arguments)
        }
        return try await Subprocess.run(executable, arguments)
    }

    /// Creates `path` (and missing parents) and makes it this account's, mode 0700.
    func makePrivateDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        if switchesUser {
            guard chown(path, uid, gid) == 0 else {
                throw LocalPostgresError("could not give \(path) to the \(name) user: \(String(cString: strerror(errno)))")
            }
        }
        guard chmod(path, 0o700) == 0 else {
            throw LocalPostgresError("could not set the permissions of \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Whether this account can enter and write `directory` (every parent must be traversable).
    func canUse(_ directory: String) async -> Bool {
        await test(["-w", directory, "-a", "-x", directory])
    }

    /// Whether this account can enter `directory`, so that a folder of its own inside it works.
    func canReach(_ directory: String) async -> Bool {
        await test(["-x", directory])
    }

    private func test(_ expression: [String]) async -> Bool {
        guard let runuser else {
            return (try? await Subprocess.run("/usr/bin/test", expression))?.succeeded ?? false
        }
        let result = try? await Subprocess.run(runuser, ["-u", name, "--", "/usr/bin/test"] + expression)
        return result?.succeeded ?? false
    }

    private struct PasswordEntry {
        var name: String
        var uid: UInt32
        var gid: UInt32
    }

    private static func passwordEntry(name: String) -> PasswordEntry? {
        guard let entry = getpwnam(name) else { return nil }
        return PasswordEntry(name: String(cString: entry.pointee.pw_name), uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    private static func passwordEntry(uid: uid_t) -> PasswordEntry? {
        guard let entry = getpwuid(uid) else { return nil }
        return PasswordEntry(name: String(cString: entry.pointee.pw_name), uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }
}
