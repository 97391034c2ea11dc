import Dispatch
import Foundation

/// Waits for one of `signals` (Ctrl-C is SIGINT) instead of letting it kill the process, so the
/// command can shut down cleanly.
final class SignalWaiter: @unchecked Sendable {
    // @unchecked Sendable: `sources` is written once in init and only cancelled in deinit.
    private let sources: [any DispatchSourceSignal]
    private let stream: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation

    init(signals: [Int32]) {
        (stream, continuation) = AsyncStream<Int32>.makeStream()
        var sources: [any DispatchSourceSignal] = []
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [continuation] in continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    /// Returns when the first of the signals arrives.
    func wait() async {
        for await _ in stream { return }
    }

    deinit {
        for source in sources { source.cancel() }
    }
}
