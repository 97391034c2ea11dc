import Foundation

/// Where a follower is: at the start; listing the current state (begun at snapshot `mark`); or
/// in the log, having been given every change of the transactions visible in snapshot `since`,
/// and, while a window is paged, those of the window's snapshot up to (xid, seq). What the
/// follower still lacks belongs to transactions not visible in `mark` or `since`: whether
/// compaction may have taken any of it is judged from that snapshot (SyncService.requireKept).
///
/// Opaque to clients: base64url of a compact binary form (below) ending in a checksum, checked
/// when it comes back. Snapshots are PostgreSQL's `pg_snapshot` text (`xmin:xmax:xip,…`) here
/// and in SQL; in the token they are varints, the in-flight ids as gaps, so a snapshot with
/// thousands of transactions in flight stays a few kilobytes.
enum SyncCursor: Equatable {
    case start
    case state(mark: String, entity: Int, after: UUID?)
    case log(since: String, window: Window?)

    /// A window being paged: its snapshot and the last change delivered.
    struct Window: Equatable {
        var target: String
        var xid: UInt64
        var seq: Int64
    }

    /// The longest token accepted (characters).
    static let maximumLength = 8192

    /// The first byte: the format, and whose feed the cursor is of (a community's, or the
    /// user's own), so that one feed's cursor is never taken for a position in the other.
    private static let version: UInt8 = 2
    private static let ownVersion: UInt8 = 3
    private enum Kind: UInt8 { case start, state, log }

    /// Decodes a `next_cursor` of a community's feed, or with `own` of the user's own; nil is
    /// the start.
    /// - Throws: `ServiceError.invalidInput(field: "cursor")` for anything this server did not
    ///   make for that feed.
    init(_ text: String?, own: Bool = false) throws {
        guard let text else {
            self = .start
            return
        }
        let invalid = ServiceError.invalidInput(field: "cursor", reason: "is not a cursor of this feed")
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard text.count <= Self.maximumLength, let data = Data(base64Encoded: base64), data.count > 5 else { throw invalid }
        let bytes = [UInt8](data)
        if bytes.first == (own ? Self.ownVersion : Self.version) {
            guard let cursor = Self.decode(bytes, entities: own ? SyncService.ownEntities.count : SyncService.entities.count) else {
                throw invalid
            }
            self = cursor
        } else {
            // The first format was a community's feed's only.
            guard !own, let text = String(data: data, encoding: .utf8) else { throw invalid }
            self = try Self.decodeFirstFormat(text, invalid: invalid)
        }
    }

    /// The token of a community's feed.
    var encoded: String { encoded(own: false) }

    /// The token of a community's feed, or with `own` of the user's own.
    func encoded(own: Bool) -> String {
        var writer = Writer()
        writer.byte(own ? Self.ownVersion : Self.version)
        switch self {
        case .start:
            writer.byte(Kind.start.rawValue)
        case .state(let mark, let entity, let after):
            writer.byte(Kind.state.rawValue)
            writer.snapshot(mark)
            writer.varint(UInt64(entity))
            writer.uuid(after)
        case .log(let since, let window):
            writer.byte(Kind.log.rawValue)
            writer.snapshot(since)
            if let window {
                writer.byte(1)
                writer.snapshot(window.target)
                writer.varint(window.xid)
                writer.signed(window.seq)
            } else {
                writer.byte(0)
            }
        }
        let checksum = Self.checksum(writer.bytes)
        writer.bytes += withUnsafeBytes(of: checksum.bigEndian, Array.init)
        return Data(writer.bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private static func decode(_ bytes: [UInt8], entities: Int) -> SyncCursor? {
        let body = bytes.dropLast(4)
        let stored = bytes.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard checksum(body) == stored else { return nil }
        var reader = Reader(bytes: Array(body), offset: 1)
        let cursor: SyncCursor
        switch reader.byte().flatMap(Kind.init(rawValue:)) {
        case .start:
            cursor = .start
        case .state:
            guard let mark = reader.snapshot(), let entity = reader.varint(), entity < UInt64(entities),
                let after = reader.uuid()
            else { return nil }
            cursor = .state(mark: mark, entity: Int(entity), after: after)
        case .log:
            guard let since = reader.snapshot(), let paging = reader.byte() else { return nil }
            switch paging {
            case 0:
                cursor = .log(since: since, window: nil)
            case 1:
                guard let target = reader.snapshot(), let xid = reader.varint(), let seq = reader.signed() else { return nil }
                cursor = .log(since: since, window: Window(target: target, xid: xid, seq: seq))
            default:
                return nil
            }
        case nil:
            return nil
        }
        return reader.atEnd ? cursor : nil
    }

    /// The first format ("s1", issues 20 to 37): text fields joined by `|`, with a time the feed
    /// no longer needs. An app's stored cursor survives the upgrade.
    private static func decodeFirstFormat(_ decoded: String, invalid: ServiceError) throws -> SyncCursor {
        var fields = decoded.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 3, fields[0] == "s1",
            fields.removeLast() == String(FeedCursor.checksum(fields.joined(separator: "|")), radix: 36)
        else { throw invalid }
        switch (fields[1], fields.count) {
        case ("state", 6):
            guard isSnapshot(fields[2]), Int64(fields[3]) != nil, let entity = Int(fields[4]), SyncService.entities.indices.contains(entity)
            else { throw invalid }
            let after = fields[5].isEmpty ? nil : UUID(uuidString: fields[5])
            guard fields[5].isEmpty || after != nil else { throw invalid }
            return .state(mark: fields[2], entity: entity, after: after)
        case ("log", 7):
            guard isSnapshot(fields[2]), Int64(fields[3]) != nil, fields[4].isEmpty || isSnapshot(fields[4]), let xid = UInt64(fields[5]),
                let seq = Int64(fields[6])
            else { throw invalid }
            return .log(since: fields[2], window: fields[4].isEmpty ? nil : Window(target: fields[4], xid: xid, seq: seq))
        default:
            throw invalid
        }
    }

    /// `xmin:xmax:xip,…` with decimal transaction ids.
    static func isSnapshot(_ text: String) -> Bool {
        Snapshot(text) != nil
    }

    /// FNV-1a: catches edited or truncated cursors (it is not a secret; RLS guards the data).
    private static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        bytes.reduce(2_166_136_261 as UInt32) { ($0 ^ UInt32($1)) &* 16_777_619 }
    }

    /// A `pg_snapshot`: every transaction below `xmin` has ended, none at or after `xmax` had
    /// begun, and `inFlight` (each in xmin..<xmax, ascending) were running.
    struct Snapshot: Equatable {
        var xmin: UInt64
        var xmax: UInt64
        var inFlight: [UInt64]

        init?(xmin: UInt64, xmax: UInt64, inFlight: [UInt64]) {
            guard xmin <= xmax, inFlight.allSatisfy({ (xmin..<xmax).contains($0) }) else { return nil }
            self.xmin = xmin
            self.xmax = xmax
            self.inFlight = Array(Set(inFlight)).sorted()
        }

        init?(_ text: String) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3, let xmin = UInt64(parts[0]), let xmax = UInt64(parts[1]) else { return nil }
            var inFlight: [UInt64] = []
            if !parts[2].isEmpty {
                for part in parts[2].split(separator: ",", omittingEmptySubsequences: false) {
                    guard let xid = UInt64(part) else { return nil }
                    inFlight.append(xid)
                }
            }
            self.init(xmin: xmin, xmax: xmax, inFlight: inFlight)
        }

        var text: String {
            "\(xmin):\(xmax):" + inFlight.map(String.init).joined(separator: ",")
        }
    }

