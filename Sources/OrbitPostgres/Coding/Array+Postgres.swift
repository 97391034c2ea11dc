/// Array parameters travel in PostgreSQL's text array form, `{"a","b"}`, so that a `String`
/// element's type can still be left to the server; one dimension.
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

/// Reads a one-dimensional array (any lower bound) in binary or text; a NULL element is an error.
extension Array: PostgresDecodable where Element: PostgresArrayElement {
    public init(from value: PostgresValue) throws {
        var result: [Element] = []
        if value.format == .binary {
            let array = try BinaryArray(value)
            guard array.dimensions.count <= 1 else {
                throw PostgresDecodingFailure("multi-dimensional arrays are not supported")
            }
            result.reserveCapacity(array.dimensions.first?.count ?? 0)
            try array.forEachElement { element in
                guard let element else {
                    throw PostgresDecodingFailure("the array holds a NULL element")
                }
                result.append(try Element(from: PostgresValue(bytes: element, type: array.elementType, format: .binary)))
            }
            self = result
            return
        }
        let elementType: PostgresType
        if let known = value.type.arrayElementType {
            elementType = known
        } else if value.bytes.first == UInt8(ascii: "{") || value.bytes.first == UInt8(ascii: "[") {
            elementType = .unspecified  // an array of an enum or another type without a name here
        } else {
            throw PostgresDecodingFailure("the column type is \(value.type), not an array")
        }
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

/// An array in PostgreSQL's binary form (`array_send`): int32 dimension count, int32 has-NULLs
/// flag, element type OID, then per dimension int32 size and int32 lower bound, then every
/// element in row-major order as an int32 length (-1 for NULL) and its bytes.
struct BinaryArray {
    var elementType: PostgresType
    var dimensions: [(count: Int, lowerBound: Int32)]
    /// The elements' part of the value.
    private var elements: BinaryReader
    private var elementCount: Int

    /// Reads the header; the elements are read by `forEachElement`.
    /// - Throws: `PostgresDecodingFailure` if `value` is not a binary array.
    init(_ value: PostgresValue) throws {
        var reader = BinaryReader(value.bytes)
        let malformed = PostgresDecodingFailure("the value of type \(value.type) is not an array")
        guard let dimensionCount = try? reader.read(Int32.self), let flags = try? reader.read(Int32.self),
            let elementOID = try? reader.read(UInt32.self), (0...6).contains(dimensionCount), flags == 0 || flags == 1
        else { throw malformed }
        elementType = PostgresType(oid: elementOID)
        dimensions = []
        elementCount = dimensionCount == 0 ? 0 : 1
        for _ in 0..<dimensionCount {
            let count = try reader.read(Int32.self)
            let lowerBound = try reader.read(Int32.self)
            guard count >= 0 else { throw malformed }
            dimensions.append((Int(count), lowerBound))
            // Every element takes at least its 4-byte length: a count beyond that is a lie.
            let (product, overflow) = elementCount.multipliedReportingOverflow(by: Int(count))
            guard !overflow, product <= reader.remaining / 4 else { throw malformed }
            elementCount = product
        }
        elements = reader
    }

    /// Calls `body` with each element's bytes, nil for NULL, in row-major order.
    func forEachElement(_ body: (UnsafeRawBufferPointer?) throws -> Void) throws {
        var reader = elements
        for _ in 0..<elementCount {
            let length = try reader.read(Int32.self)
            guard length >= -1 else { throw PostgresDecodingFailure("the binary array is malformed") }
            try body(length == -1 ? nil : try reader.read(count: Int(length)))
        }
        try reader.expectEnd()
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
