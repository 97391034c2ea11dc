package import Foundation

/// SplitMix64: a small seeded generator — deterministic ids for the benchmarks (as in the
/// peers), replayable choices for the sync soak, and the property tests' generator, so that a
/// failing seed can be run again. The one SplitMix64 of the package.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    package var state: UInt64

    package init(seed: UInt64) { state = seed }

    /// 128 random bits as a UUID (not RFC 4122 version bits, which PostgreSQL does not check).
    package mutating func uuid() -> UUID {
        let (high, low) = (next(), next())
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { raw in
            raw.storeBytes(of: high, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: bytes)
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SplitMix64 {
    /// A number in 0..<bound (0 for a bound below 1).
    package mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }
}
