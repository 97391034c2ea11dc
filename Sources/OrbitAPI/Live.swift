import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import OrbitCore
import OrbitPostgres
import ServiceLifecycle

/// `GET /live` (issue 20, item 3, docs/sync.md; chat: docs/chat.md): a WebSocket per app, told
/// which of the user's communities changed so it pulls the change feed, and given chat's
/// messages, receipts and typing as they happen. Every server reads the change log (every 10 ms)
/// and LISTENs to `orbit_chat` (sent by the change log's trigger at commit), so a commit made
/// through any server reaches sockets on every server. Each socket is a row of `live_connections` while it is open:
/// the user's presence, and no chat push while they can see the message live.
actor LiveHub {
    /// This server, in `live_connections`.
    nonisolated let serverID = UUID()

    struct Socket {
        /// A user's socket, or a signed-in child's device's.
        var principal: Principal
        /// Its outbox: the socket's own task writes what is queued here, so a fan-out to 10,000
        /// sockets is 10,000 enqueues, not 10,000 awaited writes one after another (where one
        /// slow client held up everyone after it).
        var outbox: AsyncStream<String>.Continuation

        var user: UserID? { if case .user(let user) = principal { user } else { nil } }
        var device: ChildDeviceID? { if case .child(let session) = principal { session.device } else { nil } }
    }

    private var sockets: [UUID: Socket] = [:]

    /// The most messages a socket's outbox holds: a client that falls this far behind is
    /// closed (it reconnects and pulls), rather than the server holding its backlog.
    static let outboxLimit = 1024

    /// Registers a socket; its task writes what comes out of the returned stream.
    func add(_ principal: Principal) -> (UUID, AsyncStream<String>) {
        let id = UUID()
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingOldest(Self.outboxLimit))
        sockets[id] = Socket(principal: principal, outbox: continuation)
        return (id, stream)
    }

    func remove(_ id: UUID) {
        sockets[id]?.outbox.finish()
        sockets[id] = nil
    }

    /// Queues `message` on `socket`'s outbox; a full outbox ends it (the socket is then closed).
    private func enqueue(_ message: String, on socket: Socket) {
        if case .dropped = socket.outbox.yield(message) { socket.outbox.finish() }
    }

    var connectedUsers: Set<UserID> { Set(sockets.values.compactMap(\.user)) }
    var connectedDevices: Set<ChildDeviceID> { Set(sockets.values.compactMap(\.device)) }
    var count: Int { sockets.count }

    /// Sends `message` to the sockets of `users`.
    func send(_ message: String, to users: Set<UserID>) {
        for socket in sockets.values {
            guard let user = socket.user, users.contains(user) else { continue }
            enqueue(message, on: socket)
        }
    }

    /// Sends `message` to the sockets of the children signed in on `devices`.
    func send(_ message: String, toDevices devices: Set<ChildDeviceID>) {
        for socket in sockets.values {
            guard let device = socket.device, devices.contains(device) else { continue }
            enqueue(message, on: socket)
        }
    }
}

/// The messages of `GET /live`.
enum LiveMessage {
    static func changes(_ community: CommunityID) -> String {
        #"{"type":"changes","community_id":"\#(community)"}"#
    }

    /// The user's own feed changed (`GET /users/me/changes`): their account, devices, family or
    /// notifications of no community.
    static let ownChanges = #"{"type":"own_changes"}"#

    static let heartbeat = #"{"type":"heartbeat"}"#

    /// The conversation of a client's `{"type": "typing", "conversation_id": "…"}`.
    static func typing(in text: String) -> ConversationID? {
        struct Typing: Decodable {
            var type: String
            var conversation_id: String
        }
        guard let typing = try? JSONDecoder().decode(Typing.self, from: Data(text.utf8)), typing.type == "typing" else { return nil }
        return ConversationID(typing.conversation_id)
    }

    /// The conversation and message of a client's `{"type": "delivered", "conversation_id":
    /// "…", "message_id": "…"}`.
    static func delivered(in text: String) -> (ConversationID, MessageID)? {
        struct Delivered: Decodable {
            var type: String
            var conversation_id: String
            var message_id: String
        }
        guard let delivered = try? JSONDecoder().decode(Delivered.self, from: Data(text.utf8)), delivered.type == "delivered",
            let conversation = ConversationID(delivered.conversation_id), let message = MessageID(delivered.message_id)
        else { return nil }
        return (conversation, message)
    }
}

