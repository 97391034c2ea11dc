import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import OrbitCore
import OrbitPostgres
import ServiceLifecycle

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
                // Heartbeats, the first once the server reads the change log (`LiveHub.isListening`).
                group.addTask {
                    while await !hub.isListening {
                        do { try await Task.sleep(for: .milliseconds(5)) } catch { return }
                    }
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