    private struct Writer {
        var bytes: [UInt8] = []

        mutating func byte(_ value: UInt8) {
            bytes.append(value)
        }

        /// LEB128: seven bits a byte, low first.
        mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }

        /// Zigzag, so small negative numbers stay short.
        mutating func signed(_ value: Int64) {
            varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
        }

        mutating func uuid(_ value: UUID?) {
            guard let value else {
                byte(0)
                return
            }
            byte(1)
            bytes += withUnsafeBytes(of: value.uuid, Array.init)
        }

        /// xmin, xmax − xmin, the count, then each in-flight id as its gap from the one before
        /// (from xmin for the first). (The snapshots here come from the database or a decoded
        /// cursor and always parse; were one not to, it would be written empty, and refused when
        /// it came back.)
        mutating func snapshot(_ text: String) {
            let snapshot = Snapshot(text)
            let xmin = snapshot?.xmin ?? 0
            varint(xmin)
            varint((snapshot?.xmax ?? 0) - xmin)
            let inFlight = snapshot?.inFlight ?? []
            varint(UInt64(inFlight.count))
            var previous = xmin
            for xid in inFlight {
                varint(xid - previous)
                previous = xid
            }
        }
    }

    private struct Reader {
        var bytes: [UInt8]
        var offset: Int

        var atEnd: Bool { offset == bytes.count }

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func varint() -> UInt64? {
            var value: UInt64 = 0
            for shift in stride(from: 0, to: 64, by: 7) {
                guard let byte = byte() else { return nil }
                let bits = UInt64(byte & 0x7f)
                // The tenth byte may only hold the top bit.
                guard shift < 63 || bits <= 1 else { return nil }
                value |= bits << UInt64(shift)
                if byte & 0x80 == 0 { return value }
            }
            return nil
        }

        mutating func signed() -> Int64? {
            guard let raw = varint() else { return nil }
            return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
        }

        /// nil when malformed; `.some(nil)` for no id.
        mutating func uuid() -> UUID?? {
            switch byte() {
            case 0:
                return .some(nil)
            case 1:
                guard offset + 16 <= bytes.count else { return nil }
                let b = Array(bytes[offset..<offset + 16])
                offset += 16
                return .some(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
            default:
                return nil
            }
        }

        mutating func snapshot() -> String? {
            guard let xmin = varint(), let span = varint(), let count = varint() else { return nil }
            let (xmax, overflow) = xmin.addingReportingOverflow(span)
            // Each in-flight id is distinct and below xmax: no more of them than the span.
            guard xmin > 0, !overflow, count <= span, count <= UInt64(bytes.count - offset) else { return nil }
            var inFlight: [UInt64] = []
            inFlight.reserveCapacity(Int(count))
            var previous = xmin
            for index in 0..<count {
                guard let gap = varint(), index == 0 || gap > 0 else { return nil }
                let (xid, overflow) = previous.addingReportingOverflow(gap)
                guard !overflow, xid < xmax else { return nil }
                inFlight.append(xid)
                previous = xid
            }
            return Snapshot(xmin: xmin, xmax: xmax, inFlight: inFlight)?.text
        }
    }
}
