package import OrbitPostgres

/// A Swift enum whose raw values are the labels of a PostgreSQL enum type (`post_type`,
/// `rsvp_status`, …) or of a text column with a fixed set of values: it travels as its label,
/// in SQL parameters, columns and JSON alike. A label this code does not know is a decoding
/// error, never a silent default.
package protocol DatabaseEnum: RawRepresentable<String>, CaseIterable, Hashable, Sendable, Codable, PostgresEncodable,
    PostgresDecodable, CustomStringConvertible
{}

extension DatabaseEnum {
    /// The server infers the enum type from the parameter's place (or its `::type` cast).
    package static var postgresType: PostgresType { .unspecified }

    package func encode(into buffer: inout PostgresEncodingBuffer) throws {
        try rawValue.encode(into: &buffer)
    }

    package init(from value: PostgresValue) throws {
        let label = try String(from: value)
        guard let known = Self(rawValue: label) else {
            throw PostgresDecodingFailure("\(label) is not one of \(Self.labels)")
        }
        self = known
    }

    package var description: String { rawValue }

    /// The labels in declaration order, comma-separated, for error messages.
    package static var labels: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// The case with label `text`, or a refusal naming `field` and the allowed labels.
    /// - Throws: `ServiceError.invalidInput(field:)`.
    package static func parse(_ text: String, field: String) throws -> Self {
        guard let value = Self(rawValue: text) else {
            throw ServiceError.invalidInput(field: field, reason: "must be one of \(labels)")
        }
        return value
    }
}
