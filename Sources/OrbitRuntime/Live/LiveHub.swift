package import Foundation
package import OrbitCore

/// `GET /live` (issue 20, item 3, docs/sync.md; chat: docs/chat.md): a WebSocket per app, told
/// which of the user's communities changed so it pulls the change feed, and given chat's
/// messages, receipts and typing as they happen. Every server reads the change log (every 10 ms)
/// and LISTENs to `orbit_chat` (sent by the change log's trigger at commit), so a commit made
/// through any server reaches sockets on every server. Each socket is a row of `live_connections` while it is open:
/// the user's presence, and no chat push while they can see the message live.
package actor LiveHub {
    /// This server, in `live_connections`.
    package nonisolated let serverID = UUID()

    package init() {}

    struct Socket {
        /// A user's socket, or a signed-in child's device's.
        var principal: Principal
        /// Its outbox, for a socket registered without an outlet: whoever registered it reads
        /// what is queued here. A WebSocket of `GET /live` has an outlet instead, which the
        /// fan-out writes in one pass per event loop (`LiveOutlet`).
        var outbox: AsyncStream<String>.Continuation
        /// Told once when the outbox overflows: the socket is then closed at once, not after
        /// writing what is queued (a client that stopped reading would never take it).
        var fellBehind: AsyncStream<Void>.Continuation
        /// The socket's connection, when the fan-out writes it directly (`LiveOutlet`); its
        /// outbox then stays empty.
        var outlet: (any LiveOutlet)?

        var user: UserID? { if case .user(let user) = principal { user } else { nil } }
        var device: ChildDeviceID? { if case .child(let session) = principal { session.device } else { nil } }
    }

    private var sockets: [UUID: Socket] = [:]

    /// The listener has its place in the change log: every commit from now on reaches the
    /// sockets. Until then a socket gets no heartbeat, so a client that has had one knows that
    /// nothing committed after it goes untold (a server just started reads the log a moment
    /// after it accepts sockets).
    package private(set) var isListening = false

    package func startedListening() { isListening = true }

    /// The most messages a socket's outbox holds, or an outlet takes while its connection is
    /// above its high-water mark: a client that falls this far behind is closed (it reconnects
    /// and pulls), rather than the server holding its backlog.
    package static let outboxLimit = 1024

    /// How long a socket that fell behind is given to take its close frame (1013) before its
    /// connection is dropped: a client that stopped reading takes nothing.
    package static let closeWait: Duration = .seconds(1)

    /// A registered socket: its task writes what comes out of `outbox`, and closes the socket
    /// when `fellBehind` yields.
    package struct Registration: Sendable {
        package var id: UUID
        package var outbox: AsyncStream<String>
        package var fellBehind: AsyncStream<Void>
    }

    /// Registers a socket. With an `outlet`, the fan-out writes to it directly (the outbox
    /// stays empty); without, its messages queue in the outbox.
    package func add(_ principal: Principal, outlet: (any LiveOutlet)? = nil) -> Registration {
        let id = UUID()
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingOldest(Self.outboxLimit))
        let (behind, behindContinuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        sockets[id] = Socket(principal: principal, outbox: continuation, fellBehind: behindContinuation, outlet: outlet)
        return Registration(id: id, outbox: stream, fellBehind: behind)
    }

    package func remove(_ id: UUID) {
        sockets[id]?.outbox.finish()
        sockets[id]?.fellBehind.finish()
        sockets[id] = nil
    }

    /// Queues `message` on `socket`'s outbox; a full outbox ends it, and the socket is told it
    /// fell behind (it is then closed).
    private func enqueue(_ message: String, on socket: Socket) {
        guard case .dropped = socket.outbox.yield(message) else { return }
        socket.outbox.finish()
        socket.fellBehind.yield()
        socket.fellBehind.finish()
    }

    package var connectedUsers: Set<UserID> { Set(sockets.values.compactMap(\.user)) }
    package var connectedDevices: Set<ChildDeviceID> { Set(sockets.values.compactMap(\.device)) }
    package var count: Int { sockets.count }

    /// Sends `message` to the sockets of `users`.
    package func send(_ message: String, to users: Set<UserID>) {
        send(message) { socket in socket.user.map(users.contains) ?? false }
    }

    /// Sends `message` to the sockets of the children signed in on `devices`.
    package func send(_ message: String, toDevices devices: Set<ChildDeviceID>) {
        send(message) { socket in socket.device.map(devices.contains) ?? false }
    }

    /// Sends `message` to the sockets `chosen` picks: those with an outlet in one batch per
    /// event loop (`LiveOutlet.write`: one pass, one encoding, no await per socket), the others
    /// through their outboxes.
    private func send(_ message: String, to chosen: (Socket) -> Bool) {
        var batches: [ObjectIdentifier: [LiveOutletEntry]] = [:]
        for socket in sockets.values where chosen(socket) {
            if let outlet = socket.outlet {
                batches[outlet.batchKey, default: []].append(LiveOutletEntry(outlet: outlet, fellBehind: socket.fellBehind))
            } else {
                enqueue(message, on: socket)
            }
        }
        for batch in batches.values { batch[0].outlet.write(message, to: batch) }
    }
}

/// A socket's connection as the fan-out writes it (the WebSocket's channel, in the API): every
/// socket of one event loop is written in one pass on that loop, from one encoded frame, with one
/// flush each and no task or await per socket. The outbox's bound holds as before: a socket that
/// takes `LiveHub.outboxLimit` more messages while its connection is above its high-water mark
/// (its client stopped reading) is told it fell behind, and gets nothing more.
package protocol LiveOutlet: AnyObject, Sendable {
    /// Outlets with the same key are written together (their event loop).
    var batchKey: ObjectIdentifier { get }
    /// Writes `message` to every outlet of `batch`, all with this one's `batchKey`.
    func write(_ message: String, to batch: [LiveOutletEntry])
}

/// An outlet to write, and where to say that its socket fell behind.
package struct LiveOutletEntry: Sendable {
    package var outlet: any LiveOutlet
    package var fellBehind: AsyncStream<Void>.Continuation
}

/// The messages of `GET /live`.
package enum LiveMessage {
    package static func changes(_ community: CommunityID) -> String {
        #"{"type":"changes","community_id":"\#(community)"}"#
    }

    /// The user's own feed changed (`GET /users/me/changes`): their account, devices, family or
    /// notifications of no community.
    package static let ownChanges = #"{"type":"own_changes"}"#

    package static let heartbeat = #"{"type":"heartbeat"}"#

    /// The conversation of a client's `{"type": "typing", "conversation_id": "…"}`.
    package static func typing(in text: String) -> ConversationID? {
        struct Typing: Decodable {
            var type: String
            var conversation_id: String
        }
        guard let typing = try? JSONDecoder().decode(Typing.self, from: Data(text.utf8)), typing.type == "typing" else { return nil }
        return ConversationID(typing.conversation_id)
    }

    /// The conversation and message of a client's `{"type": "delivered", "conversation_id":
    /// "…", "message_id": "…"}`.
    package static func delivered(in text: String) -> (ConversationID, MessageID)? {
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
