import Foundation
import OrbitCore

/// Writes an `Encodable` value as JSON straight into bytes, in the order its `encode(to:)`
/// writes them: no intermediate tree, unlike Foundation's `JSONEncoder` (which took 235 µs for
/// a 10 KB feed page here; see `orbit-bench http`).
///
/// What it writes matches the API's conventions: dates as RFC 3339 UTC with milliseconds,
/// slashes unescaped, keys in the order the type encodes them (a dictionary's in its own
/// order, as `JSONEncoder` without `.sortedKeys`). Non-finite numbers are an error, as JSON
/// has none.
package struct ResponseJSONEncoder {
    /// How dates are written.
    package enum DateStyle: Sendable {
        /// RFC 3339 in UTC with milliseconds (`2026-03-03T23:00:00.000Z`): the API's.
        case milliseconds
        /// RFC 3339 in UTC in whole seconds (`2026-03-03T23:00:00Z`): `orbitctl --json`'s.
        case wholeSeconds
    }

    /// - Parameters:
    ///   - directJSON: false writes `DirectJSON` types through their `encode(to:)` too (what
    ///     `DirectJSONTests` compares them with).
    ///   - dates: how dates are written.
    package static func encode(_ value: some Encodable, directJSON: Bool = true, dates: DateStyle = .milliseconds) throws -> [UInt8] {
        let writer = JSONWriter(directJSON: directJSON, dates: dates)
        try writer.writeValue(value, depth: 0)
        writer.close(to: 0)
        return writer.bytes
    }
}

/// The output and the containers still open, outermost first. An encoder at depth `d` writes
/// its value as element `d`; anything deeper that is still open when a container at depth `d`
/// writes its next element (or when a value's `encode(to:)` returns) is complete and closed.
final class JSONWriter {
    var bytes: [UInt8] = []
    private var open: [(isObject: Bool, count: Int)] = []
    let directJSON: Bool
    let dates: ResponseJSONEncoder.DateStyle

    /// - Parameter directJSON: only with `.milliseconds` dates (`DirectJSON` writes those).
    init(directJSON: Bool = true, dates: ResponseJSONEncoder.DateStyle = .milliseconds) {
        self.directJSON = directJSON && dates == .milliseconds
        self.dates = dates
        bytes.reserveCapacity(4096)
    }

    var depth: Int { open.count }

    func close(to depth: Int) {
        while open.count > depth {
            bytes.append(open.removeLast().isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
        }
    }

    /// Opens an object or array as the container of depth `depth` (or finds it open already:
    /// a type may ask its encoder for the same container twice).
    func openContainer(isObject: Bool, depth: Int) {
        if open.count > depth, open[depth].isObject == isObject {
            close(to: depth + 1)
            return
        }
        close(to: depth)
        open.append((isObject, 0))
        bytes.append(isObject ? UInt8(ascii: "{") : UInt8(ascii: "["))
    }

    /// Starts the next member of the object at `depth`: `,"key":`.
    func beginMember(_ key: String, depth: Int) {
        close(to: depth + 1)
        if open[depth].count > 0 { bytes.append(UInt8(ascii: ",")) }
        open[depth].count += 1
        writeString(key)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Starts the next element of the array at `depth`.
    func beginElement(depth: Int) {
        close(to: depth + 1)
        if open[depth].count > 0 { bytes.append(UInt8(ascii: ",")) }
        open[depth].count += 1
    }

    func writeString(_ string: String) {
        Self.appendString(string, to: &bytes)
    }

    /// `string` as a JSON string. One append where nothing needs escaping: per-byte appends cost.
    static func appendString(_ string: String, to bytes: inout [UInt8]) {
        let utf8 = string.utf8
        if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        bytes.append(UInt8(ascii: "\""))
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                let hex: StaticString = "0123456789abcdef"
                bytes += [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex.utf8Start[Int(byte >> 4)],
                    hex.utf8Start[Int(byte & 0x0F)],
                ]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Lends the output to a `DirectJSON` value (a struct passed `inout`: no exclusivity check
    /// per byte, as the class's own property has).
    func withOutput(_ body: (inout JSONOutput) -> Void) {
        var output = JSONOutput(bytes: bytes)
        bytes = []
        body(&output)
        bytes = output.bytes
    }

    func writeRaw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    func writeDouble(_ value: Double, path: [any CodingKey]) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "JSON has no infinities or NaN"))
        }
        writeRaw(value.description)
    }