/// The delivered marks this server's sockets send (a lighter receipt than `PUT
/// /chats/{id}/delivered`: no request, no transaction of its own, no answer), written a batch at
/// a time (`ChatService.markDelivered`), as a group commit: a mark that finds no write in flight
/// is written at once; marks that come while one is in flight wait for it and go together in the
/// next. Two hundred people marking a message delivered at once make a few transactions, not two
/// hundred, and the sender's socket hears of them as a few `receipts` messages. (A fixed 2 ms
/// window before each write cost every batch those 2 ms: delivered to all 55.6 ms p50 against
/// 49.9 without it, medians of four runs each, docs/benchmarks.md.)
actor DeliveredMarks {
    /// Marks held at most while a batch is written (beyond them new marks are dropped: a mark
    /// is a watermark, and the next one carries it).
    static let capacity = 10_000

    private let chat: ChatService
    private let logger: Logger
    private var pending: [DeliveredMark] = []
    private var writing = false

    init(chat: ChatService, logger: Logger) {
        self.chat = chat
        self.logger = logger
    }

    func add(_ mark: DeliveredMark) {
        guard pending.count < Self.capacity else {
            logger.warning("live: delivered marks are arriving faster than they are written; one was dropped")
            return
        }
        pending.append(mark)
        guard !writing else { return }
        writing = true
        Task { await self.writeAll() }
    }

    /// Writes what is pending, and again what came meanwhile, until nothing is.
    private func writeAll() async {
        while !pending.isEmpty {
            let batch = pending
            pending = []
            do {
                try await chat.markDelivered(batch)
            } catch {
                logger.warning("live: delivered marks could not be written", metadata: ["error": "\(error)", "marks": "\(batch.count)"])
            }
        }
        writing = false
    }
}

/// On a connection of its own: reads the change log every `pollInterval` for the communities
/// changed by the transactions committed since its last read, and hands each to the sockets of
/// its active members; LISTENs to `orbit_chat` and hands each chat event to the sockets of the
/// conversation's participants (and wakes push delivery for a new message). Reconnects (after a
/// second) when the connection fails, and reads on from where it was, so nothing committed in
/// between is missed. Keeps this server's sockets fresh in `live_connections`.
///
/// Why it reads the log rather than LISTEN for it: a transaction that NOTIFYs holds a lock of
/// the whole database from its commit's start to its end, so every writer's commits queued
/// behind one another, and an expense cost 15% more for it alone (issue 38,
/// docs/benchmarks.md). One indexed read per server every 10 ms (every 2 ms while commits keep
/// coming) costs the writers nothing.
struct LiveListener: Service {
    let hub: LiveHub
    let services: OrbitServices
    let pushSignal: PushSignal
    let logger: Logger

    /// How often the change log is read while nothing changes: the most a commit waits, beyond
    /// its delivery, to reach the sockets.
    static let pollInterval: Duration = .milliseconds(10)
    /// How soon it is read again after a read that found changes (commits come in bursts); each
    /// read that finds none doubles the wait, up to `pollInterval`. (At a steady 10 ms, a commit
    /// made just after a read, as the next one in a burst is, waits the whole interval: the
    /// live benchmark's p50 was 10 ms more than with NOTIFY; with 2 ms, 6 ms more.)
    static let busyPollInterval: Duration = .milliseconds(2)

