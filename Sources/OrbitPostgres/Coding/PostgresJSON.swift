import Foundation

/// A JSON document, sent as `jsonb` and read from `json` or `jsonb` columns.
///
/// The text is validated by the server, not by this client.
public struct PostgresJSON: Sendable, Hashable, PostgresArrayElement {
    /// The JSON text.
    public var text: String

    /// Wraps JSON text as it is.
    public init(text: String) {
        self.text = text
    }

    /// Encodes `value` with `JSONEncoder` (sorted keys, so equal values give equal text).
    public init<Value: Encodable>(encoding value: Value) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        self.text = String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Decodes the document with `JSONDecoder`.
    public func decode<Value: Decodable>(_ type: Value.Type = Value.self) throws -> Value {
        try JSONDecoder().decode(Value.self, from: Data(text.utf8))
    }

    public static var postgresType: PostgresType { .jsonb }
    public static var postgresArrayType: PostgresType { .jsonbArray }

    public func encode(into buffer: inout PostgresEncodingBuffer) throws {
        try text.encode(into: &buffer)
    }

    /// Reads `json` or `jsonb` (in binary, `jsonb` is a version byte, 1, before the text).
    public init(from value: PostgresValue) throws {
        try value.expect(.jsonb, .json)
        self.text = try value.textForm()
    }
}
