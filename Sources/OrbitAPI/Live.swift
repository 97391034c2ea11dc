import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import OrbitCore
import OrbitPostgres
import ServiceLifecycle

/// `GET /live` (issue 20, item 3, docs/sync.md): a WebSocket per app, told which of the user's
/// communities changed so it pulls the change feed. Every server LISTENs to `orbit_changes`
/// (sent by the change log's trigger at commit), so a commit made through any server reaches
/// sockets on every server.
actor LiveHub {
    struct Socket {
        var user: UserID
        var send: @Sendable (String) async -> Void
    }

    private var sockets: [UUID: Socket] = [:]

    func add(_ user: UserID, send: @escaping @Sendable (String) async -> Void) -> UUID {
        let id = UUID()
        sockets[id] = Socket(user: user, send: send)
        return id
    }

    func remove(_ id: UUID) {
        sockets[id] = nil
    }

    var connectedUsers: Set<UserID> { Set(sockets.values.map(\.user)) }
    var count: Int { sockets.count }

    /// Sends `message` to the sockets of `users`.
    func send(_ message: String, to users: Set<UserID>) async {
        for socket in sockets.values where users.contains(socket.user) {
            await socket.send(message)
        }
    }
}

/// The messages of `GET /live`.
enum LiveMessage {
    static func changes(_ community: CommunityID) -> String {
        #"{"type":"changes","community_id":"\#(community)"}"#
    }

    static let heartbeat = #"{"type":"heartbeat"}"#
}

/// LISTENs to `orbit_changes` on a connection of its own and hands each changed community to
/// the sockets of its active members. Reconnects (after a second) when the connection fails.
struct LiveListener: Service {
    let hub: LiveHub
    let services: OrbitServices
    let logger: Logger

    static let channel = "orbit_changes"

    func run() async throws {
        await withGracefulShutdownHandler {
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                do {
                    try await listen()
                } catch is CancellationError {
                    return
                } catch {
                    logger.warning("live updates: the listening connection failed; reconnecting", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        } onGracefulShutdown: {
        }
    }

    private func listen() async throws {
        let connection = try await PostgresConnection.connect(services.pool.configuration, logger: logger)
        do {
            try await connection.query("LISTEN \(unescaped: Self.channel)")
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                let notes = try await connection.notifications(waitingUpTo: .milliseconds(500))
                let communities = Set(notes.filter { $0.channel == Self.channel }.compactMap { CommunityID($0.payload) })
                for community in communities { try await deliver(community) }
            }
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
    }

    /// Tells the connected active members of `community` that it changed.
    private func deliver(_ community: CommunityID) async throws {
        let connected = await hub.connectedUsers
        guard !connected.isEmpty else { return }
        let members = try await services.members.activeMembersAsOperator(of: community, among: Array(connected))
        guard !members.isEmpty else { return }
        await hub.send(LiveMessage.changes(community), to: Set(members))
    }
}

extension OrbitAPI {
    /// The WebSocket upgrade of `GET /live`: an access token (`Authorization: Bearer …`) is
    /// required; anything else falls through to the router (401, or 426 for a plain GET).
    func liveUpgrade(_ request: HTTPRequest) async -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        guard request.path?.split(separator: "?").first == "/live",
            let authorization = request.headerFields[.authorization], authorization.lowercased().hasPrefix("bearer "),
            let (user, expires) = await tokens.verifyWithExpiry(String(authorization.dropFirst("bearer ".count)))
        else { return .dontUpgrade }
        let hub = live
        let heartbeat = configuration.liveHeartbeat
        return .upgrade([:]) { inbound, outbound, context in
            let id = await hub.add(user) { message in
                do {
                    try await outbound.write(.text(message))
                } catch {
                    context.logger.debug("live: a message could not be sent", metadata: ["error": "\(error)"])
                }
            }
            await withTaskGroup(of: Void.self) { group in
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
                // Until the client closes: what it sends is ignored.
                group.addTask {
                    do {
                        for try await _ in inbound {}
                    } catch {
                        context.logger.debug("live: the socket ended", metadata: ["error": "\(error)"])
                    }
                }
                await group.next()
                group.cancelAll()
            }
            await hub.remove(id)
        }
    }
}
