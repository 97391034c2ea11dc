package import Foundation
package import Hummingbird
import NIOCore
import NIOFoundationCompat
import OrbitCore

/// The API's JSON: snake_case keys (the models name them), ids as strings, amounts as integer
/// minor units, timestamps in RFC 3339 UTC with milliseconds (`2026-03-10T22:00:00.000Z`).
package enum APIJSON {
    /// The largest JSON request body accepted.
    package static let maximumBodySize = 1 << 20

    package struct Encoder: ResponseEncoder {
        package init() {}

        package func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response {
            try APIJSON.response(value, status: .ok)
        }
    }

    package struct Decoder: RequestDecoder {
        package init() {}

        package func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
            let buffer = try await request.body.collect(upTo: context.maxUploadSize)
            return try APIJSON.decode(type, from: Data(buffer: buffer))
        }
    }

    static let timestampStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)

    /// `2026-03-10T22:00:00.000Z`: RFC 3339 in UTC with milliseconds (truncated, as
    /// Foundation's style does), in the proleptic Gregorian calendar. Written by hand: Foundation's
    /// format styles cost microseconds per date, and a feed page has dozens.
    package static func formatTimestamp(_ date: Date) -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(24)
        appendTimestamp(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `formatTimestamp` written onto `bytes`.
    static func appendTimestamp(_ date: Date, to bytes: inout [UInt8]) {
        // PostgreSQL keeps microseconds: round to them first, so that binary floating point
        // (…123 stored as …122.9999) never loses a millisecond.
        let microseconds = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        let (wholeMilliseconds, belowMillisecond) = microseconds.quotientAndRemainder(dividingBy: 1000)
        let milliseconds = belowMillisecond < 0 ? wholeMilliseconds - 1 : wholeMilliseconds
        let (days, dayMilliseconds) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        let (day, msOfDay) = dayMilliseconds < 0 ? (days - 1, dayMilliseconds + 86_400_000) : (days, dayMilliseconds)
        let civil = CivilDate(dayNumber: Int(day))
        let (year, month, dayOfMonth) = (Int64(civil.year), Int64(civil.month), Int64(civil.day))
        guard (0...9999).contains(year) else {
            bytes.append(contentsOf: date.formatted(timestampStyle).utf8)
            return
        }
        // Formatted on the stack and appended at once (an append per byte checks the array's
        // uniqueness each time).
        var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &text) { output in
            var position = 0
            func digits(_ value: Int64, _ width: Int) {
                var rest = value
                for offset in stride(from: width - 1, through: 0, by: -1) {
                    output[position + offset] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                position += width
            }
            func literal(_ character: Unicode.Scalar) {
                output[position] = UInt8(ascii: character)
                position += 1
            }
            digits(year, 4)
            literal("-")
            digits(month, 2)
            literal("-")
            digits(dayOfMonth, 2)
            literal("T")
            digits(msOfDay / 3_600_000, 2)
            literal(":")
            digits(msOfDay / 60_000 % 60, 2)
            literal(":")
            digits(msOfDay / 1000 % 60, 2)
            literal(".")
            digits(msOfDay % 1000, 3)
            literal("Z")
            bytes.append(contentsOf: output.prefix(position))
        }
    }

    /// Parses an RFC 3339 `date-time` (section 5.6), what openapi.yaml's `format: date-time`
    /// promises: `YYYY-MM-DDTHH:MM:SS`, optional fractional seconds (any number of digits,
    /// kept to the microsecond PostgreSQL stores), `Z` or any offset from -23:59 to +23:59;
    /// `T` and `Z` in either case; a leap second (`:60`) as the next second.
    package static func parseTimestamp(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ width: Int) -> Int? {
            guard index + width <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + width] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += width
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2), expect("Tt"),
            let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2)
        else { return nil }
        let date = CivilDate(year: year, month: month, day: day)
        guard date.isValid, hour <= 23, minute <= 59, second <= 60 else { return nil }
        var microseconds = 0
        if expect(".") {
            let start = index
            var scale = 100_000
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                microseconds += Int(bytes[index] - UInt8(ascii: "0")) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offsetSeconds = 0
        if !expect("Zz") {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") else { return nil }
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let offsetHours = number(2), expect(":"), let offsetMinutes = number(2), offsetHours <= 23, offsetMinutes <= 59 else {
                return nil
            }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        }
        guard index == bytes.count else { return nil }
        let seconds = Int64(date.dayNumber) * 86_400 + Int64(hour * 3600 + minute * 60 + second - offsetSeconds)
        return Date(timeIntervalSince1970: Double(seconds) + Double(microseconds) / 1_000_000)
    }

    /// The API's encoding of `value` (what a response body holds).
    package static func encode(_ value: some Encodable) throws -> Data {
        Data(try ResponseJSONEncoder.encode(value))
    }

    /// Decodes a request body; a malformed body is a validation problem naming the field.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let decoder = JSONDecoder()
        // Request types name their properties in camelCase (`displayName` for `display_name`).
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parseTimestamp(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "must be an RFC 3339 timestamp")
            }
            return date
        }
        do {
            return try decoder.decode(type, from: data)
        } catch let error as DecodingError {
            throw APIProblem(decoding: error)
        }
    }

    static func response(_ value: some Encodable, status: HTTPResponse.Status) throws -> Response {
        let bytes = try ResponseJSONEncoder.encode(value)
        return Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes))
        )
    }
}

/// A JSON response with a status other than 200 (201 Created and the like).
struct Created<Value: Encodable & Sendable>: ResponseGenerator {
    var value: Value
    var status: HTTPResponse.Status = .created

    init(_ value: Value, status: HTTPResponse.Status = .created) {
        self.value = value
        self.status = status
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        try APIJSON.response(value, status: status)
    }
}

/// Makes any encodable model a route result (the models live in OrbitCore, which knows nothing
/// of HTTP).
struct JSON<Value: Encodable & Sendable>: ResponseGenerator {
    var value: Value
    init(_ value: Value) { self.value = value }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        try APIJSON.response(value, status: .ok)
    }
}
