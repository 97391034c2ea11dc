import NIOCore
import NIOWebSocket
import OrbitRuntime

/// A `GET /live` socket's channel, written by the hub's fan-out directly (`LiveOutlet`): every
/// socket of one event loop in one pass on that loop, the frame encoded once per pass, one flush
/// per socket, and no task or await per socket (before, each socket's own task woke for each
/// message and awaited its write: 11–12 µs of user-space CPU per socket per commit).
final class WebSocketOutlet: LiveOutlet, @unchecked Sendable {
    let channel: any Channel
    // Touched only on the channel's event loop (in `write`'s pass), hence @unchecked Sendable.
    /// Messages written in a row while the channel was above its high-water mark.
    private var writtenWhileFull = 0
    /// Told it fell behind: it takes nothing more.
    private var isBehind = false

    init(channel: any Channel) { self.channel = channel }

    var batchKey: ObjectIdentifier { ObjectIdentifier(channel.eventLoop) }

    func write(_ message: String, to batch: [LiveOutletEntry]) {
        let sockets = batch.compactMap { entry in (entry.outlet as? WebSocketOutlet).map { ($0, entry.fellBehind) } }
        channel.eventLoop.execute { [channel] in
            let frame = WebSocketFrame(fin: true, opcode: .text, data: channel.allocator.buffer(string: message))
            for (socket, fellBehind) in sockets where !socket.isBehind {
                if socket.channel.isWritable {
                    socket.writtenWhileFull = 0
                } else {
                    // Its client is not reading: past the outbox's bound it is closed (1013).
                    socket.writtenWhileFull += 1
                    if socket.writtenWhileFull > LiveHub.outboxLimit {
                        socket.isBehind = true
                        fellBehind.yield()
                        fellBehind.finish()
                        continue
                    }
                }
                socket.channel.write(frame, promise: nil)
            }
            for (socket, _) in sockets where !socket.isBehind { socket.channel.flush() }
        }
    }
}
