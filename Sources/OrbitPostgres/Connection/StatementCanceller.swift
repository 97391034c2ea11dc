import CLibPQ
import Foundation
import Synchronization

/// Cancels the statement a connection is running when its Task is cancelled.
///
/// `PQcancel` opens a second connection to ask the server to interrupt the first, so it runs
/// on a utility queue, never on the cooperative pool. A cancel request is only sent while a
/// statement is in flight, and the connection's thread does not start its next statement until
/// the request has been delivered: a late cancel can never hit the following statement
/// (the server ignores a cancel that reaches an idle session).
///
/// `begin` and `end` are one atomic operation each on the common path; the lock is only taken
/// when a cancellation is under way.
final class StatementCanceller: @unchecked Sendable {
    // @unchecked Sendable: `handle` is guarded by `condition`; `state` is atomic.
    private let state = Atomic<UInt8>(State.idle.rawValue)
    private let condition = NSCondition()
    private var handle: OpaquePointer?  // PGcancel, freed by close()
    private static let queue = DispatchQueue(label: "orbit.postgres.cancel", attributes: .concurrent)

    private enum State: UInt8 {
        case idle, running, cancelling, cancelled
    }

    init(handle: OpaquePointer?) {
        self.handle = handle
    }

    /// Marks a statement as in flight. Called on the connection's thread.
    func begin() {
        state.store(State.running.rawValue, ordering: .releasing)
    }

    /// Marks the statement as finished, first waiting for a cancel request being sent.
    /// - Returns: whether a cancel request was delivered while the statement ran.
    @discardableResult
    func end() -> Bool {
        if state.compareExchange(expected: State.running.rawValue, desired: State.idle.rawValue, ordering: .acquiringAndReleasing).exchanged {
            return false
        }
        condition.lock()
        while state.load(ordering: .acquiring) == State.cancelling.rawValue { condition.wait() }
        let cancelled = state.load(ordering: .acquiring) == State.cancelled.rawValue
        state.store(State.idle.rawValue, ordering: .releasing)
        condition.unlock()
        return cancelled
    }

    /// Whether a cancel was requested for the statement in flight. A statement that takes two
    /// round trips (prepare, then execute) checks this between them: a cancel request that
    /// reaches the server while it waits for the next message is ignored by the server, so the
    /// client has to honour it itself.
    var isCancelRequested: Bool {
        let current = state.load(ordering: .acquiring)
        return current == State.cancelling.rawValue || current == State.cancelled.rawValue
    }

    /// Asks the server to cancel the running statement, if there is one. Returns at once.
    func cancel() {
        guard state.compareExchange(expected: State.running.rawValue, desired: State.cancelling.rawValue, ordering: .acquiringAndReleasing).exchanged
        else {
            return
        }
        Self.queue.async { self.send() }
    }

    private func send() {
        // `handle` stays valid: close() waits while the state is `.cancelling`.
        condition.lock()
        let handle = self.handle
        condition.unlock()
        if let handle {
            // PQcancel is thread-safe and uses only the PGcancel object, never the PGconn.
            // A failure (the server is gone) needs no handling: the statement fails on its own.
            var message = [CChar](repeating: 0, count: 256)
            _ = PQcancel(handle, &message, Int32(message.count))
        }
        condition.lock()
        state.store(State.cancelled.rawValue, ordering: .releasing)
        condition.broadcast()
        condition.unlock()
    }

    /// Frees the cancel handle. Called by the connection when it closes, after the last statement.
    func close() {
        condition.lock()
        while state.load(ordering: .acquiring) == State.cancelling.rawValue { condition.wait() }
        if let handle { PQfreeCancel(handle) }
        handle = nil
        condition.unlock()
    }
}
