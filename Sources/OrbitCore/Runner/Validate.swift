import Foundation

/// Validation of text fields against the spec's column limits.
enum Validate {
    /// Trims surrounding whitespace; refuses empty text, text over `limit` characters, and
    /// control characters (newlines included unless `multiline`).
    static func text(_ value: String, field: String, limit: Int, multiline: Bool = false) throws -> String {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw ServiceError.invalidInput(field: field, reason: "must not be empty") }
        guard trimmed.count <= limit else {
            throw ServiceError.invalidInput(field: field, reason: "must be at most \(limit) characters")
        }
        let allowed: (Unicode.Scalar) -> Bool = { scalar in
            if multiline && (scalar == "\n" || scalar == "\t") { return true }
            return scalar.properties.generalCategory != .control
        }
        guard trimmed.unicodeScalars.allSatisfy(allowed) else {
            throw ServiceError.invalidInput(field: field, reason: "must not contain control characters")
        }
        return trimmed
    }

    static func email(_ value: String) throws -> String {
        let email = try text(value, field: "email", limit: 255)
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
            !email.contains(where: \.isWhitespace)
        else {
            throw ServiceError.invalidInput(field: "email", reason: "is not an email address")
        }
        return email
    }

    static func url(_ value: String?, field: String) throws -> String? {
        guard let value else { return nil }
        let url = try text(value, field: field, limit: 500)
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "https" || scheme == "http",
            parsed.host != nil
        else {
            throw ServiceError.invalidInput(field: field, reason: "must be an http(s) URL")
        }
        return url
    }

    /// `limit` for a list, or an error naming the allowed range.
    static func limit(_ limit: Int, in range: ClosedRange<Int>) throws {
        guard range.contains(limit) else {
            throw ServiceError.invalidInput(field: "limit", reason: "must be between \(range.lowerBound) and \(range.upperBound)")
        }
    }
}
