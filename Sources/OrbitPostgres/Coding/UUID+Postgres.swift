public import Foundation

/// `UUID` travels as its 16 bytes in binary, and as 8-4-4-4-12 hex in array parameters.
extension UUID: PostgresArrayElement {
    public static var postgresType: PostgresType { .uuid }
    public static var postgresFormat: PostgresFormat { .binary }
    public static var postgresArrayType: PostgresType { .uuidArray }

    public func encode(into buffer: inout PostgresEncodingBuffer) {
        withUnsafeBytes(of: uuid) { buffer.append(contentsOf: $0) }
    }

    public func encodeArrayElement(into buffer: inout PostgresEncodingBuffer) {
        let hex: StaticString = "0123456789abcdef"
        withUnsafeBytes(of: uuid) { raw in
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 { buffer.append(UInt8(ascii: "-")) }
                let byte = raw[index]
                buffer.append(hex.utf8Start[Int(byte >> 4)])
                buffer.append(hex.utf8Start[Int(byte & 0x0f)])
            }
        }
    }

    public init(from value: PostgresValue) throws {
        try value.expect(.uuid)
        if value.format == .binary {
            guard value.bytes.count == 16 else { throw PostgresDecodingFailure("the binary uuid has \(value.bytes.count) bytes, not 16") }
            var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &bytes) { $0.copyMemory(from: value.bytes) }
            self.init(uuid: bytes)
            return
        }
        guard let parsed = UUID(postgresText: value.bytes) else {
            throw PostgresDecodingFailure("the value is not a UUID")
        }
        self = parsed
    }

    /// Parses the 8-4-4-4-12 hex form PostgreSQL prints (either case).
    init?(postgresText text: UnsafeRawBufferPointer) {
        guard text.count == 36 else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let ok = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            var position = 0
            for index in 0..<16 {
                if position == 8 || position == 13 || position == 18 || position == 23 {
                    guard text[position] == UInt8(ascii: "-") else { return false }
                    position += 1
                }
                guard let high = hexValue(text[position]), let low = hexValue(text[position + 1]) else {
                    return false
                }
                out[index] = high << 4 | low
                position += 2
            }
            return true
        }
        guard ok else { return nil }
        self.init(uuid: bytes)
    }
}

@inline(__always)
func hexValue(_ character: UInt8) -> UInt8? {
    switch character {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
    default: nil
    }
}
