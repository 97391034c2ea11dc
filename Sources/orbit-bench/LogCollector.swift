import Logging
import Synchronization

/// A log handler that keeps the server's LOG messages: auto_explain's plans, as text
/// (`orbit-bench search` prints them; `orbit-bench scale` parses them into `LoggedPlan`s).
final class LogCollector: LogHandler, Sendable {
    private let messages = Mutex<[String]>([])
    private let settings = Mutex<(metadata: Logger.Metadata, level: Logger.Level)>(([:], .debug))

    var metadata: Logger.Metadata {
        get { settings.withLock { $0.metadata } }
        set { settings.withLock { $0.metadata = newValue } }
    }

    var logLevel: Logger.Level {
        get { settings.withLock { $0.level } }
        set { settings.withLock { $0.level = newValue } }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard case .string(let severity)? = event.metadata?["postgres.severity"], severity == "LOG" else { return }
        messages.withLock { $0.append(event.message.description) }
    }

    func reset() { messages.withLock { $0.removeAll() } }
    func take() -> [String] { messages.withLock { $0 } }
}
