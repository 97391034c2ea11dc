import Foundation
public import Hummingbird
import NIOCore
import NIOFoundationCompat

/// The API's JSON: snake_case keys (the models name them), ids as strings, amounts as integer
/// minor units, timestamps in RFC 3339 UTC with milliseconds (`2026-03-10T22:00:00.000Z`).
public enum APIJSON {
    /// The largest JSON request body accepted.
    public static let maximumBodySize = 1 << 20

    public struct Encoder: ResponseEncoder {
        public init() {}

        public func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response {
            try APIJSON.response(value, status: .ok)
        }
    }

    public struct Decoder: RequestDecoder {
        public init() {}

        public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
            let buffer = try await request.body.collect(upTo: context.maxUploadSize)
            return try APIJSON.decode(type, from: Data(buffer: buffer))
        }
    }

    static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(timestampStyle))
        }
        return encoder
    }

    static let timestampStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)

    /// Parses RFC 3339 timestamps with or without fractional seconds, in any offset.
    static func parseTimestamp(_ text: String) -> Date? {
        if let date = try? timestampStyle.parse(text) { return date }
        return try? Date.ISO8601FormatStyle(timeZone: .gmt).parse(text)
    }

    static func encode(_ value: some Encodable) throws -> Data {
        try makeEncoder().encode(value)
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
        let data = try encode(value)
        return Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(data: data))
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
