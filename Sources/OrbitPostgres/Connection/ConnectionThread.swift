import Foundation

/// The OS thread a connection's blocking libpq calls run on, and a `TaskExecutor` for it.
///
/// libpq blocks in `recv`, so its calls must never run on Swift's cooperative pool. Each
/// connection owns one of these threads. Code that prefers this executor
/// (`withTaskExecutorPreference`, which `ConnectionPool.withConnection` sets up) runs here and
/// calls libpq directly, without a hop per statement; anyone else hops here and back.
final class ConnectionThread: TaskExecutor, @unchecked Sendable {
    // @unchecked Sendable: `queue` and `isRunning` are only touched with `condition` locked;
    // `threadID` is written once by the thread before `init` returns and only read afterwards.
    private let condition = NSCondition()
    private var queue: [Work] = []
    private var isRunning = true
    private var threadID = pthread_t()

    private enum Work {
        case job(UnownedJob)
        case closure(() -> Void)
    }

    init(name: String) {
        let started = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            threadID = pthread_self()
            // Named from inside: a name set on Foundation's Thread before start is not applied
            // to the OS thread on Linux (where names hold at most 15 bytes).
            Thread.current.name = String(name.prefix(15))
            started.signal()
            runLoop()
        }
        thread.start()
        started.wait()
    }

    /// True when called on this thread: the caller may use the connection's libpq handle.
    var isCurrent: Bool { pthread_equal(pthread_self(), threadID) != 0 }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        if isRunning {
            queue.append(.job(job))
            condition.signal()
            condition.unlock()
        } else {
            condition.unlock()
            // The connection is closed but a task still prefers this executor: let the global
            // executor run it. Such a task finds the connection closed and gets an error.
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }
    }

    /// Runs `body` on this thread and returns its result; runs it inline when already here.
    func run<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        if isCurrent { return try body() }
        return try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Swift.Result { try body() }) }
        }
    }

    /// Moves the calling task onto this thread. With this thread as the task's preferred
    /// executor the task stays here afterwards (the resumption is enqueued here).
    func hop() async {
        if isCurrent { return }
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            submit { continuation.resume() }
        }
    }

    private func submit(_ closure: @escaping () -> Void) {
        condition.lock()
        if isRunning {
            queue.append(.closure(closure))
            condition.signal()
            condition.unlock()
        } else {
            condition.unlock()
            closure()
        }
    }

    /// Stops the thread once the work already queued has run.
    func shutdown() {
        condition.lock()
        isRunning = false
        condition.signal()
        condition.unlock()
    }

    private func runLoop() {
        var batch: [Work] = []
        while true {
            condition.lock()
            while queue.isEmpty && isRunning { condition.wait() }
            if queue.isEmpty {
                condition.unlock()
                return
            }
            swap(&batch, &queue)
            condition.unlock()
            for work in batch {
                switch work {
                case .job(let job): job.runSynchronously(on: asUnownedTaskExecutor())
                case .closure(let closure): closure()
                }
            }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