    /// Writes `value` as the element of depth `depth`.
    ///
    /// Common leaf types are recognized by comparing type metadata (a pointer comparison) before
    /// any dynamic cast: casting every value was most of the cost. Coding paths are not tracked
    /// (they would cost an array per value) beyond what an error needs.
    func writeValue<T: Encodable>(_ value: T, depth: Int, path: [any CodingKey] = []) throws {
        if T.self == String.self, let string = value as? String {
            writeString(string)
        } else if T.self == Date.self, let date = value as? Date {
            writeString(dates == .milliseconds ? APIJSON.formatTimestamp(date) : date.formatted(.iso8601))
        } else if T.self == Int.self, let number = value as? Int {
            writeRaw(String(number))
        } else if T.self == Int64.self, let number = value as? Int64 {
            writeRaw(String(number))
        } else if T.self == Bool.self, let flag = value as? Bool {
            writeRaw(flag ? "true" : "false")
        } else if T.self == Double.self, let number = value as? Double {
            try writeDouble(number, path: path)
        } else if T.self == UUID.self, let uuid = value as? UUID {
            writeString(uuid.uuidString.lowercased())
        } else if let object = value as? any JSONWritable {
            try object.write(to: self, depth: depth, path: path)
        } else {
            try writeEncoded(value, depth: depth, path: path)
        }
    }

    /// Writes `value` through its `encode(to:)`: its nil members as `null`, unless it
    /// `OmitsNilMembers`.
    func writeEncoded(_ value: some Encodable, depth: Int, path: [any CodingKey]) throws {
        let before = bytes.count
        let encoder = JSONValueEncoder(writer: self, depth: depth, codingPath: path, omitsNil: value is any OmitsNilMembers)
        try value.encode(to: encoder)
        close(to: depth)
        // A value that encoded nothing at all: an empty object, as JSONEncoder writes it.
        if bytes.count == before { writeRaw("{}") }
    }
}

/// A value that writes itself rather than through `encode(to:)`: dictionaries (below) and the
/// `DirectJSON` types.
protocol JSONWritable {
    func write(to writer: JSONWriter, depth: Int, path: [any CodingKey]) throws
}

/// A dictionary keyed by strings is an object written in key order, whatever order the
/// dictionary holds its keys in (which differs between processes, and between two equal
/// dictionaries built differently): the same value is always the same bytes, so its entity tag
/// (`EntityTags`) is the same on every server.
extension Dictionary: JSONWritable where Key == String, Value: Encodable {
    func write(to writer: JSONWriter, depth: Int, path: [any CodingKey]) throws {
        writer.openContainer(isObject: true, depth: depth)
        for key in keys.sorted() {
            guard let value = self[key] else { continue }
            writer.beginMember(key, depth: depth)
            try writer.writeValue(value, depth: depth + 1, path: path)
        }
        writer.close(to: depth)
    }
}

struct JSONValueEncoder: Encoder {
    let writer: JSONWriter
    let depth: Int
    let codingPath: [any CodingKey]
    /// Whether `encodeIfPresent` leaves a nil member out (`OmitsNilMembers`) or writes `null`.
    var omitsNil = false
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        writer.openContainer(isObject: true, depth: depth)
        return KeyedEncodingContainer(KeyedJSONContainer<Key>(writer: writer, depth: depth, codingPath: codingPath, omitsNil: omitsNil))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        writer.openContainer(isObject: false, depth: depth)
        return UnkeyedJSONContainer(writer: writer, depth: depth, codingPath: codingPath, omitsNil: omitsNil)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleJSONContainer(writer: writer, depth: depth, codingPath: codingPath)
    }
}

