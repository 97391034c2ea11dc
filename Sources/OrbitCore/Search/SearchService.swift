package import Foundation
import OrbitPostgres

/// Search (issue 40; docs/search.md): a community's posts, comments, events, expenses and the
/// chat messages the reader may read, ranked, with a marked snippet, paged by cursor.
///
/// The query is one SELECT as `orbit_app` under the reader's identity: row-level security
/// decides what is found, exactly as it decides what the reader may open (a non-participant
/// never finds a chat message). The vectors (sql/820_search.sql) are NULL for what is never
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
    /// - Throws: `invalidInput(field: "q")` for an empty or too long text; `notFound` for a
    ///   community the reader is not a member of.
    package func search(
        _ community: CommunityID, for text: String, limit: Int = 20, cursor: String? = nil, as actor: UserID
    ) async throws -> Page<SearchHit> {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw ServiceError.invalidInput(field: "q", reason: "must not be empty") }
        guard text.count <= Self.maxQueryLength else {
            throw ServiceError.invalidInput(field: "q", reason: "must be at most \(Self.maxQueryLength) characters")
        }
        try Validate.limit(limit, in: 1...50)
        // A cursor belongs to its query: the next page of another query is refused, not misread.
        let queryKey = String(FeedCursor.checksum(text), radix: 36)
        let after = try PageCursor.decode(cursor, list: "search", parts: 3)
        if let after, after.key[2] != queryKey {
            throw ServiceError.invalidInput(field: "cursor", reason: "is not a cursor from this list")
        }
        let afterRank = try after?.double(0)
        let afterID = try after?.uuid(1)
        let query: PostgresQuery = """
            WITH query AS MATERIALIZED (
                SELECT config, websearch_to_tsquery(config, \(text)) AS tsq
                FROM (SELECT orbit.search_config(\(community)) AS config) AS c
            ), hits AS (
                SELECT 'post' AS kind, p.id, p.id AS link_id, p.created_at, ts_rank_cd(p.search_vector, (SELECT tsq FROM query), 1)::float8 AS rank,
                    concat_ws(' ', p.poll_data ->> 'question', p.content) AS body
                FROM posts p
                WHERE p.community_id = \(community) AND p.search_vector @@ (SELECT tsq FROM query)
                UNION ALL
                SELECT 'comment', c.id, c.post_id, c.created_at, ts_rank_cd(c.search_vector, (SELECT tsq FROM query), 1)::float8, c.content
                FROM comments c
                WHERE c.community_id = \(community) AND c.search_vector @@ (SELECT tsq FROM query)
                UNION ALL
                SELECT 'event', e.id, e.id, e.created_at, ts_rank_cd(e.search_vector, (SELECT tsq FROM query), 1)::float8,
                    concat_ws(' ', e.title, e.location_name, e.description)
                FROM events e
                WHERE e.community_id = \(community) AND e.search_vector @@ (SELECT tsq FROM query)
                UNION ALL
                SELECT 'expense', t.id, t.id, t.created_at, ts_rank_cd(t.search_vector, (SELECT tsq FROM query), 1)::float8, t.description
                FROM transactions t
                WHERE t.community_id = \(community) AND t.search_vector @@ (SELECT tsq FROM query)
                UNION ALL
                SELECT 'message', m.id, m.conversation_id, m.created_at, ts_rank_cd(m.search_vector, (SELECT tsq FROM query), 1)::float8, m.text
                FROM messages m
                WHERE m.community_id = \(community) AND m.search_vector @@ (SELECT tsq FROM query)
            ), page AS (
                SELECT * FROM hits
                WHERE \(afterRank)::float8 IS NULL OR (rank, id) < (\(afterRank), \(afterID))
                ORDER BY rank DESC, id DESC
                LIMIT \(limit + 1)
            )
            SELECT page.kind, page.id, page.link_id, page.created_at, page.rank,
                ts_headline(query.config, translate(page.body, E'\\x02\\x03', ''), query.tsq,
                    'StartSel=' || chr(2) || ', StopSel=' || chr(3) || ', MaxWords=24, MinWords=12, ShortWord=2, MaxFragments=2, FragmentDelimiter=" … "')
                    AS snippet
            FROM page, query
            ORDER BY page.rank DESC, page.id DESC
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
                    [String(try row.decode("rank", as: Double.self)), try row.decode("id", as: UUID.self).uuidString, queryKey]
                })
        }
    }
}
