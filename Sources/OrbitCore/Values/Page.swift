package import Foundation

/// One page of a list and the cursor of the next (nil on the last page): `{"items": [...],
/// "next_cursor": "…" | null}`, as the feed has always answered.
package struct Page<Item: Codable & Sendable>: Codable, Sendable {
    package var items: [Item]
    package var nextCursor: String?

    package init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }

    enum CodingKeys: String, CodingKey { case items, nextCursor = "next_cursor" }
}

extension Page: Equatable where Item: Equatable {}

/// Where a page of a list ends: the sort key of its last row, opaque to clients (base64url of
/// a version, the list's name, the key's parts and a checksum) and checked when it comes back,
/// so a cursor of another list, or an edited one, is refused rather than misread. Lists page by
/// keyset (`WHERE (key) < (cursor)`), never OFFSET: a page costs the same at any depth, and rows
/// added meanwhile never shift later pages.
package struct PageCursor: Sendable, Equatable {
    /// The list the cursor belongs to (`expenses`, `members`, …).
    package var list: String
    /// The sort key of the last row, in the list's order; each part free of `|`.
    package var key: [String]

    package init(list: String, key: [String]) {
        self.list = list
        self.key = key
    }

    package var encoded: String {
        let body = (["v1", list] + key).joined(separator: "|")
        let text = body + "|" + String(FeedCursor.checksum(body), radix: 36)
        return Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// - Throws: `ServiceError.invalidInput(field: "cursor")` for anything this server did not
    ///   make for `list` with `parts` key parts.
    package init(decoding text: String, list: String, parts: Int) throws {
        let invalid = ServiceError.invalidInput(field: "cursor", reason: "is not a cursor from this list")
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard text.count <= 400, let data = Data(base64Encoded: base64), let decoded = String(data: data, encoding: .utf8) else {
            throw invalid
        }
        let fields = decoded.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == parts + 3, fields[0] == "v1", fields[1] == list,
            fields[fields.count - 1] == String(FeedCursor.checksum(fields.dropLast().joined(separator: "|")), radix: 36)
        else { throw invalid }
        self.init(list: list, key: Array(fields[2..<(fields.count - 1)]))
    }

    /// The cursor of `list` from an optional text, checked.
    package static func decode(_ text: String?, list: String, parts: Int) throws -> PageCursor? {
        try text.map { try PageCursor(decoding: $0, list: list, parts: parts) }
    }

    /// A key part as a number (microseconds, counts), or a refusal.
    package func integer(_ index: Int) throws -> Int64 {
        guard let value = Int64(key[index]) else { throw ServiceError.invalidInput(field: "cursor", reason: "is not a cursor from this list") }
        return value
    }

    /// A key part as a time in microseconds since 1970, or a refusal: a time outside the years
    /// 1900 to 9999 is no row's (the server never issues one), and past PostgreSQL's range it
    /// would come back as the database's "interval out of range" instead of naming the cursor.
    package func microseconds(_ index: Int) throws -> Int64 {
        let value = try integer(index)
        guard (-2_208_988_800_000_000...253_402_300_799_999_999).contains(value) else {
            throw ServiceError.invalidInput(field: "cursor", reason: "is not a cursor from this list")
        }
        return value
    }

    /// A key part as a 32-bit number (a day number), or a refusal: a part past its range is no
    /// cursor of ours (the checksum only guards against typos, not against someone writing one).
    package func int32(_ index: Int) throws -> Int32 {
        guard let value = Int32(exactly: try integer(index)) else {
            throw ServiceError.invalidInput(field: "cursor", reason: "is not a cursor from this list")
        }
        return value
    }

    /// A key part as a finite number (a rank), or a refusal.
    package func double(_ index: Int) throws -> Double {
        guard let value = Double(key[index]), value.isFinite else {
            throw ServiceError.invalidInput(field: "cursor", reason: "is not a cursor from this list")
        }
        return value
    }

    /// A key part as a UUID, or a refusal.
    package func uuid(_ index: Int) throws -> UUID {
        guard let value = UUID(uuidString: key[index]) else {
            throw ServiceError.invalidInput(field: "cursor", reason: "is not a cursor from this list")
        }
        return value
    }
}
