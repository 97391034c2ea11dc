import Crypto
package import Foundation

/// Stripe's webhook signature (docs/money.md, "Subscriptions"): `Stripe-Signature:
/// t=<unix seconds>,v1=<hex>[,v1=<hex>…]`, each `v1` an HMAC-SHA256 of `"<t>.<raw body>"` under an
/// endpoint secret. While a secret is being rolled Stripe signs with both, so any `v1` may match
/// any of the configured secrets. Checked before the body is parsed.
package enum StripeSignature {
    /// How far the signed time may be from ours, either way: Stripe's own libraries' default.
    package static let tolerance: TimeInterval = 300

    package enum Failure: Error, Equatable, CustomStringConvertible {
        /// No `t=` with a whole number, or no `v1=` at all.
        case malformed
        /// Signed more than the tolerance away from now (a replay of an old delivery, or a clock off).
        case outsideTolerance
        /// No `v1` is the body's HMAC under any configured secret.
        case mismatch

        package var description: String {
            switch self {
            case .malformed: "The Stripe-Signature header is missing or malformed (t=…,v1=…)."
            case .outsideTolerance: "The Stripe-Signature timestamp is more than 5 minutes from now."
            case .mismatch: "No signature in Stripe-Signature matches the body under the endpoint secret."
            }
        }
    }

    /// What can be checked of `header` before the body is read: there is one, with a timestamp
    /// within `tolerance` of `now` and a `v1`.
    package static func precheck(header: String?, now: Date, tolerance: TimeInterval = tolerance) throws(Failure) {
        guard let header, header.utf8.count <= 4096, header.contains("v1=") else { throw .malformed }
        var timestamp: Int64?
        for item in header.split(separator: ",") {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0] == "t" { timestamp = Int64(pair[1]) }
        }
        guard let timestamp else { throw .malformed }
        guard abs(now.timeIntervalSince(Date(timeIntervalSince1970: TimeInterval(timestamp)))) <= tolerance else { throw .outsideTolerance }
    }

    /// The signed time, once some `v1` of `header` is the HMAC of `payload` under one of
    /// `secrets`, within `tolerance` of `now`.
    @discardableResult
    package static func verify(
        payload: [UInt8], header: String?, secrets: [String], now: Date, tolerance: TimeInterval = tolerance
    ) throws(Failure) -> Date {
        guard let header else { throw .malformed }
        var timestamp: Int64?
        var signatures: [[UInt8]] = []
        for item in header.split(separator: ",") {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            switch pair[0] {
            case "t": timestamp = Int64(pair[1])
            // Not hex (or not 32 bytes): it cannot match, and the others are still tried.
            case "v1": if let bytes = hexBytes(pair[1]), bytes.count == 32 { signatures.append(bytes) }
            default: continue  // v0 (test mode's other scheme) and anything newer are not ours to check
            }
        }
        guard let timestamp, header.contains("v1=") else { throw .malformed }
        let signed = Date(timeIntervalSince1970: TimeInterval(timestamp))
        guard abs(now.timeIntervalSince(signed)) <= tolerance else { throw .outsideTolerance }
        let message = Array("\(timestamp).".utf8) + payload
        for secret in secrets {
            let key = SymmetricKey(data: Array(secret.utf8))
            // Constant time, whichever byte differs.
            if signatures.contains(where: { HMAC<SHA256>.isValidAuthenticationCode($0, authenticating: message, using: key) }) {
                return signed
            }
        }
        throw .mismatch
    }

    /// The header Stripe would send for `payload` signed at `timestamp` with each of `secrets`
    /// (tests, and anyone replaying a saved event to a server).
    package static func header(payload: [UInt8], secrets: [String], timestamp: Date) -> String {
        let seconds = Int64(timestamp.timeIntervalSince1970.rounded(.down))
        let message = Array("\(seconds).".utf8) + payload
        let signatures = secrets.map { secret in
            let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Array(secret.utf8)))
            return "v1=" + code.map { String(format: "%02x", $0) }.joined()
        }
        return (["t=\(seconds)"] + signatures).joined(separator: ",")
    }

    private static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
