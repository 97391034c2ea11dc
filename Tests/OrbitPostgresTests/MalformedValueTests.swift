import Foundation
import OrbitPostgres
import Testing

@Suite("Malformed values are decoding failures, never crashes")
struct MalformedValueTests {
    /// Bytes that claim to be a value of `type` but are not, and the decoder that must refuse them.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var type: PostgresType
        var format = PostgresFormat.binary
        var bytes: [UInt8]
        var decode: @Sendable (PostgresValue) throws -> Void
        var testDescription: String { name }
    }

    private static func int32(_ value: Int32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    /// A binary array: header, then each element as a length (-1 for NULL) and its bytes.
    private static func array(dimensions: [(count: Int32, lowerBound: Int32)], elements: [[UInt8]?], lengths: [Int32]? = nil) -> [UInt8] {
        var bytes = int32(Int32(dimensions.count)) + int32(0) + int32(20)
        for dimension in dimensions { bytes += int32(dimension.count) + int32(dimension.lowerBound) }
        for (index, element) in elements.enumerated() {
            bytes += int32(lengths?[index] ?? element.map { Int32($0.count) } ?? -1) + (element ?? [])
        }
        return bytes
    }

    private static let one: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 1]

    static let cases: [Case] = [
        Case(name: "an int8 of 4 bytes", type: .int8, bytes: [0, 0, 0, 1]) { _ = try Int(from: $0) },
        Case(name: "an int4 of 3 bytes", type: .int4, bytes: [0, 0, 1]) { _ = try Int32(from: $0) },
        Case(name: "an empty int2", type: .int2, bytes: []) { _ = try Int16(from: $0) },
        Case(name: "an int8 too large for Int16", type: .int8, bytes: [0, 0, 0, 0, 0, 1, 0, 0]) { _ = try Int16(from: $0) },
        Case(name: "a text integer with a letter", type: .int8, format: .text, bytes: Array("12a".utf8)) { _ = try Int(from: $0) },
        Case(name: "a float8 of 4 bytes", type: .float8, bytes: [0, 0, 0, 0]) { _ = try Double(from: $0) },
        Case(name: "a boolean of 2", type: .bool, bytes: [2]) { _ = try Bool(from: $0) },
        Case(name: "a uuid of 15 bytes", type: .uuid, bytes: Array(repeating: 1, count: 15)) { _ = try UUID(from: $0) },
        Case(name: "a timestamptz of 7 bytes", type: .timestamptz, bytes: [0, 0, 0, 0, 0, 0, 1]) { _ = try Date(from: $0) },
        Case(name: "a date of 8 bytes", type: .date, bytes: one) { _ = try Date(from: $0) },
        Case(name: "a text timestamp beyond Int64 microseconds", type: .timestamptz, format: .text, bytes: Array("9999999-12-31 00:00:00+00".utf8)) {
            _ = try Date(from: $0)
        },
        Case(name: "a timestamptz in a DateStyle other than ISO", type: .timestamptz, format: .text, bytes: Array("23/11/2026 18:00:00 UTC".utf8)) {
            _ = try Date(from: $0)
        },
        Case(name: "a jsonb of version 2", type: .jsonb, bytes: [2, 0x7B, 0x7D]) { _ = try PostgresJSON(from: $0) },
        Case(name: "an empty jsonb", type: .jsonb, bytes: []) { _ = try String(from: $0) },
        Case(name: "a numeric with fewer digits than it counts", type: .numeric, bytes: [0, 2, 0, 0, 0, 0, 0, 0, 0, 1]) { _ = try Double(from: $0) },
        Case(name: "a numeric digit of 10000", type: .numeric, bytes: [0, 1, 0, 0, 0, 0, 0, 0, 0x27, 0x10]) { _ = try String(from: $0) },
        Case(name: "a numeric with an unknown sign", type: .numeric, bytes: [0, 0, 0, 0, 0x12, 0x34, 0, 0]) { _ = try String(from: $0) },
        Case(name: "a numeric with a negative digit count", type: .numeric, bytes: [0xFF, 0xFF, 0, 0, 0, 0, 0, 0]) { _ = try Double(from: $0) },
        Case(name: "a numeric with a byte left over", type: .numeric, bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0]) { _ = try String(from: $0) },
        Case(name: "an array of 7 dimensions", type: .int8Array, bytes: array(dimensions: Array(repeating: (1, 1), count: 7), elements: [one])) {
            _ = try [Int](from: $0)
        },
        Case(name: "an array header cut short", type: .int8Array, bytes: [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 1]) {
            _ = try [Int](from: $0)
        },
        Case(name: "an array claiming a million elements", type: .int8Array, bytes: array(dimensions: [(1_000_000, 1)], elements: [one])) {
            _ = try [Int](from: $0)
        },
        Case(
            name: "an array whose dimensions multiply past Int", type: .int8Array,
            bytes: array(dimensions: [(.max, 1), (.max, 1), (.max, 1)], elements: [one])
        ) { _ = try String(from: $0) },
        Case(name: "an array with a negative dimension", type: .int8Array, bytes: array(dimensions: [(-1, 1)], elements: [])) {
            _ = try [Int](from: $0)
        },
        Case(name: "an array element longer than the value", type: .int8Array, bytes: array(dimensions: [(1, 1)], elements: [one], lengths: [100])) {
            _ = try [Int](from: $0)
        },
        Case(name: "an array element of length -2", type: .int8Array, bytes: array(dimensions: [(1, 1)], elements: [one], lengths: [-2])) {
            _ = try String(from: $0)
        },
        Case(name: "an array with bytes after its last element", type: .int8Array, bytes: array(dimensions: [(1, 1)], elements: [one]) + [0]) {
            _ = try [Int](from: $0)
        },
        Case(name: "an int8 array element of 4 bytes", type: .int8Array, bytes: array(dimensions: [(1, 1)], elements: [[0, 0, 0, 1]])) {
            _ = try [Int](from: $0)
        },
        Case(name: "a text column read as an array", type: .text, bytes: Array("not an array".utf8)) { _ = try [String](from: $0) },
        Case(name: "an inet read as String", type: PostgresType(oid: 869), bytes: [2, 32, 0, 4, 10, 0, 0, 1]) { _ = try String(from: $0) },
        Case(name: "a \"char\" of 2 bytes", type: .char, bytes: [65, 66]) { _ = try String(from: $0) },
        Case(name: "an interval of 12 bytes", type: .interval, bytes: Array(repeating: 0, count: 12)) { _ = try String(from: $0) },
        Case(name: "a database type holding a NUL byte that is no array", type: PostgresType(oid: 20_000), bytes: [0, 1, 2]) {
            _ = try String(from: $0)
        },
    ]

    @Test("a malformed value throws PostgresDecodingFailure", arguments: cases)
    func malformed(_ example: Case) {
        example.bytes.withUnsafeBytes { bytes in
            let value = PostgresValue(bytes: bytes, type: example.type, format: example.format)
            #expect(throws: PostgresDecodingFailure.self) { try example.decode(value) }
        }
    }
}
