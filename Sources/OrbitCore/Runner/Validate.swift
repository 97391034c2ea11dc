import Foundation

/// Validation of text fields against the spec's column limits.
enum Validate {
    /// Trims surrounding whitespace; refuses empty text, text over `limit` characters, and
    /// control characters anywhere in the value (newlines and tabs allowed when `multiline`).
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
        // The whole value, not only what trimming keeps: a control character at an edge (a
        // leading "\r") is as invalid as one inside, as openapi.yaml's patterns say.
        guard value.unicodeScalars.allSatisfy(allowed) else {
            throw ServiceError.invalidInput(field: field, reason: "must not contain control characters")
        }
        return trimmed
    }

    /// Text that may be empty (an event's description, an address): newlines and tabs allowed, no
    /// other control character (PostgreSQL's text cannot even hold a NUL), at most `limit`
    /// characters. Returned as given.
    static func optionalText(_ value: String, field: String, limit: Int) throws -> String {
        guard value.count <= limit else { throw ServiceError.invalidInput(field: field, reason: "must be at most \(limit) characters") }
        guard value.unicodeScalars.allSatisfy({ $0 == "\n" || $0 == "\t" || $0 == "\r" || $0.properties.generalCategory != .control }) else {
            throw ServiceError.invalidInput(field: field, reason: "must not contain control characters")
        }
        return value
    }

    /// ASCII character classes, for the patterns openapi.yaml states (emails, URLs, device
    /// tokens, bundle ids, locales): a byte at a time, never locale- or Unicode-dependent.
    static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
    static func isLetter(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte | 0x20) }
    static func isHexDigit(_ byte: UInt8) -> Bool { isDigit(byte) || (0x61...0x66).contains(byte | 0x20) }
    /// A letter, a digit or a hyphen: what a host name's label, or a bundle id's part, is made of.
    static func isLabelByte(_ byte: UInt8) -> Bool { isDigit(byte) || isLetter(byte) || byte == UInt8(ascii: "-") }

    static func email(_ value: String) throws -> String {
        // Not trimmed: the pattern has no room for whitespace, so neither has the server.
        let email = value
        guard !email.isEmpty else { throw ServiceError.invalidInput(field: "email", reason: "must not be empty") }
        guard email.utf8.count <= 255 else { throw ServiceError.invalidInput(field: "email", reason: "must be at most 255 characters") }
        // openapi.yaml's `Email` pattern, exactly: a local part of visible ASCII but `"` and `@`,
        // then domain labels of letters, digits and hyphens, at least two.
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        let label = { (text: Substring) in !text.isEmpty && text.utf8.allSatisfy(isLabelByte) }
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E && $0 != 0x22 && $0 != 0x40 }),
            parts[1].split(separator: ".", omittingEmptySubsequences: false).count >= 2,
            parts[1].split(separator: ".", omittingEmptySubsequences: false).allSatisfy(label)
        else {
            throw ServiceError.invalidInput(field: "email", reason: "is not an email address")
        }
        return email
    }

    /// An http(s) URL as openapi.yaml's `HttpURL` states it, exactly (not trimmed): at most 500
    /// characters, `http://` or `https://`, host labels of letters, digits and hyphens, an
    /// optional port of 1 to 5 digits, then an optional path of visible ASCII.
    static func url(_ value: String?, field: String) throws -> String? {
        guard let value else { return nil }
        guard value.utf8.count <= 500, isHTTPURL(value) else { throw ServiceError.invalidInput(field: field, reason: "must be an http(s) URL") }
        return value
    }

    private static func isHTTPURL(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        var index: Int
        if value.hasPrefix("https://") {
            index = 8
        } else if value.hasPrefix("http://") {
            index = 7
        } else {
            return false
        }
        while true {
            let start = index
            while index < bytes.count, isLabelByte(bytes[index]) { index += 1 }
            guard index > start else { return false }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "."), index + 1 < bytes.count, isLabelByte(bytes[index + 1]) else { break }
            index += 1
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
            let start = index + 1
            index = start
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            guard (1...5).contains(index - start) else { return false }
        }
        guard index < bytes.count else { return true }
        return bytes[index] == UInt8(ascii: "/") && bytes[(index + 1)...].allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// A time of day as openapi.yaml's `TimeOfDay` states it: `HH:MM`, 24-hour, exactly.
    static func timeOfDay(_ value: String?, field: String) throws -> String? {
        guard let value else { return nil }
        let bytes = Array(value.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"), [0, 1, 3, 4].allSatisfy({ isDigit(bytes[$0]) }),
            let hours = Int(value.prefix(2)), let minutes = Int(value.suffix(2)), hours < 24, minutes < 60
        else { throw ServiceError.invalidInput(field: field, reason: "must be a time of day, HH:MM (24-hour)") }
        return value
    }

    /// `limit` for a list, or an error naming the allowed range.
    static func limit(_ limit: Int, in range: ClosedRange<Int>) throws {
        guard range.contains(limit) else {
            throw ServiceError.invalidInput(field: "limit", reason: "must be between \(range.lowerBound) and \(range.upperBound)")
        }
    }
}
