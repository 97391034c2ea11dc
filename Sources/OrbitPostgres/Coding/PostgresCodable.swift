/// A Swift value that can be sent to PostgreSQL as a statement parameter.
///
/// Values always travel as parameters (`$1`, `$2`, …), never inside the SQL text.
public protocol PostgresEncodable: Sendable {
    /// The parameter type announced to the server; `.unspecified` lets it infer the type from
    /// the context, which is what makes a `String` usable for `uuid`, enum or `date` columns.
    static var postgresType: PostgresType { get }
    /// `.text` (the default) or `.binary`.
    static var postgresFormat: PostgresFormat { get }
    /// Appends the value's bytes in `postgresFormat`.
    /// - Throws: `PostgresError` with code `.encoding` if the value cannot be represented.
    func encode(into buffer: inout PostgresEncodingBuffer) throws
}

extension PostgresEncodable {
    public static var postgresFormat: PostgresFormat { .text }
}

/// A Swift value that can be read from a non-NULL column.
///
/// Statements run with `query` and `pipeline` return their columns in binary; `executeScript`
/// (the simple-query protocol) returns them as text. A decoder reads both (`value.format`).
public protocol PostgresDecodable: Sendable {
    /// Decodes a non-NULL value, in text or binary format.
    /// - Throws: `PostgresDecodingFailure` when the bytes or the column type do not fit.
    init(from value: PostgresValue) throws

    /// What a SQL NULL decodes to. The default throws: only `Optional` accepts NULL.
    static func decodeNull() throws -> Self
}

extension PostgresDecodable {
    public static func decodeNull() throws -> Self {
        throw PostgresDecodingFailure("the value is NULL; decode an Optional to accept NULL")
    }
}

/// A type that can be an element of a PostgreSQL array parameter or column.
public protocol PostgresArrayElement: PostgresEncodable, PostgresDecodable {
    /// The array type, for example `int8[]` for `Int`.
    static var postgresArrayType: PostgresType { get }
    /// Appends the element's text form (array parameters travel as text, whatever the element's
    /// `postgresFormat`). Quoting is done by the caller.
    func encodeArrayElement(into buffer: inout PostgresEncodingBuffer) throws
}

extension PostgresArrayElement {
    public func encodeArrayElement(into buffer: inout PostgresEncodingBuffer) throws {
        try encode(into: &buffer)
    }
}

/// Why a value could not be decoded; the row turns it into a `PostgresError` naming the column.
public struct PostgresDecodingFailure: Error, Sendable {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
}

/// One non-NULL column value as the server sent it, valid only during `init(from:)`.
public struct PostgresValue {
    /// The raw bytes, without a terminating NUL.
    public let bytes: UnsafeRawBufferPointer
    public let type: PostgresType
    public let format: PostgresFormat

    public init(bytes: UnsafeRawBufferPointer, type: PostgresType, format: PostgresFormat = .text) {
        self.bytes = bytes
        self.type = type
        self.format = format
    }

    /// The bytes as a Swift string (invalid UTF-8 is repaired, which PostgreSQL never sends).
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// Throws unless the column's type is one of `types`.
    public func expect(_ types: PostgresType...) throws {
        guard types.contains(type) else {
            throw PostgresDecodingFailure("the column type is \(type)")
        }
    }

    /// The binary value as one big-endian integer filling all its bytes.
    /// - Throws: `PostgresDecodingFailure` if the value has another size.
    @inlinable
    public func bigEndian<Integer: FixedWidthInteger>(_: Integer.Type) throws -> Integer {
        guard bytes.count == MemoryLayout<Integer>.size else {
            throw PostgresDecodingFailure("the binary \(type) value has \(bytes.count) bytes, not \(MemoryLayout<Integer>.size)")
        }
        return Integer(bigEndian: bytes.loadUnaligned(as: Integer.self))
    }
}

/// The bytes of the parameters being encoded.
public struct PostgresEncodingBuffer: Sendable {
    @usableFromInline var bytes: [UInt8]

    @inlinable init(bytes: [UInt8]) { self.bytes = bytes }

    @inlinable public mutating func append(_ byte: UInt8) { bytes.append(byte) }

    @inlinable public mutating func append(contentsOf bytes: some Sequence<UInt8>) {
        self.bytes.append(contentsOf: bytes)
    }

    @inlinable public mutating func append(_ string: String) {
        bytes.append(contentsOf: string.utf8)
    }

    /// Appends `value` in network byte order, as binary parameters carry integers.
    @inlinable public mutating func appendBigEndian<Integer: FixedWidthInteger>(_ value: Integer) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    @usableFromInline var count: Int { bytes.count }
}
