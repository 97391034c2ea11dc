/// Wakes push delivery (`ScheduledJobs`) between its ticks: a chat message's pushes go out at
/// once, not at the next minute. Woken in one place, `LiveListener.fanOut` (a commit's way to
/// sockets and phones: docs/architecture.md, "Fan-out").
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
