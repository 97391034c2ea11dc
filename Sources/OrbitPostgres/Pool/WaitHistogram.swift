import Foundation

/// How long tasks waited for something (a pooled connection), as counts in buckets a quarter of
/// an octave wide (each bound 2^¼ ≈ 1.19 times the one before, from 1 µs to about 18 minutes):
/// percentiles to within 19 %, in a fixed 124 counters however many waits are recorded.
public struct WaitHistogram: Sendable, Equatable {
    /// `counts[0]`: waits under 1 µs (a connection at hand); `counts[i]`: waits up to
    /// `upperBound(i)`.
    public private(set) var counts = [Int](repeating: 0, count: 124)

    public init() {}

    /// Waits recorded.
    public var count: Int { counts.reduce(0, +) }

    mutating func record(_ wait: Duration) {
        let microseconds = Double(wait.components.seconds) * 1e6 + Double(wait.components.attoseconds) / 1e12
        guard microseconds >= 1 else {
            counts[0] += 1
            return
        }
        let index = Int((4 * log2(microseconds)).rounded(.up)) + 1
        counts[min(index, counts.count - 1)] += 1
    }

    /// The upper bound of bucket `index` in microseconds.
    static func upperBound(_ index: Int) -> Double {
        index == 0 ? 1 : pow(2, Double(index - 1) / 4)
    }

    /// The wait that fraction `quantile` (0...1) of the waits did not exceed, in milliseconds
    /// (the bound of its bucket); nil before any wait is recorded.
    public func milliseconds(atQuantile quantile: Double) -> Double? {
        let total = count
        guard total > 0 else { return nil }
        let rank = max(1, Int((quantile * Double(total)).rounded(.up)))
        var seen = 0
        for (index, count) in counts.enumerated() {
            seen += count
            if seen >= rank { return index == 0 ? 0 : Self.upperBound(index) / 1000 }
        }
        return Self.upperBound(counts.count - 1) / 1000
    }
}