    func run() async throws {
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await refreshPresence() }
                // The snapshot up to which the log has been read (kept across reconnects).
                var since: String?
                while !Task.isCancelled && !Task.isShuttingDownGracefully {
                    do {
                        try await listen(from: &since)
                    } catch is CancellationError {
                        break
                    } catch {
                        logger.warning("live updates: the listening connection failed; reconnecting", metadata: ["error": "\(error)"])
                        try? await Task.sleep(for: .seconds(1))
                    }
                }
                group.cancelAll()
            }
        } onGracefulShutdown: {
        }
    }

    /// Every 30 s: this server's sockets are still open (their users online).
    private func refreshPresence() async {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do { try await Task.sleep(for: ChatService.presenceRefresh) } catch { return }
            do {
                try await services.chat.refreshSockets(on: hub.serverID)
            } catch {
                logger.warning("live updates: refreshing this server's sockets failed", metadata: ["error": "\(error)"])
            }
        }
    }

    private func listen(from since: inout String?) async throws {
        let connection = try await PostgresConnection.connect(services.pool.configuration, logger: logger)
        do {
            // The log is read as the operator (every community's changes).
            try await connection.query("SET ROLE orbit_admin")
            try await connection.query("LISTEN \(unescaped: ChatEvent.channel)")
            let clock = ContinuousClock()
            var nextRead = clock.now
            var interval = Self.pollInterval
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                // Waits in whole milliseconds (rounded up: rounded down, the loop would spin
                // through the last fraction of one).
                let remaining = nextRead - clock.now
                let notes = try await connection.notifications(waitingUpTo: remaining > .zero ? remaining + .milliseconds(1) : .zero)
                var chat: [ChatEvent] = []
                var seen: Set<ChatEvent> = []
                for note in notes where note.channel == ChatEvent.channel {
                    for event in ChatEvent.events(payload: note.payload) where seen.insert(event).inserted { chat.append(event) }
                }
                if chat.contains(where: { if case .message = $0 { true } else { false } }) { pushSignal.wake() }
                try await deliver(chat)
                guard clock.now >= nextRead else { continue }
                let readAt = clock.now
                let changed = try await Self.changed(since: &since, on: connection)
                interval = changed.communities.isEmpty && changed.owners.isEmpty ? min(interval * 2, Self.pollInterval) : Self.busyPollInterval
                nextRead = readAt + interval
                for community in changed.communities { try await deliver(community) }
                if !changed.owners.isEmpty { await hub.send(LiveMessage.ownChanges, to: Set(changed.owners)) }
            }
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
    }

    /// What the transactions visible now and not in `since` changed (chat aside): the
    /// communities, and the users whose own feed changed. `since` becomes now; the first read
    /// only starts the position. By transaction id, as the feed (docs/sync.md): those at or past
    /// `since`'s end, and those in flight in it.
    static func changed(since: inout String?, on connection: PostgresConnection) async throws -> (
        communities: [CommunityID], owners: [UserID]
    ) {
        guard let from = since else {
            since = try await connection.query("SELECT pg_current_snapshot()::text AS now").single().decode("now")
            return ([], [])
        }
        let row = try await connection.query(
            """
            WITH changed AS (
                SELECT c.community_id, c.user_id FROM changes c
                WHERE (c.xid >= pg_snapshot_xmax(\(from)::pg_snapshot) OR c.xid = ANY(ARRAY(SELECT pg_snapshot_xip(\(from)::pg_snapshot))))
                  AND pg_visible_in_snapshot(c.xid, pg_current_snapshot()) AND c.conversation_id IS NULL)
            SELECT pg_current_snapshot()::text AS now,
                ARRAY(SELECT DISTINCT community_id FROM changed WHERE community_id IS NOT NULL) AS communities,
                ARRAY(SELECT DISTINCT user_id FROM changed WHERE community_id IS NULL) AS owners
            """
        ).single()
        since = try row.decode("now", as: String.self)
        return (
            try row.decode("communities", as: [UUID].self).map(CommunityID.init), try row.decode("owners", as: [UUID].self).map(UserID.init)
        )
    }

    /// Tells the connected active members of `community` that it changed, and the children
    /// signed in on devices paired for it (their feed has their chores, points and rewards).
    private func deliver(_ community: CommunityID) async throws {
        let connected = await hub.connectedUsers
        if !connected.isEmpty {
            let members = try await services.members.activeMembersAsOperator(of: community, among: Array(connected))
            if !members.isEmpty { await hub.send(LiveMessage.changes(community), to: Set(members)) }
        }
        let devices = await hub.connectedDevices
        if !devices.isEmpty {
            let paired = try await services.family.devicesAsOperator(pairedFor: community, among: Array(devices))
            if !paired.isEmpty { await hub.send(LiveMessage.changes(community), toDevices: Set(paired)) }
        }
    }

    /// Hands a batch of chat events to the sockets of their conversations' participants.
    private func deliver(_ events: [ChatEvent]) async throws {
        guard !events.isEmpty else { return }
        let connected = await hub.connectedUsers
        guard !connected.isEmpty else { return }
        for (recipients, message) in try await services.chat.liveMessages(for: events, among: Array(connected)) {
            await hub.send(String(decoding: try ResponseJSONEncoder.encode(message), as: UTF8.self), to: recipients)
        }
    }
}

