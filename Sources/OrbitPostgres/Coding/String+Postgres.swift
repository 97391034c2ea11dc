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

    /// Any column decodes to its text form (an enum's label, a numeric's digits, …).
    public init(from value: PostgresValue) throws {
        self = value.string
    }
}

extension Bool: PostgresArrayElement {
    public static var postgresType: PostgresType { .bool }
    public static var postgresArrayType: PostgresType { .boolArray }

    public func encode(into buffer: inout PostgresEncodingBuffer) {
        buffer.append(self ? UInt8(ascii: "t") : UInt8(ascii: "f"))
    }

    public init(from value: PostgresValue) throws {
        try value.expect(.bool)
        guard value.bytes.count == 1 else { throw PostgresDecodingFailure("the value is not a boolean") }
        switch value.bytes[0] {
        case UInt8(ascii: "t"): self = true
        case UInt8(ascii: "f"): self = false
        default: throw PostgresDecodingFailure("the value is not a boolean")
        }
    }
}

extension Double: PostgresArrayElement {
    public static var postgresType: PostgresType { .float8 }
    public static var postgresArrayType: PostgresType { .float8Array }

    public func encode(into buffer: inout PostgresEncodingBuffer) {
        if isNaN {
            buffer.append("NaN")
        } else if isInfinite {
            buffer.append(self < 0 ? "-Infinity" : "Infinity")
        } else {
            // Swift prints the shortest text that reads back as the same Double.
            buffer.append(description)
        }
    }

    /// Decodes `float4`, `float8`, integer columns and `numeric` (rounded to the nearest Double).
    public init(from value: PostgresValue) throws {
        try value.expect(.float8, .float4, .numeric, .int2, .int4, .int8)
        guard let parsed = Double(value.string) else {
            throw PostgresDecodingFailure("the value is not a number")
        }
        self = parsed
    }
}

extension Float: PostgresArrayElement {
    public static var postgresType: PostgresType { .float4 }
    public static var postgresArrayType: PostgresType { .float4Array }

    public func encode(into buffer: inout PostgresEncodingBuffer) {
        Double(self).encode(into: &buffer)
    }

    public init(from value: PostgresValue) throws {
        self = Float(try Double(from: value))
    }
}
