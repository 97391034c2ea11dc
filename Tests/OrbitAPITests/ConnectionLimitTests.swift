import Foundation
import Logging
import OrbitAPI
import OrbitCore
import OrbitTestSupport
import Testing

/// Issue 38: a server that meets more sockets than it has file descriptors must not die (it did:
/// libdispatch traps when open files reach the limit).
@Suite("A server at its limit on open files")
struct ConnectionLimitTests {
    static let secret = "connection-limit-test-secret-0123456789abcdef"

    @Test(
        "orbitctl serve under ulimit -n 256 meets 400 sockets: beyond its limit HTTP is 503 with Retry-After and /live is not upgraded; then /healthz and a member's socket work"
    )
    func serveUnderALowFileLimit() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let tokens = try await AccessTokens(secret: Array(Self.secret.utf8))
            let memberToken = try await tokens.issue(for: cast.member)
            let adminToken = try await tokens.issue(for: cast.admin)

            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = [
                "-c", #"ulimit -n 256 && exec "$0" serve --port 0 --no-jobs --pool-size 4 --database-url "$1""#, OrbitctlProcess.path,
                harness.database.connectionString,
            ]
            var environment = ProcessInfo.processInfo.environment
            environment["ORBIT_JWT_SECRET"] = Self.secret
            process.environment = environment
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            defer { if process.isRunning { process.terminate() } }
            let port = try #require(try await Self.port(from: output))

            // 400 clients, each asking for /healthz on a connection it keeps open.
            let flood = try await offPool {
                try (0..<400).map { _ in
                    let connection = try RawConnection(port: port)
                    connection.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
                    return connection
                }
            }
            let answers = try await offPool { flood.map { $0.readResponse() } }
            let served = answers.filter { $0.hasPrefix("HTTP/1.1 200") }.count
            let refused = answers.filter { $0.hasPrefix("HTTP/1.1 503") && $0.contains("Retry-After: 2") && $0.contains("/problems/unavailable") }
            #expect(served > 100 && served < 256, "served \(served)")
            #expect(served + refused.count == 400, "\(answers.filter { !$0.hasPrefix("HTTP/1.1 200") && !$0.hasPrefix("HTTP/1.1 503") }.prefix(3))")
            #expect(process.isRunning)

            // While they are held, a member's /live upgrade is refused, not upgraded.
            let upgrade = try await offPool {
                let connection = try RawConnection(port: port)
                connection.send(
                    "GET /live HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(memberToken)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                return connection.readResponse()
            }
            #expect(upgrade.hasPrefix("HTTP/1.1 503"), "\(upgrade)")
            #expect(upgrade.contains("Retry-After: 2"))

            // Once they go, the server answers and serves a member's socket. (Closed here, not
            // when the array is released, so that the test knows when they are gone.)
            try await offPool { flood.forEach { $0.close() } }
            let closed = ContinuousClock.now
            try await waitUntil("/healthz answers 200", bound: .seconds(90)) {
                try await rawRequest(port: port, "GET", "/healthz").hasPrefix("HTTP/1.1 200")
            }
            print(
                "ConnectionLimitTests: \(served) served, \(refused.count) refused; /healthz answered 200 \(ContinuousClock.now - closed) after they closed"
            )
            let member = Received()
            try await withThrowingTaskGroup(of: Void.self) { sockets in
                sockets.addTask { try await LiveTests.listen(port: port, token: memberToken, into: member) }
                // The socket is registered at some point after the upgrade: post until it hears.
                // (A refusal with Retry-After is the server at its limit as designed: under load
                // it accepts the flood's last queued connections, already closed by their
                // clients, before it has noticed they are gone. Anything else is a failure.)
                try await waitUntil("the member's socket hears of a post", bound: .seconds(90)) {
                    if member.changes.isEmpty {
                        let posted = try await rawRequest(
                            port: port, "POST", "/communities/\(cast.community)/posts", token: adminToken, json: #"{"content": "After the flood"}"#)
                        #expect(
                            posted.hasPrefix("HTTP/1.1 201") || (posted.hasPrefix("HTTP/1.1 503") && posted.contains("Retry-After: 2")), "\(posted)")
                        try await Task.sleep(for: .milliseconds(200))
                    }
                    return !member.changes.isEmpty
                }
                sockets.cancelAll()
            }
            #expect(process.isRunning)

            process.terminate()
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    process.waitUntilExit()
                    continuation.resume()
                }
            }
            let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(log.contains("serving up to"), "\(log.suffix(2000))")
            #expect(process.terminationStatus == 0, "\(log.suffix(2000))")
        }
    }

    /// The port of "OrbitCove API listening on http://127.0.0.1:PORT".
    static func port(from output: Pipe) async throws -> Int? {
        let banner = await OrbitctlProcess.firstLine(of: output)
        return banner.split(separator: "\n").first?.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }
}
