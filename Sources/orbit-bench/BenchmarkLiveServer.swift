import ArgumentParser
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
