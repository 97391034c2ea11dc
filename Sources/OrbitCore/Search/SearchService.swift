package import Foundation
import OrbitPostgres

/// Search (issue 40; docs/search.md): a community's posts, comments, events, expenses and the
/// chat messages the reader may read, ranked, with a marked snippet, paged by cursor.
///
/// The query (`orbit.search`, sql/820_search.sql) runs as `orbit_app` under the reader's
/// identity: row-level security decides what is found, exactly as it decides what the reader may
/// open (a non-participant never finds a chat message). The vectors are NULL for what is never
/// found: deleted rows, the comments of a deleted post, encrypted content, transactions that are
/// not expenses.
package struct SearchService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// The longest query text, in characters.
    package static let maxQueryLength = 200

    /// Searches `community` for `text`, in web search syntax (`websearch_to_tsquery`): words
    /// (all of them must match), `"a phrase"`, `or`, `-word` (must not match). Accents and case
    /// do not matter; words are stemmed by the community's `language` setting.
    /// - Throws: `invalidInput(field: "q")` for an empty or too long text, or one with a control
    ///   character; `notFound` for a community the reader is not a member of.
    package func search(
        _ community: CommunityID, for text: String, limit: Int = 20, cursor: String? = nil, as actor: UserID
    ) async throws -> Page<SearchHit> {
        // One line, as openapi.yaml's pattern says: no control character (PostgreSQL's text cannot
        // even hold a NUL), something besides whitespace, trimmed.
        let text = try Validate.text(text, field: "q", limit: Self.maxQueryLength)
        try Validate.limit(limit, in: 1...50)
        // A cursor belongs to its query: the next page of another query is refused, not misread.
        let queryKey = String(FeedCursor.checksum(text), radix: 36)
        // The key: rank, id and kind (ids are unique in a table, not across tables), and the query.
        let after = try PageCursor.decode(cursor, list: "search", parts: 4)
        if let after, after.key[3] != queryKey || SearchHit.Kind(rawValue: after.key[2]) == nil {
            throw ServiceError.invalidInput(field: "cursor", reason: "is not a cursor from this list")
        }
        let afterRank = try after?.double(0)
        let afterID = try after?.uuid(1)
        let afterKind = after?.key[2]
        // One function (sql/820_search.sql): it plans the query for these very values.
        let query: PostgresQuery = """
            SELECT kind, id, link_id, created_at, rank, snippet
            FROM orbit.search(\(community)::uuid, \(text)::text, \(afterRank)::float8, \(afterID)::uuid, \(afterKind)::text, \(limit + 1)::integer)
            """
        return try await runner.asUserReading(actor) { connection in
            let rows = try await runner.queryAsMember(actor, of: community, on: connection, query)
            return try Paging.page(
                rows, limit: limit, list: "search",
                item: { row in
                    let (snippet, highlights) = SearchHit.unmark(try row.decode("snippet", as: String.self))
                    guard let kind = SearchHit.Kind(rawValue: try row.decode("kind", as: String.self)) else {
                        throw ServiceError.conflict("search found a row of an unknown kind")
                    }
                    return SearchHit(
                        kind: kind, id: try row.decode("id"), linkID: try row.decode("link_id"), snippet: snippet,
                        highlights: highlights, rank: try row.decode("rank"), createdAt: try row.decode("created_at"))
                },
                key: { row in
                    [
                        String(try row.decode("rank", as: Double.self)), try row.decode("id", as: UUID.self).uuidString,
                        try row.decode("kind", as: String.self), queryKey,
                    ]
                })
        }
    }
}
