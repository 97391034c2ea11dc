import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import OrbitCore
import OrbitPostgres
import OrbitRuntime
import OrbitTestSupport
import ServiceLifecycle
import Synchronization
import Testing

@testable import OrbitAPI

/// What a test's WebSocket client received.
final class Received: Sendable {
    private let texts = Mutex<[String]>([])
    private let closed = Mutex<Bool>(false)
    private let code = Mutex<String?>(nil)

    func append(_ text: String) { texts.withLock { $0.append(text) } }
    func close(code closeCode: String? = nil) {
        closed.withLock { $0 = true }
        code.withLock { $0 = closeCode }
    }
    /// The close frame's code, when the server sent one (`"unknown(1013)"`, `"normalClosure"`).
    var closeCode: String? { code.withLock { $0 } }
    var all: [String] { texts.withLock { $0 } }
    var isClosed: Bool { closed.withLock { $0 } }
    var changes: [String] { all.filter { $0.contains(#""type":"changes""#) } }
    var heartbeats: Int { all.filter { $0 == #"{"type":"heartbeat"}"# }.count }
}

@Suite("Live updates over a real WebSocket")
struct LiveTests {
    /// The real server with `heartbeat`, on a free port, until `body` returns.
    func withServer(_ harness: APIHarness, heartbeat: Duration, _ body: @Sendable (Int) async throws -> Void) async throws {
        try await withServer(harness, heartbeat: heartbeat) { port, _ in try await body(port) }
    }

    /// The real server with `heartbeat`, on a free port, until `body` returns; `body` gets its
    /// port and the server itself (its hub).
    func withServer(_ harness: APIHarness, heartbeat: Duration, _ body: @Sendable (Int, OrbitAPI) async throws -> Void) async throws {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        var configuration = harness.api.configuration
        configuration.port = 0
        configuration.liveHeartbeat = heartbeat
        let api = try OrbitAPI(
            services: harness.services, configuration: configuration, tokens: harness.api.tokens, appleVerifier: harness.api.appleVerifier)
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let app = api.makeApplication(logger: logger, onRunning: { continuation.yield($0) })
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            try await body(port, api)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    /// A WebSocket client on `/live` of `port` with `token`, recording what it receives until
    /// the server closes it or the task is cancelled.
    static func listen(port: Int, token: String, into received: Received) async throws {
        var logger = Logger(label: "ws-client")
        logger.logLevel = .warning
        let closing = try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(port)/live", configuration: .init(additionalHeaders: [.authorization: "Bearer \(token)"]), logger: logger
        ) { inbound, _, _ in
            for try await message in inbound.messages(maxSize: 1 << 16) {
                if case .text(let text) = message { received.append(text) }
            }
        }
        received.close(code: closing.map { "\($0.closeCode)" })
    }

    /// Two servers of `harness` (heartbeats 200 ms apart), and the member's and the outsider's
    /// sockets open on the second: `body` gets the first's port, the second's, and what each
    /// socket receives.
    func withMemberAndOutsider(
        _ harness: APIHarness, _ cast: APICast,
        _ body: @Sendable (_ portA: Int, _ portB: Int, _ member: Received, _ outsider: Received) async throws -> Void
    ) async throws {
        try await withServer(harness, heartbeat: .milliseconds(200)) { portA in
            try await withServer(harness, heartbeat: .milliseconds(200)) { portB in
                let member = Received()
                let outsider = Received()
                try await withThrowingTaskGroup(of: Void.self) { sockets in
                    sockets.addTask { try await Self.listen(port: portB, token: cast.memberToken, into: member) }
                    sockets.addTask { try await Self.listen(port: portB, token: cast.outsiderToken, into: outsider) }
                    // Both sockets are open once each has had a heartbeat.
                    try await waitUntil("both sockets are open") { member.heartbeats > 0 && outsider.heartbeats > 0 }
                    try await body(portA, portB, member, outsider)
                    sockets.cancelAll()
                }
            }
        }
    }

    @Test("the listener's read of the change log misses no commit: one in flight at a read comes with a later one; each once")
    func listenerReadsEveryCommit() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let configuration = harness.database.configuration
            try await PostgresConnection.withConnection(configuration) { listener in
                try await listener.query("SET ROLE orbit_admin")
                var since: String?
                #expect(try await ChangeLog.changed(since: &since, on: listener).communities == [])
                try await PostgresConnection.withConnection(configuration) { held in
                    // A post in the first community, its transaction left open across a read ...
                    try await held.query("BEGIN")
                    try await held.query("INSERT INTO posts (community_id, author_id, content) VALUES (\(cast.community), \(cast.admin), 'held')")
                    // ... while one in the other community commits.
                    try await harness.database.withConnection { connection in
                        try await connection.query(
                            "INSERT INTO posts (community_id, author_id, content) VALUES (\(cast.otherCommunity), \(cast.outsider), 'at once')")
                    }
                    #expect(try await ChangeLog.changed(since: &since, on: listener).communities == [cast.otherCommunity])
                    // Committed after the read that saw it in flight: the next read has it (its
                    // transaction id is below that read's end: only the read's list of
                    // transactions in flight finds it).
                    try await held.query("COMMIT")
                }
                #expect(try await ChangeLog.changed(since: &since, on: listener).communities == [cast.community])
                #expect(try await ChangeLog.changed(since: &since, on: listener).communities == [])
            }
        }
    }

    @Test(
        "a commit through one server reaches a member's socket on another; an outsider's socket hears nothing of it; heartbeats; a plain GET is 426")
    func fanOutAcrossServers() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            try await withMemberAndOutsider(harness, cast) { portA, portB, member, outsider in
                let plain = try await rawRequest(port: portB, "GET", "/live", token: cast.memberToken)
                #expect(plain.hasPrefix("HTTP/1.1 426"), "\(plain)")
                // A post through server A (HTTP), in the community of the member only.
                let posted = try await rawRequest(
                    port: portA, "POST", "/communities/\(cast.community)/posts", token: cast.adminToken, json: #"{"content": "Live!"}"#)
                #expect(posted.hasPrefix("HTTP/1.1 201"), "\(posted)")
                try await waitUntil("the member's socket hears of it") { !member.changes.isEmpty }
                #expect(member.changes.allSatisfy { $0 == #"{"type":"changes","community_id":"\#(cast.community)"}"# }, "\(member.changes)")
                // Heartbeats keep coming to the outsider, and nothing about the community.
                let seen = outsider.heartbeats
                try await waitUntil("the outsider has had two more heartbeats") { outsider.heartbeats >= seen + 2 }
                #expect(outsider.changes.isEmpty, "\(outsider.changes)")
            }
        }
    }

    @Test(
        "the user's own feed: a device registered through one server is in GET /users/me/changes, and the user's socket on another hears own_changes; another user's socket does not"
    )
    func ownFeedOnTheSocket() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            try await withMemberAndOutsider(harness, cast) { portA, _, member, outsider in
                let token = String(repeating: "5a", count: 32)
                let registered = try await rawRequest(
                    port: portA, "POST", "/users/me/devices", token: cast.memberToken,
                    json: #"{"token": "\#(token)", "environment": "sandbox", "bundle_id": "app.orbitcove.ios"}"#)
                #expect(registered.hasPrefix("HTTP/1.1 201"), "\(registered)")
                try await waitUntil("the member's socket hears of it") { member.all.contains(#"{"type":"own_changes"}"#) }
                let pulled = try await rawRequest(port: portA, "GET", "/users/me/changes", token: cast.memberToken)
                #expect(pulled.hasPrefix("HTTP/1.1 200") && pulled.contains(#""entity":"device""#) && pulled.contains(token), "\(pulled)")
                let seen = outsider.heartbeats
                try await waitUntil("the outsider has had two more heartbeats") { outsider.heartbeats >= seen + 2 }
                #expect(!outsider.all.contains(#"{"type":"own_changes"}"#))
                let others = try await rawRequest(port: portA, "GET", "/users/me/changes", token: cast.outsiderToken)
                #expect(others.hasPrefix("HTTP/1.1 200") && !others.contains(token), "\(others)")
            }
        }
    }

    @Test(
        "the hub queues each socket's messages in its outbox, in order; an outbox a client let overflow ends, and the socket is told once that it fell behind"
    )
    func outboxes() async throws {
        let hub = LiveHub()
        let reader = UserID.random()
        let slow = await hub.add(.user(reader))
        for index in 0...LiveHub.outboxLimit { await hub.send("m\(index)", to: [reader]) }
        var told = slow.fellBehind.makeAsyncIterator()
        #expect(await told.next() != nil, "the socket is told it fell behind")
        #expect(await told.next() == nil, "once")
        var iterator = slow.outbox.makeAsyncIterator()
        var received: [String] = []
        while received.count <= LiveHub.outboxLimit, let message = await iterator.next() { received.append(message) }
        #expect(received == (0..<LiveHub.outboxLimit).map { "m\($0)" }, "the first \(LiveHub.outboxLimit) in order, then the end")
        await hub.send("later", to: [reader])
    }

    @Test("a real client that stops reading is cut off once its outbox overflows (the connection ends) and does not hold up another socket")
    func clientThatStopsReading() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            try await withServer(harness, heartbeat: .milliseconds(200)) { port, api in
                let hub = api.live
                // The member's client upgrades, then never reads again.
                let stalled = try await Self.rawLiveClient(port: port, token: cast.memberToken)
                // The outsider's client reads everything.
                let outsider = Received()
                try await withThrowingTaskGroup(of: Void.self) { sockets in
                    sockets.addTask { try await Self.listen(port: port, token: cast.outsiderToken, into: outsider) }
                    try await waitUntil("both sockets are open") { await hub.count == 2 && outsider.heartbeats > 0 }
                    // Far more than the kernel's buffers and the outbox hold, with a tick for the
                    // outsider every hundred.
                    let large = String(repeating: "x", count: 8000)
                    let messages = 6000
                    for index in 0..<messages {
                        await hub.send(large, to: [cast.member])
                        if index % 100 == 0 { await hub.send("tick \(index)", to: [cast.outsider]) }
                    }
                    let ticks = stride(from: 0, to: messages, by: 100).map { "tick \($0)" }
                    try await waitUntil("the outsider has every tick") { outsider.all.filter { $0.hasPrefix("tick") }.count == ticks.count }
                    #expect(outsider.all.filter { $0.hasPrefix("tick") } == ticks, "in order, while the member's client read nothing")
                    try await waitUntil("the server let go of the socket that stopped reading") { await hub.count == 1 }
                    #expect(!outsider.isClosed, "the outsider's socket stays open")
                    // What the member's client then reads ends: the server dropped the connection
                    // and the backlog with it.
                    let (bytes, ended) = try await offPool { stalled.readUntilEnded() }
                    #expect(ended, "the connection ended")
                    #expect(bytes < messages * large.utf8.count, "the backlog was not kept: \(bytes) bytes read")
                    sockets.cancelAll()
                }
            }
        }
    }

    @Test(
        "a client that fell more than the outbox behind (it did not read while a burst came) is closed with 1013 after a prefix of the burst, in order"
    )
    func burstOverflowClosesWith1013() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            try await withServer(harness, heartbeat: .seconds(60)) { port, api in
                let hub = api.live
                // The member's client upgrades, then reads nothing until the burst is sent: the
                // kernel's buffers fill, then the server's.
                let client = try await Self.rawLiveClient(port: port, token: cast.memberToken)
                try await waitUntil("the socket is registered") { await hub.count == 1 }
                // 8 MB in one turn of the hub, far more than the buffers and the outbox hold.
                let burst = 4 * LiveHub.outboxLimit
                let filler = String(repeating: "x", count: 2000)
                await hub.sendAll((0..<burst).map { "m\($0) \(filler)" }, to: [cast.member])
                // The hub lets go of a socket the moment it is told it fell behind.
                try await waitUntil("the server let go of the socket") { await hub.count == 0 }
                // Now it reads: what was queued, then the close frame.
                let (texts, code) = try await offPool { client.readFrames() }
                #expect(code == 1013, "\(code.map(String.init) ?? "no close frame")")
                let queued = texts.filter { $0.hasPrefix("m") }.map { String($0.prefix { $0 != " " }) }
                #expect(queued.count < burst && queued == (0..<queued.count).map { "m\($0)" }, "a prefix, in order")
                client.close()
            }
        }
    }

    /// A raw client of `GET /live` as `token`, upgraded, that reads only when the test reads
    /// it (a 4 KiB receive buffer, so the server's writes stall soon after it stops).
    static func rawLiveClient(port: Int, token: String) async throws -> RawConnection {
        let upgrade =
            "GET /live HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Authorization: Bearer \(token)\r\n\r\n"
        let client = try await offPool { try RawConnection(port: port, receiveBuffer: 4096) }
        let answer = try await offPool {
            client.send(upgrade)
            return client.readResponse()
        }
        #expect(answer.hasPrefix("HTTP/1.1 101"), "\(answer)")
        return client
    }

    @Test("a socket is closed when its access token expires; a socket without a valid token is refused")
    func expiry() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            try await withServer(harness, heartbeat: .seconds(30)) { port in
                // A token with a few seconds left, then the socket is closed when it expires. On
                // a loaded machine the upgrade itself can outlast the token (five seconds did
                // once, under the whole suite with a build beside it): an upgrade refused after
                // the token expired is tried again with a longer one. Refused in time is a failure.
                let lifetime = TimeInterval(harness.api.tokens.lifetime.components.seconds)
                let received = Received()
                for left: TimeInterval in [5, 20, 60] {
                    let expiry = Date().addingTimeInterval(left)
                    let token = try await harness.api.tokens.issue(for: cast.member, now: expiry.addingTimeInterval(-lifetime))
                    do {
                        try await Self.listen(port: port, token: token, into: received)
                        break
                    } catch  where Date() >= expiry && left < 60 {
                        continue
                    }
                }
                #expect(received.isClosed)
                let refused = Received()
                await #expect(throws: (any Error).self) { try await Self.listen(port: port, token: "not-a-token", into: refused) }
            }
        }
    }
}

extension LiveHub {
    /// Sends each of `messages`, in one turn of the hub.
    func sendAll(_ messages: [String], to users: Set<UserID>) {
        for message in messages { send(message, to: users) }
    }
}