struct KeyedJSONContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: JSONWriter
    let depth: Int
    let codingPath: [any CodingKey]
    var omitsNil = false

    mutating func encodeNil(forKey key: Key) throws {
        writer.beginMember(key.stringValue, depth: depth)
        writer.writeRaw("null")
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        writer.beginMember(key.stringValue, depth: depth)
        try writer.writeValue(value, depth: depth + 1, path: codingPath)
    }

    // Every key is written, `null` included (docs/api.md: "every field of a resource is present,
    // `null` when empty"), unless the value `OmitsNilMembers`: a synthesized `encode(to:)` calls
    // these for its optionals, and the protocol's defaults would leave a nil key out.
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try encodeOrNull(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encodeOrNull(value, forKey: key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encodeOrNull(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encodeOrNull(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encodeOrNull(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encodeOrNull(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encodeOrNull(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encodeOrNull(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encodeOrNull(value, forKey: key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encodeOrNull(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encodeOrNull(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encodeOrNull(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encodeOrNull(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encodeOrNull(value, forKey: key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encodeOrNull(value, forKey: key) }

    private mutating func encodeOrNull<T: Encodable>(_ value: T?, forKey key: Key) throws {
        guard let value else { return omitsNil ? () : try encodeNil(forKey: key) }
        try encode(value, forKey: key)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        writer.beginMember(key.stringValue, depth: depth)
        writer.openContainer(isObject: true, depth: depth + 1)
        return KeyedEncodingContainer(KeyedJSONContainer<NestedKey>(writer: writer, depth: depth + 1, codingPath: codingPath, omitsNil: omitsNil))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        writer.beginMember(key.stringValue, depth: depth)
        writer.openContainer(isObject: false, depth: depth + 1)
        return UnkeyedJSONContainer(writer: writer, depth: depth + 1, codingPath: codingPath, omitsNil: omitsNil)
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(forKey: Key(stringValue: "super")!)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        writer.beginMember(key.stringValue, depth: depth)
        return JSONValueEncoder(writer: writer, depth: depth + 1, codingPath: codingPath, omitsNil: omitsNil)
    }
}

struct UnkeyedJSONContainer: UnkeyedEncodingContainer {
    let writer: JSONWriter
    let depth: Int
    let codingPath: [any CodingKey]
    /// The value's `OmitsNilMembers`, for the containers nested in it.
    let omitsNil: Bool
    private(set) var count = 0

    init(writer: JSONWriter, depth: Int, codingPath: [any CodingKey], omitsNil: Bool) {
        self.writer = writer
        self.depth = depth
        self.codingPath = codingPath
        self.omitsNil = omitsNil
    }

    mutating func encodeNil() throws {
        writer.beginElement(depth: depth)
        writer.writeRaw("null")
        count += 1
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        writer.beginElement(depth: depth)
        try writer.writeValue(value, depth: depth + 1, path: codingPath)
        count += 1
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        writer.beginElement(depth: depth)
        writer.openContainer(isObject: true, depth: depth + 1)
        count += 1
        return KeyedEncodingContainer(KeyedJSONContainer<NestedKey>(writer: writer, depth: depth + 1, codingPath: codingPath, omitsNil: omitsNil))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        writer.beginElement(depth: depth)
        writer.openContainer(isObject: false, depth: depth + 1)
        count += 1
        return UnkeyedJSONContainer(writer: writer, depth: depth + 1, codingPath: codingPath, omitsNil: omitsNil)
    }

    mutating func superEncoder() -> any Encoder {
        writer.beginElement(depth: depth)
        count += 1
        return JSONValueEncoder(writer: writer, depth: depth + 1, codingPath: codingPath, omitsNil: omitsNil)
    }
}

struct SingleJSONContainer: SingleValueEncodingContainer {
    let writer: JSONWriter
    let depth: Int
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { writer.writeRaw("null") }
    mutating func encode(_ value: Bool) throws { writer.writeRaw(value ? "true" : "false") }
    mutating func encode(_ value: String) throws { writer.writeString(value) }
    mutating func encode(_ value: Double) throws { try writer.writeDouble(value, path: codingPath) }
    mutating func encode(_ value: Float) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "JSON has no infinities or NaN"))
        }
        writer.writeRaw(value.description)
    }
    mutating func encode(_ value: Int) throws { writer.writeRaw(String(value)) }
    mutating func encode(_ value: Int8) throws { writer.writeRaw(String(value)) }
    mutating func encode(_ value: Int16) throws { writer.writeRaw(String(value)) }
    mutating func encode(_ value: Int32) throws { writer.writeRaw(String(value)) }
    mutating func encode(_ value: Int64) throws { writer.writeRaw(String(value)) }
    mutating func encode(_ value: UInt) throws { writer.writeRaw(String(value)) }
    mutating func encode(_ value: UInt8) throws { writer.writeRaw(String(value)) }
    mutating func encode(_ value: UInt16) throws { writer.writeRaw(String(value)) }
    mutating func encode(_ value: UInt32) throws { writer.writeRaw(String(value)) }
    mutating func encode(_ value: UInt64) throws { writer.writeRaw(String(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { try writer.writeValue(value, depth: depth, path: codingPath) }
}
