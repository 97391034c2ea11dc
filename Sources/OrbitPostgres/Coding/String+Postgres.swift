extension String: PostgresArrayElement {
    /// Strings let the server infer the parameter's type, so one can fill a `text`, `uuid`,
    /// `date`, enum or `jsonb` parameter alike; the server validates the text.
    public static var postgresType: PostgresType { .unspecified }
    public static var postgresArrayType: PostgresType { .unspecified }

    public func encode(into buffer: inout PostgresEncodingBuffer) throws {
        let start = buffer.count
        buffer.append(self)
        // PostgreSQL text cannot hold NUL, and libpq would silently cut the value at it.
        if buffer.bytes[start...].contains(0) {
            throw PostgresError(code: .encoding, message: "a string parameter contains a NUL byte, which PostgreSQL text cannot hold")
        }
    }

    /// Any column decodes to its text form as PostgreSQL prints it (an enum's label, a
    /// numeric's digits, …), in binary as in text; see `PostgresValue.textForm()` for the
    /// binary types it knows.
    public init(from value: PostgresValue) throws {
        self = try value.textForm()
    }
}

/// `Bool` travels as one byte, 1 or 0, in binary; `t` or `f` in text.
extension Bool: PostgresArrayElement {
    public static var postgresType: PostgresType { .bool }
    public static var postgresFormat: PostgresFormat { .binary }
    public static var postgresArrayType: PostgresType { .boolArray }

    public func encode(into buffer: inout PostgresEncodingBuffer) {
        buffer.append(self ? 1 : 0)
    }

    public func encodeArrayElement(into buffer: inout PostgresEncodingBuffer) {
        buffer.append(self ? UInt8(ascii: "t") : UInt8(ascii: "f"))
    }

    public init(from value: PostgresValue) throws {
        try value.expect(.bool)
        guard value.bytes.count == 1 else { throw PostgresDecodingFailure("the value is not a boolean") }
        switch (value.format, value.bytes[0]) {
        case (.binary, 1), (.text, UInt8(ascii: "t")): self = true
        case (.binary, 0), (.text, UInt8(ascii: "f")): self = false
        default: throw PostgresDecodingFailure("the value is not a boolean")
        }
    }
}

/// `Double` travels as IEEE 754 bits in binary, and as the shortest text that reads back as the
/// same value in array parameters.
extension Double: PostgresArrayElement {
    public static var postgresType: PostgresType { .float8 }
    public static var postgresFormat: PostgresFormat { .binary }
    public static var postgresArrayType: PostgresType { .float8Array }

    public func encode(into buffer: inout PostgresEncodingBuffer) {
        buffer.appendBigEndian(bitPattern)
    }

    public func encodeArrayElement(into buffer: inout PostgresEncodingBuffer) {
        if isNaN {
            buffer.append("NaN")
        } else if isInfinite {
            buffer.append(self < 0 ? "-Infinity" : "Infinity")
        } else {
            // Swift prints the shortest text that reads back as the same Double.
            buffer.append(description)
        }
    }

    /// Decodes `float4`, `float8`, integer columns and `numeric` (rounded to the nearest Double;
    /// a numeric `NaN` or infinity becomes the Double one).
    public init(from value: PostgresValue) throws {
        if value.format == .binary {
            switch value.type {
            case .float8: self = Double(bitPattern: try value.bigEndian(UInt64.self))
            case .float4: self = Double(Float(bitPattern: try value.bigEndian(UInt32.self)))
            case .int2, .int4, .int8: self = Double(try decodeInteger(value, min: .min, max: .max))
            case .numeric:
                guard let parsed = Double(try PostgresNumeric(binary: value.bytes).description) else {
                    throw PostgresDecodingFailure("the value is not a number")
                }
                self = parsed
            default: throw PostgresDecodingFailure("the column type is \(value.type)")
            }
            return
        }
        try value.expect(.float8, .float4, .numeric, .int2, .int4, .int8)
        guard let parsed = Double(value.string) else {
            throw PostgresDecodingFailure("the value is not a number")
        }
        self = parsed
    }
}

extension Float: PostgresArrayElement {
    public static var postgresType: PostgresType { .float4 }
    public static var postgresFormat: PostgresFormat { .binary }
    public static var postgresArrayType: PostgresType { .float4Array }

    public func encode(into buffer: inout PostgresEncodingBuffer) {
        buffer.appendBigEndian(bitPattern)
    }

    public func encodeArrayElement(into buffer: inout PostgresEncodingBuffer) {
        Double(self).encodeArrayElement(into: &buffer)
    }

    public init(from value: PostgresValue) throws {
        self = Float(try Double(from: value))
    }
}
