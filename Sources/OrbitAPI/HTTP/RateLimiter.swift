import Foundation
import Synchronization

/// Token buckets by key (`auth:<ip>`, `write:<user id>`): `capacity` requests at once, refilled
/// at `perMinute`. In memory, per process.
package final class RateLimiter: Sendable {
    package struct Limit: Sendable {
        package var perMinute: Double
        package var burst: Double

        package init(perMinute: Double, burst: Double) {
            self.perMinute = perMinute
            self.burst = burst
        }
        /// No limit (benchmarks, tests of other things).
        package static let unlimited = Limit(perMinute: .infinity, burst: .infinity)
    }

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private let state = Mutex<[String: Bucket]>([:])
    private let clock = ContinuousClock()

    /// Takes one token for `key`, or says how many seconds until one is there.
    func acquire(_ key: String, limit: Limit) -> Int? {
        guard limit.perMinute.isFinite else { return nil }
        let now = clock.now
        return state.withLock { buckets in
            if buckets.count > 100_000 { prune(&buckets, now: now, limit: limit) }
            var bucket = buckets[key] ?? Bucket(tokens: limit.burst, updated: now)
            let elapsed = now - bucket.updated
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(limit.burst, bucket.tokens + seconds * limit.perMinute / 60)
            bucket.updated = now
            defer { buckets[key] = bucket }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            return max(1, Int(((1 - bucket.tokens) * 60 / limit.perMinute).rounded(.up)))
        }
    }

    /// Drops buckets that have refilled completely (they hold no information).
    private func prune(_ buckets: inout [String: Bucket], now: ContinuousClock.Instant, limit: Limit) {
        let full = Duration.seconds(limit.burst * 60 / limit.perMinute)
        buckets = buckets.filter { now - $0.value.updated < full }
    }
}
