import Foundation

/// A live `orbitctl dev` in a folder of its own: a throwaway PostgreSQL cluster, migrated and
/// seeded with the demo users (ada, max and zoe @example.com), and the HTTP API with dev auth on a
/// free port of 127.0.0.1.
struct DevServer {
    /// The API's base URL, as `orbitctl dev` printed it.
    let url: URL

    /// The orbitctl to run: `ORBITCTL`, else the root package's debug build.
    static func orbitctl() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["ORBITCTL"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<5 { root.deleteLastPathComponent() }
        return root.appending(path: ".build/debug/orbitctl")
    }
}

/// Why the live server could not be started.
struct DevServerError: Error, CustomStringConvertible {
    var reason: String
    /// The end of what `orbitctl dev` printed, when it ran.
    var output: String = ""

    var description: String {
        output.isEmpty ? reason : "\(reason)\n--- orbitctl dev printed ---\n\(output)"
    }
}

/// Runs `body` against a fresh `orbitctl dev`, which is stopped (with its cluster) and whose folder
/// is deleted on every path.
/// - Throws: `DevServerError` when orbitctl is missing or the API does not come up; whatever
///   `body` throws.
func withDevServer<Result>(_ body: (DevServer) async throws -> Result) async throws -> Result {
    let orbitctl = try DevServer.orbitctl()
    guard FileManager.default.isExecutableFile(atPath: orbitctl.path) else {
        throw DevServerError(
            reason: "No orbitctl at \(orbitctl.path): run scripts/client-test.sh, or set ORBITCTL to a built orbitctl."
        )
    }
    let folder = FileManager.default.temporaryDirectory.appending(path: "orbit-client-test-\(UUID().uuidString.prefix(8))")
    // As root, the cluster runs as the postgres user, who must be able to enter the folder.
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
    defer { try? FileManager.default.removeItem(at: folder) }

    // An empty key set: Sign in with Apple is not used, and nothing is fetched from Apple.
    let appleKeys = folder.appending(path: "apple-keys.json")
    try Data(#"{"keys": []}"#.utf8).write(to: appleKeys)
    let log = folder.appending(path: "dev.log")
    try Data().write(to: log)
    let logHandle = try FileHandle(forWritingTo: log)
    defer { try? logHandle.close() }

    let process = Process()
    process.executableURL = orbitctl
    process.arguments = [
        "dev", "--api-port", "0", "--no-jobs", "--apple-keys", appleKeys.path, "--project-directory", folder.path,
    ]
    process.currentDirectoryURL = folder
    // Its own cluster, whatever database the caller's shell points at (orbitctl honours DATABASE_URL).
    var environment = ProcessInfo.processInfo.environment
    environment["DATABASE_URL"] = nil
    process.environment = environment
    process.standardOutput = logHandle
    process.standardError = logHandle
    try process.run()
    defer { stop(process) }

    let url = try await waitForAPI(of: process, log: log)
    return try await body(DevServer(url: url))
}

/// Waits until `orbitctl dev` prints its API line (`  API         http://127.0.0.1:PORT  …`).
private func waitForAPI(of process: Process, log: URL, timeout: Duration = .seconds(180)) async throws -> URL {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        if let line = output.split(separator: "\n").first(where: { $0.hasPrefix("  API ") }),
            let address = line.split(separator: " ").first(where: { $0.hasPrefix("http://") }),
            let url = URL(string: String(address))
        {
            return url
        }
        guard process.isRunning else {
            throw DevServerError(reason: "orbitctl dev exited with status \(process.terminationStatus)", output: output)
        }
        try await Task.sleep(for: .milliseconds(200))
    }
    let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    throw DevServerError(reason: "orbitctl dev did not serve the API within \(timeout)", output: String(output.suffix(4000)))
}

/// Ctrl-C, as a person would: orbitctl stops the API and then its cluster. SIGKILL after a minute.
/// Blocks (it runs in a `defer`, which cannot await); orbitctl stops within seconds.
private func stop(_ process: Process) {
    guard process.isRunning else { return }
    process.interrupt()
    let deadline = Date().addingTimeInterval(60)
    while process.isRunning, Date() < deadline { usleep(100_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
}
