import Foundation
import OrbitPostgres

/// Keyset pages: a list query selects `limit + 1` rows in its order; the extra row only says
/// there is more, and the cursor is the key of the last row shown.
///
/// A list declares its order once, as a `Keyset`, and takes from it everything a page needs:
/// the cursor's decoding, the key's columns, the predicate past a cursor, the `ORDER BY` and the
/// page itself. Search and chat history order by what no column holds (a rank; a position) and
/// build their keys themselves, through `page(_:limit:list:item:key:)`.
enum Paging {
    /// A list's order: the columns it sorts by, all in one direction, and the list's name that
    /// its cursors carry.
    struct Keyset: Sendable {
        /// One sort column (trusted SQL: the list's own column or expression), and how its
        /// cursor keeps it.
        enum Part: Sendable {
            /// A `timestamptz`, kept in microseconds since 1970 (PostgreSQL's own precision).
            case time(String)
            /// A `date`, kept as days since 2000-01-01.
            case day(String)
            /// A boolean, kept as `1` or `0`.
            case flag(String)
            /// An integer column (a cost, a count), kept as its decimal digits.
            case integer(String)
            /// A label of an enum type, kept as its text and cast back to `type`.
            case label(String, type: String)
            /// A `uuid`, the last part of every key.
            case id(String)

            var expression: String {
                switch self {
                case .time(let column), .day(let column), .flag(let column), .integer(let column), .label(let column, _), .id(let column): column
                }
            }
        }

        let list: String
        let parts: [Part]
        let newestFirst: Bool

        /// - Parameter newestFirst: descending on every part (most lists); else ascending.
        init(_ list: String, _ parts: [Part], newestFirst: Bool = true) {
            self.list = list
            self.parts = parts
            self.newestFirst = newestFirst
        }

        /// The order most lists use: a timestamp, then the id.
        static func timeAndID(_ list: String, time: String = "created_at", id: String = "id", newestFirst: Bool = true) -> Keyset {
            Keyset(list, [.time(time), .id(id)], newestFirst: newestFirst)
        }

        /// A client's cursor for this list, or nil without one; anything else is refused.
        func decode(_ cursor: String?) throws -> PageCursor? {
            try PageCursor.decode(cursor, list: list, parts: parts.count)
        }

        /// The key's columns for the select list, each `AS cursor_<n>` in the form its cursor
        /// keeps.
        var columns: String {
            parts.enumerated().map { index, part in
                let value =
                    switch part {
                    case .time(let column): "(extract(epoch FROM \(column)) * 1000000)::bigint"
                    case .day(let column): "(\(column) - date '2000-01-01')"
                    case .flag(let column): "(\(column))"
                    case .integer(let column): "(\(column))::bigint"
                    case .label(let column, _): "(\(column))::text"
                    case .id(let column): column
                    }
                return "\(value) AS cursor_\(index)"
            }.joined(separator: ", ")
        }

        /// `ORDER BY`'s list: every part, in the keyset's direction.
        var order: String {
            parts.map { "\($0.expression)\(newestFirst ? " DESC" : "")" }.joined(separator: ", ")
        }

        /// The predicate past `cursor`: true for every row without one, else for the rows after
        /// the cursor's in the list's order. The cursor's values are bind parameters.
        func after(_ cursor: PageCursor?) throws -> PostgresQuery {
            guard let cursor else { return "true" }
            var values: [PostgresQuery] = []
            for (index, part) in parts.enumerated() {
                switch part {
                case .time: values.append("timestamptz 'epoch' + \(try cursor.microseconds(index)) * interval '1 microsecond'")
                case .day: values.append("date '2000-01-01' + \(try cursor.int32(index))::int")
                case .flag:
                    guard ["0", "1"].contains(cursor.key[index]) else {
                        throw ServiceError.invalidInput(field: "cursor", reason: "is not a cursor from this list")
                    }
                    values.append("\(cursor.key[index] == "1")")
                case .integer: values.append("\(try cursor.integer(index))::bigint")
                case .label(_, let type): values.append("\(cursor.key[index])::\(unescaped: type)")
                case .id: values.append("\(try cursor.uuid(index))")
                }
            }
            guard let first = values.first else { return "true" }
            let tuple = values.dropFirst().reduce(first) { tuple, value in "\(tuple), \(value)" }
            let columns = parts.map(\.expression).joined(separator: ", ")
            return "(\(unescaped: columns)) \(unescaped: newestFirst ? "<" : ">") (\(tuple))"
        }

        /// The page of `rows`, selected with `columns` and fetched with `LIMIT limit + 1`.
        func page<Item: Codable & Sendable>(_ rows: PostgresRows, limit: Int, item: (PostgresRow) throws -> Item) throws -> Page<Item> {
            try Paging.page(rows, limit: limit, list: list, item: item, key: key(of:))
        }

        /// A row's key, as its cursor keeps it.
        func key(of row: PostgresRow) throws -> [String] {
            try parts.indices.map { index in
                let column = "cursor_\(index)"
                return switch parts[index] {
                case .time: String(try row.decode(column, as: Int64.self))
                case .day: String(try row.decode(column, as: Int32.self))
                case .flag: try row.decode(column, as: Bool.self) ? "1" : "0"
                case .integer: String(try row.decode(column, as: Int64.self))
                case .label: try row.decode(column, as: String.self)
                case .id: try row.decode(column, as: UUID.self).uuidString
                }
            }
        }
    }

    /// The page of `rows` (fetched with `LIMIT limit + 1`).
    /// - Parameters:
    ///   - item: decodes a row.
    ///   - key: the row's sort key, as the list's cursor keeps it.
    static func page<Item: Codable & Sendable>(
        _ rows: PostgresRows, limit: Int, list: String, item: (PostgresRow) throws -> Item, key: (PostgresRow) throws -> [String]
    ) throws -> Page<Item> {
        var items: [Item] = []
        items.reserveCapacity(min(rows.count, limit))
        for row in rows.prefix(limit) { items.append(try item(row)) }
        guard rows.count > limit, let last = rows.prefix(limit).last else { return Page(items: items, nextCursor: nil) }
        return Page(items: items, nextCursor: PageCursor(list: list, key: try key(last)).encoded)
    }
}
