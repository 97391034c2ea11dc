/// Arrays travel in PostgreSQL's text array form, `{"a","b"}`; one dimension.
extension Array: PostgresEncodable where Element: PostgresArrayElement {
    public static var postgresType: PostgresType { Element.postgresArrayType }

    public func encode(into buffer: inout PostgresEncodingBuffer) throws {
        buffer.append(UInt8(ascii: "{"))
        var element = PostgresEncodingBuffer(bytes: [])
        for (index, value) in enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: ",")) }
            element.bytes.removeAll(keepingCapacity: true)
            try value.encodeArrayElement(into: &element)
            // Quote every element: it keeps `NULL`, empty strings, spaces and commas literal.
            buffer.append(UInt8(ascii: "\""))
            for byte in element.bytes {
                if byte == 0 {
                    throw PostgresError(code: .encoding, message: "an array element contains a NUL byte")
                }
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { buffer.append(UInt8(ascii: "\\")) }
                buffer.append(byte)
            }
            buffer.append(UInt8(ascii: "\""))
        }
        buffer.append(UInt8(ascii: "}"))
    }
}

extension Array: PostgresDecodable where Element: PostgresArrayElement {
    public init(from value: PostgresValue) throws {
        let elementType: PostgresType
        if let known = value.type.arrayElementType {
            elementType = known
        } else if value.bytes.first == UInt8(ascii: "{") || value.bytes.first == UInt8(ascii: "[") {
            elementType = .unspecified  // an array of an enum or another type without a name here
        } else {
            throw PostgresDecodingFailure("the column type is \(value.type), not an array")
        }
        var result: [Element] = []
        try ArrayTextParser.forEachElement(in: value.bytes) { element in
            guard let element else {
                throw PostgresDecodingFailure("the array holds a NULL element")
            }
            try element.withUnsafeBytes { bytes in
                result.append(try Element(from: PostgresValue(bytes: bytes, type: elementType)))
            }
        }
        self = result
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public init(from value: PostgresValue) throws {
        self = .some(try Wrapped(from: value))
    }

    public static func decodeNull() -> Self { nil }
}

/// Splits PostgreSQL's text array output into elements.
enum ArrayTextParser {
    static func forEachElement(
        in text: UnsafeRawBufferPointer,
        _ body: ([UInt8]?) throws -> Void
    ) throws {
        var index = 0
        // Arrays whose lower bound is not 1 start with their dimensions: `[0:2]={…}`.
        if text.first == UInt8(ascii: "[") {
            guard let equals = text.firstIndex(of: UInt8(ascii: "=")) else {
                throw PostgresDecodingFailure("the array value is malformed")
            }
            index = equals + 1
        }
        guard index < text.count, text[index] == UInt8(ascii: "{"), text.last == UInt8(ascii: "}") else {
            throw PostgresDecodingFailure("the array value is malformed")
        }
        index += 1
        let end = text.count - 1
        if index == end { return }
        var element: [UInt8] = []
        while index <= end {
            element.removeAll(keepingCapacity: true)
            if text[index] == UInt8(ascii: "{") {
                throw PostgresDecodingFailure("multi-dimensional arrays are not supported")
            }
            if text[index] == UInt8(ascii: "\"") {
                index += 1
                while index < end, text[index] != UInt8(ascii: "\"") {
                    if text[index] == UInt8(ascii: "\\") { index += 1 }
                    guard index < end else { break }
                    element.append(text[index])
                    index += 1
                }
                guard index < end, text[index] == UInt8(ascii: "\"") else {
                    throw PostgresDecodingFailure("the array value is malformed")
                }
                index += 1
                try body(element)
            } else {
                while index < end, text[index] != UInt8(ascii: ",") {
                    element.append(text[index])
                    index += 1
                }
                let isNull = element.count == 4 && String(decoding: element, as: UTF8.self).uppercased() == "NULL"
                try body(isNull ? nil : element)
            }
            if index == end { return }
            guard text[index] == UInt8(ascii: ",") else {
                throw PostgresDecodingFailure("the array value is malformed")
            }
            index += 1
        }
        throw PostgresDecodingFailure("the array value is malformed")
    }
}
