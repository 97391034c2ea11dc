import Foundation
import LocalPostgres
import OrbitTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("orbitctl serve")
struct ServeTests {
    /// A running `orbitctl serve`: its URL (from the banner it prints) and, once stopped, its
    /// exit status and its log (stderr).
    final class Server {
        let process = Process()
        let output = Pipe()
        let errors = Pipe()
        let banner: String
        let url: String

        init(_ arguments: [String]) async throws {
            process.executableURL = URL(fileURLWithPath: Orbitctl.path)
            process.arguments = ["serve", "--port", "0", "--no-jobs"] + arguments
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            // "OrbitCove API listening on http://127.0.0.1:PORT". Read on a Dispatch thread:
            // blocking reads on the cooperative pool can starve other tests.
            banner = await OrbitctlProcess.firstLine(of: output)
            guard let url = banner.split(separator: " ").last.map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }) else {
                process.terminate()
                throw CommandFailed(description: "no address in \(banner)")
            }
            self.url = url
        }

        deinit { if process.isRunning { process.terminate() } }

        func status(of path: String) async throws -> (body: String, status: Int?) {
            let (body, response) = try await URLSession.shared.data(from: try #require(URL(string: url + path)))
            return (String(decoding: body, as: UTF8.self), (response as? HTTPURLResponse)?.statusCode)
        }

        /// Sends SIGTERM, waits for the exit (on a Dispatch thread), and returns the log.
        func stop() async -> String {
            let process = self.process
            process.terminate()
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    process.waitUntilExit()
                    continuation.resume()
                }
            }
            return String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
    }

    struct CommandFailed: Error, CustomStringConvertible { var description: String }

    @Test("serve answers on the port it prints, logs JSON lines, and exits 0 on SIGTERM")
    func serveAnswersOnThePortItPrints() async throws {
        try await withTestDatabase { database in
            let server = try await Server(["--database-url", database.connectionString])
            #expect(server.banner.hasPrefix("OrbitCove API listening on http://127.0.0.1:"))

            let ready = try await server.status(of: "/readyz")
            #expect(ready.status == 200)
            #expect(ready.body.contains(#""migrations":"current""#))

            let log = await server.stop()
            #expect(server.process.terminationStatus == 0)
            let requestLine = try #require(log.split(separator: "\n").first { $0.contains(#""message":"request""#) })
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(requestLine.utf8)) as? [String: Any])
            #expect(entry["route"] as? String == "/readyz")
            #expect(entry["status"] as? String == "200")
            #expect((entry["request_id"] as? String)?.isEmpty == false)
        }
    }

    @Test("at --log-level warning a 5xx is still logged with its route and status, and a 2xx is not")
    func serverErrorsAreLoggedAtWarning() async throws {
        try await withTestDatabase { database in
            let server = try await Server(["--log-level", "warning", "--database-url", database.connectionString])
            #expect(try await server.status(of: "/healthz").status == 200)
            // A pending migration makes /readyz answer 503.
            try await database.withConnection { connection in
                try await connection.query("DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)")
            }
            #expect(try await server.status(of: "/readyz").status == 503)

            let log = await server.stop()
            let entries = log.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            let failed = entries.filter { $0["message"] as? String == "request failed" }
            #expect(failed.count == 1, "\(log)")
            #expect(failed.first?["route"] as? String == "/readyz" && failed.first?["status"] as? String == "503")
            #expect(failed.first?["level"] as? String == "warning", "\(failed)")
            #expect(!entries.contains { $0["message"] as? String == "request" }, "a 2xx is logged only at info")
        }
    }

    @Test("dev auth on a public address is refused in one sentence")
    func devAuthOnAPublicAddressIs() async throws {
        let result = try await Subprocess.run(
            Orbitctl.path, ["serve", "--host", "0.0.0.0", "--dev-auth", "--database-url", "postgresql://localhost/none"], separateErrors: true
        )
        #expect(!result.succeeded)
        #expect(result.errors.contains("--dev-auth"))
        #expect(result.errors.contains("localhost"))
    }
}
