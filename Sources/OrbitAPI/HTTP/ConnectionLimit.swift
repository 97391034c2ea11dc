import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How many client connections the server holds at once (issue 38).
///
/// A process that runs out of file descriptors does not fail politely: libdispatch's thread-pool
/// monitor traps (SIGILL) when it cannot open a file, so a server that accepted every socket died
/// at its limit. The server therefore keeps its sockets below the limit, with room left for the
/// database pool, the LISTEN connection, media files and logs:
/// - up to `maximum` connections are served;
/// - up to `refusing` more are answered `503` with `Retry-After` (a `/live` upgrade too, so it
///   never becomes a socket) and closed;
/// - beyond that, the server stops accepting until a connection closes (the kernel queues them).
package struct ConnectionLimit: Sendable, Equatable {
    package var maximum: Int
    package var refusing: Int

    package init(maximum: Int, refusing: Int) {
        self.maximum = maximum
        self.refusing = refusing
    }

    /// Descriptors kept for everything that is not a client connection, besides the pool's.
    static let reserved = 64

    /// The limit for a process allowed `files` descriptors whose database pools hold up to
    /// `databaseConnections`: a sixteenth (at most 64) for refusals, the rest less the reserve for
    /// connections (at least 1).
    package static func derived(files: Int, databaseConnections: Int) -> ConnectionLimit {
        let refusing = min(64, max(4, files / 16))
        return ConnectionLimit(maximum: max(1, files - reserved - databaseConnections - refusing), refusing: refusing)
    }

    /// How long a refused connection has to send its request before it is closed.
    static let refusalDeadline: TimeAmount = .seconds(5)
    /// The `Retry-After` of a refusal, in seconds.
    static let retryAfter = 2
}

/// The process's limit on open files.
package enum FileLimit {
    /// Raises the soft limit on open files to the hard limit (as far as the kernel allows) and
    /// returns the soft limit then in force.
    @discardableResult
    package static func raise() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// Raises the limit on open files to at least `needed` where the process may raise its hard
    /// limit too (a privileged process, up to the kernel's `nr_open`), else as `raise()` does;
    /// returns the soft limit then in force. For a process that holds both ends of its sockets
    /// (the benchmarks' clients and server).
    @discardableResult
    package static func raise(needing needed: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return raise() }
        if limit.rlim_max < rlim_t(needed) {
            var raised = limit
            raised.rlim_max = rlim_t(needed)
            raised.rlim_cur = rlim_t(needed)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return needed }
        }
        return raise()
    }
}

/// Counts the served connections and decides, as each is accepted, whether it is served.
final class ConnectionGate: Sendable {
    let limit: ConnectionLimit
    private let served = Atomic<Int>(0)

    init(_ limit: ConnectionLimit) {
        self.limit = limit
    }

    /// Takes a place if one is free.
    func admit() -> Bool {
        var current = served.load(ordering: .relaxed)
        while current < limit.maximum {
            let (exchanged, original) = served.compareExchange(expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
        return false
    }

    func release() {
        served.subtract(1, ordering: .acquiringAndReleasing)
    }

    var count: Int { served.load(ordering: .relaxed) }

    /// Stops the listener from accepting beyond the served and the refused connections.
    var acceptance: MaximumAvailableConnections {
        MaximumAvailableConnections(limit.maximum + limit.refusing)
    }
}

/// The server's child channel (HTTP/1.1 with the `/live` upgrade) behind the gate: a connection
/// past the limit gets a `503` instead.
struct GatedChildChannel<Inner: ServerChildChannel>: ServerChildChannel {
    enum Value: ServerChildChannelValue {
        case served(Inner.Value)
        case refused(any Channel)

        var channel: any Channel {
            switch self {
            case .served(let value): value.channel
            case .refused(let channel): channel
            }
        }
    }

    let inner: Inner
    /// No gate: every connection is served.
    let gate: ConnectionGate?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard let gate else { return inner.setup(channel: channel, logger: logger).map { .served($0) } }
        if gate.admit() {
            let gate = gate
            channel.closeFuture.whenComplete { _ in gate.release() }
            return inner.setup(channel: channel, logger: logger).map { .served($0) }
        }
        logger.debug("connection refused: at the connection limit", metadata: ["limit": "\(gate.limit.maximum)"])
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(RefusalHandler())
            return .refused(channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        switch value {
        case .served(let value):
            await inner.handle(value: value, logger: logger)
        case .refused(let channel):
            do {
                try await channel.closeFuture.get()
            } catch {
                logger.debug("a refused connection closed with an error", metadata: ["error": "\(error)"])
            }
        }
    }
}

/// Reads a request's head, answers `503` with `Retry-After`, and closes; a connection that sends
/// no complete head in time is closed.
final class RefusalHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var head: [UInt8] = []
    private var answered = false

    static let response: String = {
        let body =
            #"{"type":"\#(APIProblem.typeBase)unavailable","title":"Service unavailable","status":503,"#
            + #""detail":"The server is at its connection limit; try again in \#(ConnectionLimit.retryAfter) seconds.","#
            + #""retry_after":\#(ConnectionLimit.retryAfter)}"#
        return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\n"
            + "Retry-After: \(ConnectionLimit.retryAfter)\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
    }()

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        context.eventLoop.scheduleTask(in: ConnectionLimit.refusalDeadline) { channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        var buffer = unwrapInboundIn(data)
        head += buffer.readBytes(length: buffer.readableBytes) ?? []
        // The end of the head, or more than any head may be: answer.
        guard head.count > 16_384 || Self.containsEnd(head) else { return }
        answered = true
        head = []
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: Self.response))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    private static func containsEnd(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 4 else { return false }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return true
        }
        return false
    }
}
