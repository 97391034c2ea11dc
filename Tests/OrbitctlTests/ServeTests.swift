import Foundation
import LocalPostgres
import OrbitTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("orbitctl serve")
struct ServeTests {
    @Test("serve answers on the port it prints, logs JSON lines, and exits 0 on SIGTERM")
    func serveAnswersOnThePortItPrints() async throws {
        try await withTestDatabase { database in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Orbitctl.path)
            process.arguments = ["serve", "--port", "0", "--no-jobs", "--database-url", database.connectionString]
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            defer { if process.isRunning { process.terminate() } }

            // "OrbitCove API listening on http://127.0.0.1:PORT". Read on a Dispatch thread:
            // blocking reads on the cooperative pool can starve other tests.
            let banner = await OrbitctlProcess.firstLine(of: output)
            let url = try #require(banner.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
            #expect(banner.hasPrefix("OrbitCove API listening on http://127.0.0.1:"))

            let (body, response) = try await URLSession.shared.data(from: try #require(URL(string: url + "/readyz")))
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            #expect(String(decoding: body, as: UTF8.self).contains(#""migrations":"current""#))

            process.terminate()
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    process.waitUntilExit()
                    continuation.resume()
                }
            }
            #expect(process.terminationStatus == 0)
            let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
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
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Orbitctl.path)
            process.arguments = ["serve", "--port", "0", "--no-jobs", "--log-level", "warning", "--database-url", database.connectionString]
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            defer { if process.isRunning { process.terminate() } }
            let banner = await OrbitctlProcess.firstLine(of: output)
            let url = try #require(banner.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })

            let (_, healthy) = try await URLSession.shared.data(from: try #require(URL(string: url + "/healthz")))
            #expect((healthy as? HTTPURLResponse)?.statusCode == 200)
            // A pending migration makes /readyz answer 503.
            try await database.withConnection { connection in
                try await connection.query("DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)")
            }
            let (_, notReady) = try await URLSession.shared.data(from: try #require(URL(string: url + "/readyz")))
            #expect((notReady as? HTTPURLResponse)?.statusCode == 503)

            process.terminate()
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    process.waitUntilExit()
                    continuation.resume()
                }
            }
            let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
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
