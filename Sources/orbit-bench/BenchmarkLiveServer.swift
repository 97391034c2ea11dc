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
    /// returns, then shuts it down (which closes the services' pool).
    static func run(_ services: OrbitServices, _ body: (OrbitAPI, Int) async throws -> Void) async throws {
        var configuration = APIConfiguration()
        configuration.port = 0
        configuration.liveHeartbeat = .seconds(60)
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
        try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(port)/live", configuration: .init(additionalHeaders: [.authorization: "Bearer \(token)"]), logger: logger
        ) { inbound, _, _ in
            opened()
            for try await message in inbound.messages(maxSize: 1 << 16) {
                if case .text(let text) = message { try await received(text) }
            }
        }
    }
}
