import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import OrbitCore
import OrbitPostgres
import OrbitRuntime
import ServiceLifecycle

extension OrbitAPI {
    /// The WebSocket upgrade of `GET /live`: an access token (`Authorization: Bearer …`) is
    /// required; anything else falls through to the router (401, or 426 for a plain GET).
    func liveUpgrade(
        _ request: HTTPRequest, channel: any Channel
    ) async -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        guard request.path?.split(separator: "?").first == "/live",
            let authorization = request.headerFields[.authorization], authorization.lowercased().hasPrefix("bearer "),
            let (principal, expires) = await tokens.verifyPrincipalWithExpiry(String(authorization.dropFirst("bearer ".count)))
        else { return .dontUpgrade }
        let hub = live
        let heartbeat = configuration.liveHeartbeat
        let chat = services.chat
        let marks = deliveredMarks
        return .upgrade([:]) { inbound, outbound, context in
            // The hub writes this socket's messages on its event loop itself (WebSocketOutlet).
            let socket = await hub.add(principal, outlet: WebSocketOutlet(channel: channel))
            // A user's socket is their presence (chat); a child's device has none.
            let user: UserID? = if case .user(let user) = principal { user } else { nil }
            if let user {
                do {
                    try await chat.socketOpened(socket.id, of: user, on: hub.serverID)
                } catch {
                    context.logger.warning("live: the socket could not be recorded (presence)", metadata: ["error": "\(error)"])
                }
            }
            let fellBehind = await withTaskGroup(of: Bool.self) { group in
                // A client that fell `LiveHub.outboxLimit` messages behind (it stopped reading)
                // ends the socket at once.
                group.addTask {
                    for await _ in socket.fellBehind { return true }
                    return false
                }
                // Heartbeats, the first once the server reads the change log (`LiveHub.isListening`).
                group.addTask {
                    while await !hub.isListening {
                        do { try await Task.sleep(for: .milliseconds(5)) } catch { return false }
                    }
                    while !Task.isCancelled {
                        do { try await Task.sleep(for: heartbeat) } catch { return false }
                        do { try await outbound.write(.text(LiveMessage.heartbeat)) } catch { return false }
                    }
                    return false
                }
                // The token's end is the socket's.
                group.addTask {
                    let remaining = expires.timeIntervalSinceNow
                    if remaining > 0 {
                        do { try await Task.sleep(for: .milliseconds(Int64(remaining * 1000))) } catch { return false }
                    }
                    do {
                        try await outbound.close(.policyViolation, reason: "access token expired")
                    } catch {
                        context.logger.debug("live: closing an expired socket failed", metadata: ["error": "\(error)"])
                    }
                    return false
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
                    return false
                }
                let fellBehind = await group.next() ?? false
                group.cancelAll()
                return fellBehind
            }
            await hub.remove(socket.id)
            if fellBehind { await Self.closeFallenBehind(outbound, channel: channel, logger: context.logger) }
            guard user != nil else { return }
            do {
                try await chat.socketClosed(socket.id)
            } catch {
                context.logger.warning("live: the socket's end could not be recorded (presence)", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Closes a socket whose client fell behind with 1013 (reconnect and pull); a client that
    /// has not taken the close frame within `LiveHub.closeWait` (it stopped reading) loses the
    /// connection instead.
    static func closeFallenBehind(_ outbound: WebSocketOutboundWriter, channel: any Channel, logger: Logger) async {
        let closed = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    try await outbound.close(.unknown(1013), reason: "too far behind: reconnect and pull")
                    return true
                } catch {
                    logger.debug("live: closing a socket that fell behind failed", metadata: ["error": "\(error)"])
                    return false
                }
            }
            group.addTask {
                do { try await Task.sleep(for: LiveHub.closeWait) } catch { return true }
                return false
            }
            let closed = await group.next() ?? false
            group.cancelAll()
            return closed
        }
        guard !closed else { return }
        logger.debug("live: a socket that fell behind did not take its close frame; dropping the connection")
        channel.close(mode: .all, promise: nil)
    }
}
