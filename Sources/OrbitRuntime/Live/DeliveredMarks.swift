import Foundation
package import Logging
package import OrbitCore

/// The delivered marks this server's sockets send (a lighter receipt than `PUT
/// /chats/{id}/delivered`: no request, no transaction of its own, no answer), written a batch at
/// a time (`ChatService.markDelivered`), as a group commit: a mark that finds no write in flight
/// is written at once; marks that come while one is in flight wait for it and go together in the
/// next. Two hundred people marking a message delivered at once make a few transactions, not two
/// hundred, and the sender's socket hears of them as a few `receipts` messages. (A fixed 2 ms
/// window before each write cost every batch those 2 ms: delivered to all 55.6 ms p50 against
/// 49.9 without it, medians of four runs each, docs/benchmarks.md.)
package actor DeliveredMarks {
    /// Marks held at most while a batch is written (beyond them new marks are dropped: a mark
    /// is a watermark, and the next one carries it).
    static let capacity = 10_000

    private let chat: ChatService
    private let logger: Logger
    private var pending: [DeliveredMark] = []
    private var writing = false

    package init(chat: ChatService, logger: Logger) {
        self.chat = chat
        self.logger = logger
    }

    package func add(_ mark: DeliveredMark) {
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
