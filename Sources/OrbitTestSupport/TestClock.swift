package import Foundation
import Synchronization

/// A clock a test moves: hand `{ clock.now }` to what reads the time (the services' `now`, a
/// push sender's) and set or advance it between steps. The one test clock of the suites.
package final class TestClock: Sendable {
    /// Where it started.
    package let start: Date
    private let current: Mutex<Date>

    package init(_ start: Date = Date()) {
        self.start = start
        current = Mutex(start)
    }

    package var now: Date {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// Moves it forward by `seconds`.
    package func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}