/// Wakes push delivery (`ScheduledJobs`) between its ticks: a chat message's pushes go out at
/// once, not at the next minute.
package final class PushSignal: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    package init() {
        (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func wake() { continuation.yield() }

    /// One element per wake (wakes while one is handled fold into one).
    package var wakes: AsyncStream<Void> { stream }
}

extension OrbitAPI {
    /// The WebSocket upgrade of `GET /live`: an access token (`Authorization: Bearer …`) is
    /// required; anything else falls through to the router (401, or 426 for a plain GET).
    func liveUpgrade(_ request: HTTPRequest) async -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        guard request.path?.split(separator: "?").first == "/live",
            let authorization = request.headerFields[.authorization], authorization.lowercased().hasPrefix("bearer "),
            let (principal, expires) = await tokens.verifyPrincipalWithExpiry(String(authorization.dropFirst("bearer ".count)))
        else { return .dontUpgrade }
        let hub = live
        let heartbeat = configuration.liveHeartbeat
        let chat = services.chat
        let marks = deliveredMarks
        return .upgrade([:]) { inbound, outbound, context in
            let (id, outbox) = await hub.add(principal)
            // A user's socket is their presence (chat); a child's device has none.
            let user: UserID? = if case .user(let user) = principal { user } else { nil }
            if let user {
                do {
                    try await chat.socketOpened(id, of: user, on: hub.serverID)
                } catch {
                    context.logger.warning("live: the socket could not be recorded (presence)", metadata: ["error": "\(error)"])
                }
            }
            await withTaskGroup(of: Void.self) { group in
                // What the hub queues for this socket, in order; an outbox that overflowed (the
                // client fell `LiveHub.outboxLimit` messages behind) ends, and so does the socket.
                group.addTask {
                    for await message in outbox {
                        do {
                            try await outbound.write(.text(message))
                        } catch {
                            context.logger.debug("live: a message could not be sent", metadata: ["error": "\(error)"])
                            return
                        }
                    }
                    guard !Task.isCancelled else { return }
                    do {
                        try await outbound.close(.unknown(1013), reason: "too far behind: reconnect and pull")
                    } catch {
                        context.logger.debug("live: closing a socket that fell behind failed", metadata: ["error": "\(error)"])
                    }
                }
                // Heartbeats.
                group.addTask {
                    while !Task.isCancelled {
                        do { try await Task.sleep(for: heartbeat) } catch { return }
                        do { try await outbound.write(.text(LiveMessage.heartbeat)) } catch { return }
                    }
                }
                // The token's end is the socket's.
                group.addTask {
                    let remaining = expires.timeIntervalSinceNow
                    if remaining > 0 {
                        do { try await Task.sleep(for: .milliseconds(Int64(remaining * 1000))) } catch { return }
                    }
                    do {
                        try await outbound.close(.policyViolation, reason: "access token expired")
                    } catch {
                        context.logger.debug("live: closing an expired socket failed", metadata: ["error": "\(error)"])
                    }
                }
                // Until the client closes: typing indicators; anything else is ignored.
                group.addTask {
                    var lastTyping: [ConversationID: ContinuousClock.Instant] = [:]
                    do {
                        for try await message in inbound.messages(maxSize: 4096) {
                            guard let user, case .text(let text) = message else { continue }
                            if let (conversation, message) = LiveMessage.delivered(in: text) {
                                await marks.add(DeliveredMark(user: user, conversation: conversation, message: message))
                                continue
                            }
                            guard let conversation = LiveMessage.typing(in: text) else { continue }
                            // At most one a second per conversation per socket.
                            let now = ContinuousClock.now
                            if let last = lastTyping[conversation], now - last < .seconds(1) { continue }
                            lastTyping[conversation] = now
                            do {
                                try await chat.typing(in: conversation, as: user)
                            } catch {
                                context.logger.debug("live: a typing indicator was refused", metadata: ["error": "\(error)"])
                            }
                        }
                    } catch {
                        context.logger.debug("live: the socket ended", metadata: ["error": "\(error)"])
                    }
                }
                await group.next()
                group.cancelAll()
            }
            await hub.remove(id)
            guard user != nil else { return }
            do {
                try await chat.socketClosed(id)
            } catch {
                context.logger.warning("live: the socket's end could not be recorded (presence)", metadata: ["error": "\(error)"])
            }
        }
    }
}
