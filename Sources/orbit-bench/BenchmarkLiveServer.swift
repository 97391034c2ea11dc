import ArgumentParser
import Foundation
import HummingbirdWSClient
import Logging
import OrbitAPI
import OrbitCore
import ServiceLifecycle

/// The real API server and WebSocket clients of the socket benchmarks (`live`, `chat`).
enum BenchmarkLiveServer {
    /// Errors only: the benchmarks print their own tables.
    static var logger: Logger {
        var logger = Logger(label: "orbit-bench")
        logger.logLevel = .error
        return logger
    }

    /// Runs the API over `services` on a free port (heartbeats a minute apart) until `body`
    /// returns, then shuts it down (which closes the services' pool). `clients`: the sockets
    /// this process opens to it. The process holds both ends of each, so it raises its limit on
    /// open files to fit them (where it may), and the server's connection limit leaves the
    /// clients' descriptors out: past it the server refuses politely (503) rather than the
    /// process running out of descriptors (libdispatch traps then: SIGILL).
    static func run(_ services: OrbitServices, clients: Int = 0, _ body: (OrbitAPI, Int) async throws -> Void) async throws {
        let files = FileLimit.raise(needing: 2 * clients + 1024)
        var configuration = APIConfiguration()
        configuration.port = 0
        configuration.liveHeartbeat = .seconds(60)
        configuration.connectionLimit = .derived(files: files - clients, databaseConnections: 16)
        if let limit = configuration.connectionLimit, limit.maximum < clients {
            print("note: \(files) open files allowed; the server serves \(limit.maximum) connections, fewer than the \(clients) clients")
        }
        let api = try OrbitAPI(
            services: services, configuration: configuration, tokens: try await AccessTokens(secret: AccessTokens.randomSecret()),
            appleVerifier: AppleJWKSVerifier(source: .json(#"{"keys": []}"#), bundleID: "bench"))
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = api.makeApplication(logger: logger, onRunning: { portContinuation.yield($0) })
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw ValidationError("the API did not start") }
            try await body(api, port)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    /// Runs `orbitctl serve` (the one built next to this binary) as a process of its own on a free
    /// port, over `database` (a libpq conninfo), until `body` returns: the clients of this process
    /// then hold one end of each socket and the server the other, each within its own limit on
    /// open files. `body` gets the tokens' issuer (the server's secret, given to it as
    /// ORBIT_JWT_SECRET) and the port.
    /// `body` gets the tokens' issuer, the server's port and its process id.
    static func runProcess(database: String, _ body: (AccessTokens, Int, Int32) async throws -> Void) async throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: "orbitctl")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw ValidationError("\(executable.path) not found: build it first (swift build -c release --product orbitctl)")
        }
        let port = try BenchmarkServer.freeTCPPort()
        let secret = AccessTokens.randomSecret().map { String(format: "%02x", $0) }.joined()
        let process = Process()
        process.executableURL = executable
        process.arguments = ["serve", "--database-url", database, "--host", "127.0.0.1", "--port", String(port), "--no-jobs", "--log-level", "error"]
        process.environment = ProcessInfo.processInfo.environment.merging(["ORBIT_JWT_SECRET": secret]) { $1 }
        try process.run()
        do {
            // Up once it accepts a connection (at most 60 s).
            let deadline = ContinuousClock.now + .seconds(60)
            while !accepts(port: port) {
                guard process.isRunning, ContinuousClock.now < deadline else { throw ValidationError("orbitctl serve did not start") }
                try await Task.sleep(for: .milliseconds(100))
            }
            try await body(try await AccessTokens(secret: Array(secret.utf8)), port, process.processIdentifier)
        } catch {
            process.terminate()
            process.waitUntilExit()
            throw error
        }
        process.terminate()
        process.waitUntilExit()
    }

    /// Whether something on 127.0.0.1 accepts a TCP connection on `port`.
    private static func accepts(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// A WebSocket client on `GET /live` of `port` as `token`: `opened` once connected, then
    /// `received` with each text message, until the task is cancelled.
    static func listen(
        port: Int, token: String, opened: @escaping @Sendable () -> Void, received: @escaping @Sendable (String) async throws -> Void
    ) async throws {
        try await converse(port: port, token: token, opened: opened) { (text: String) -> String? in
            try await received(text)
            return nil
        }
    }

    /// As `listen`, sending back on the socket what `answer` returns for a message.
    static func converse(
        port: Int, token: String, opened: @escaping @Sendable () -> Void, answer: @escaping @Sendable (String) async throws -> String?
    ) async throws {
        try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(port)/live", configuration: .init(maxFrameSize: 1 << 20, additionalHeaders: [.authorization: "Bearer \(token)"]),
            logger: logger
        ) { inbound, outbound, _ in
            opened()
            for try await message in inbound.messages(maxSize: 1 << 20) {
                guard case .text(let text) = message, let reply = try await answer(text) else { continue }
                try await outbound.write(.text(reply))
            }
        }
    }
}
