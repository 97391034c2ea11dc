extension PostgresEncodingBuffer {
    /// Appends the decimal digits of `value`.
    @inlinable
    mutating func appendDecimal(_ value: Int64) {
        if value == 0 {
            append(UInt8(ascii: "0"))
            return
        }
        var magnitude = value.magnitude
        if value < 0 { append(UInt8(ascii: "-")) }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var count = 0
            while magnitude > 0 {
                digits[count] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
                count += 1
            }
            while count > 0 {
                count -= 1
                bytes.append(digits[count])
            }
        }
    }
}

/// Reads an integer column (`int2`, `int4`, `int8`, `oid`) in binary or text form.
@inlinable
func decodeInteger(_ value: PostgresValue, min: Int64, max: Int64) throws -> Int64 {
    let result: Int64
    if value.format == .binary {
        switch value.type {
        case .int8: result = try value.bigEndian(Int64.self)
        case .int4: result = Int64(try value.bigEndian(Int32.self))
        case .int2: result = Int64(try value.bigEndian(Int16.self))
        case .oidType: result = Int64(try value.bigEndian(UInt32.self))
        default: throw PostgresDecodingFailure("the column type is \(value.type)")
        }
    } else {
        switch value.type {
        case .int2, .int4, .int8, .oidType: result = try parseDecimalInteger(value.bytes)
        default: throw PostgresDecodingFailure("the column type is \(value.type)")
        }
    }
    guard result >= min, result <= max else {
        throw PostgresDecodingFailure("the value is out of range")
    }
    return result
}

/// Parses PostgreSQL's text form of an integer.
@inlinable
func parseDecimalInteger(_ bytes: UnsafeRawBufferPointer) throws -> Int64 {
    guard !bytes.isEmpty else { throw PostgresDecodingFailure("the value is empty") }
    var index = 0
    let negative = bytes[0] == UInt8(ascii: "-")
    if negative { index = 1 }
    guard index < bytes.count else { throw PostgresDecodingFailure("the value is not an integer") }
    // Accumulate negatively so that Int64.min parses without overflow.
    var result: Int64 = 0
    while index < bytes.count {
        let digit = bytes[index] &- UInt8(ascii: "0")
        guard digit < 10 else { throw PostgresDecodingFailure("the value is not an integer") }
        let (times10, overflow1) = result.multipliedReportingOverflow(by: 10)
        let (next, overflow2) = times10.subtractingReportingOverflow(Int64(digit))
        guard !overflow1, !overflow2 else { throw PostgresDecodingFailure("the value is out of range") }
        result = next
        index += 1
    }
    if !negative {
        guard result != .min else { throw PostgresDecodingFailure("the value is out of range") }
        result = -result
    }
    return result
}

// Integers travel in binary as parameters (big-endian, their own width) and as decimal text in
// array parameters.

extension Int64: PostgresArrayElement {
    public static var postgresType: PostgresType { .int8 }
    public static var postgresFormat: PostgresFormat { .binary }
    public static var postgresArrayType: PostgresType { .int8Array }
    @inlinable public func encode(into buffer: inout PostgresEncodingBuffer) { buffer.appendBigEndian(self) }
    @inlinable public func encodeArrayElement(into buffer: inout PostgresEncodingBuffer) { buffer.appendDecimal(self) }
    @inlinable public init(from value: PostgresValue) throws {
        self = try decodeInteger(value, min: .min, max: .max)
    }
}

extension Int: PostgresArrayElement {
    public static var postgresType: PostgresType { .int8 }
    public static var postgresFormat: PostgresFormat { .binary }
    public static var postgresArrayType: PostgresType { .int8Array }
    @inlinable public func encode(into buffer: inout PostgresEncodingBuffer) { buffer.appendBigEndian(Int64(self)) }
    @inlinable public func encodeArrayElement(into buffer: inout PostgresEncodingBuffer) { buffer.appendDecimal(Int64(self)) }
    @inlinable public init(from value: PostgresValue) throws {
        self = Int(try decodeInteger(value, min: Int64(Int.min), max: Int64(Int.max)))
    }
}

extension Int32: PostgresArrayElement {
    public static var postgresType: PostgresType { .int4 }
    public static var postgresFormat: PostgresFormat { .binary }
    public static var postgresArrayType: PostgresType { .int4Array }
    @inlinable public func encode(into buffer: inout PostgresEncodingBuffer) { buffer.appendBigEndian(self) }
    @inlinable public func encodeArrayElement(into buffer: inout PostgresEncodingBuffer) { buffer.appendDecimal(Int64(self)) }
    @inlinable public init(from value: PostgresValue) throws {
        self = Int32(try decodeInteger(value, min: Int64(Int32.min), max: Int64(Int32.max)))
    }
}

extension Int16: PostgresArrayElement {
    public static var postgresType: PostgresType { .int2 }
    public static var postgresFormat: PostgresFormat { .binary }
    public static var postgresArrayType: PostgresType { .int2Array }
    @inlinable public func encode(into buffer: inout PostgresEncodingBuffer) { buffer.appendBigEndian(self) }
    @inlinable public func encodeArrayElement(into buffer: inout PostgresEncodingBuffer) { buffer.appendDecimal(Int64(self)) }
    @inlinable public init(from value: PostgresValue) throws {
        self = Int16(try decodeInteger(value, min: Int64(Int16.min), max: Int64(Int16.max)))
    }
}
