public import struct Foundation.Data

/// `Data` travels as `bytea`: its raw bytes in binary (zero bytes and all), hex in array parameters.
extension Data: PostgresArrayElement {
    public static var postgresType: PostgresType { .bytea }
    public static var postgresFormat: PostgresFormat { .binary }
    public static var postgresArrayType: PostgresType { .byteaArray }

    public func encode(into buffer: inout PostgresEncodingBuffer) {
        buffer.append(contentsOf: self)
    }

    public func encodeArrayElement(into buffer: inout PostgresEncodingBuffer) {
        let hex: StaticString = "0123456789abcdef"
        buffer.append("\\x")
        for byte in self {
            buffer.append(hex.utf8Start[Int(byte >> 4)])
            buffer.append(hex.utf8Start[Int(byte & 0x0f)])
        }
    }

    /// Decodes `bytea`: raw bytes in binary; in text, either output form (`hex`, the default, or
    /// `escape`).
    public init(from value: PostgresValue) throws {
        try value.expect(.bytea)
        if value.format == .binary {
            self = Data(value.bytes)
            return
        }
        let text = value.bytes
        if text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x") {
            guard text.count % 2 == 0 else { throw PostgresDecodingFailure("the bytea hex value is malformed") }
            var bytes = [UInt8]()
            bytes.reserveCapacity((text.count - 2) / 2)
            var index = 2
            while index < text.count {
                guard let high = hexValue(text[index]), let low = hexValue(text[index + 1]) else {
                    throw PostgresDecodingFailure("the bytea hex value is malformed")
                }
                bytes.append(high << 4 | low)
                index += 2
            }
            self = Data(bytes)
            return
        }
        // `escape` format: backslash + three octal digits, `\\` for a backslash.
        var bytes = [UInt8]()
        bytes.reserveCapacity(text.count)
        var index = 0
        while index < text.count {
            let byte = text[index]
            guard byte == UInt8(ascii: "\\") else {
                bytes.append(byte)
                index += 1
                continue
            }
            if index + 1 < text.count, text[index + 1] == UInt8(ascii: "\\") {
                bytes.append(byte)
                index += 2
                continue
            }
            guard index + 3 < text.count else { throw PostgresDecodingFailure("the bytea value is malformed") }
            var octal: UInt16 = 0
            for offset in 1...3 {
                let digit = text[index + offset] &- UInt8(ascii: "0")
                guard digit < 8 else { throw PostgresDecodingFailure("the bytea value is malformed") }
                octal = octal * 8 + UInt16(digit)
            }
            guard octal <= 255 else { throw PostgresDecodingFailure("the bytea value is malformed") }
            bytes.append(UInt8(octal))
            index += 4
        }
        self = Data(bytes)
    }
}
