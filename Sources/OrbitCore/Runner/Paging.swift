import Foundation
import OrbitPostgres

/// Keyset pages: a list query selects `limit + 1` rows in its order; the extra row only says
/// there is more, and the cursor is the key of the last row shown.
enum Paging {
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

    /// The key of a row of a list ordered by a timestamp and then id (newest first, most of them):
    /// the timestamp in microseconds, selected `AS cursor_us` with `micros(_:)`, and the id.
    static func timeAndID(_ row: PostgresRow) throws -> [String] {
        [String(try row.decode("cursor_us", as: Int64.self)), try row.decode("id", as: UUID.self).uuidString]
    }

    /// The keyset predicate of a list ordered by a timestamp and then an id, the cursor's key
    /// being `timeAndID`'s: true for every row without a cursor, else for the rows past the
    /// cursor's (newest first: older ones; else newer). `time` and `id` are trusted SQL (the
    /// list's own columns). One fragment for every such list (issue 39: it was written out in
    /// each).
    static func after(_ cursor: PageCursor?, time: String = "created_at", id: String = "id", newestFirst: Bool = true) throws
        -> PostgresQuery
    {
        """
        (\(try cursor?.integer(0))::bigint IS NULL
         OR (\(unescaped: time), \(unescaped: id)) \(unescaped: newestFirst ? "<" : ">")
            (timestamptz 'epoch' + \(try cursor?.microseconds(0)) * interval '1 microsecond', \(try cursor?.uuid(1))))
        """
    }

    /// The SQL for "microseconds since 1970 of `column`", the exact form a cursor keeps a
    /// timestamp in (PostgreSQL stores microseconds).
    static func micros(_ column: String) -> String {
        "(extract(epoch FROM \(column)) * 1000000)::bigint"
    }
}
