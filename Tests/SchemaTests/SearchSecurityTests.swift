import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Search is `orbit.search` as orbit_app (OrbitCore's SearchService calls it): what anyone finds is
/// what row-level security lets them read, and nothing that is deleted or encrypted is in the
/// index at all. The RLS matrix's world, searched by every viewer in both its communities.
@Suite("Search under row-level security, as orbit_app")
struct SearchSecurityTests {
    static let searchable = ["posts", "comments", "events", "transactions", "messages"]
    /// The text column each table's vector is made of (one of them).
    static let textColumn = ["posts": "content", "comments": "content", "events": "title", "transactions": "description", "messages": "text"]
    /// The table of each kind of hit.
    static let table = ["post": "posts", "comment": "comments", "event": "events", "expense": "transactions", "message": "messages"]

    @Test(
        "each viewer finds exactly the searchable rows they may read; a deleted post, its comment, a deleted or encrypted message nobody finds",
        arguments: RowLevelSecurityTests.viewers)
    func findsWhatOneMayRead(viewer: String) async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                let seed = Seed(connection: connection)
                // Every searchable row of the world says "zebra" (the trigger indexes the edit).
                for table in Self.searchable {
                    let column = try #require(Self.textColumn[table])
                    try await connection.query("UPDATE \(unescaped: table) SET \(unescaped: column) = \(unescaped: column) || ' zebra'")
                }
                // What must never be found, in A, where `a` sees everything: a deleted post and its
                // comment, a deleted message and one in ciphertext (both in A's own conversation).
                let deletedPost = try await seed.post(world.communityA, by: world.id(.a), content: "zebra crossing")
                let orphan = try await seed.comment(deletedPost, by: world.id(.a))
                try await connection.query("UPDATE comments SET content = 'zebra too' WHERE id = \(orphan)")
                try await connection.query("UPDATE posts SET deleted_at = now() WHERE id = \(deletedPost)")
                let conversation = try await seed.id(
                    "SELECT id FROM conversations WHERE community_id = \(world.communityA) AND kind = 'community'")
                let deletedMessage = try await seed.id(
                    """
                    INSERT INTO messages (conversation_id, community_id, sender_id, text)
                    VALUES (\(conversation), \(world.communityA), \(world.id(.a)), 'zebra gone') RETURNING id
                    """)
                try await connection.query("UPDATE messages SET deleted_at = now() WHERE id = \(deletedMessage)")
                let encrypted = try await seed.id(
                    """
                    INSERT INTO messages (conversation_id, community_id, sender_id, content_encrypted, encryption_version)
                    VALUES (\(conversation), \(world.communityA), \(world.id(.a)), '\\x7a65627261'::bytea, 1) RETURNING id
                    """)
                let never: Set<UUID> = [deletedPost, orphan, deletedMessage, encrypted]

                let person = World.Person(rawValue: viewer)
                let rawSetting: String? = viewer == "(empty setting)" ? "" : nil
                try await connection.asApp(person.map(world.id), rawSetting: rawSetting) { connection in
                    // The search itself (orbit.search, as SearchService calls it) in each community.
                    var found: [String: Set<UUID>] = [:]
                    for community in [world.communityA, world.communityB] {
                        for row in try await connection.query(
                            "SELECT kind, id FROM orbit.search(\(community), 'zebra', NULL, NULL, 10000)")
                        {
                            let (kind, id) = try row.decode((String, UUID).self)
                            found[try #require(Self.table[kind]), default: []].insert(id)
                        }
                    }
                    // What the index answers directly (SECURITY DEFINER) is no more than that either.
                    var matched: [String: Set<UUID>] = [:]
                    for community in [world.communityA, world.communityB] {
                        for row in try await connection.query(
                            "SELECT kind, id FROM orbit.search_matches(\(community), orbit.scope_query(\(community), 'zebra'::tsquery))")
                        {
                            let (kind, id) = try row.decode((String, UUID).self)
                            matched[try #require(Self.table[kind]), default: []].insert(id)
                        }
                    }
                    for table in Self.searchable {
                        let expected = world.expectedIDs(table, for: person)
                        #expect((matched[table] ?? []).isSubset(of: expected), "\(viewer) on \(table): the index answered beyond what they may read")
                        let hits = found[table] ?? []
                        #expect(hits == expected, "\(viewer) on \(table): found \(hits.count) rows, may read \(expected.count)")
                        #expect(hits.isDisjoint(with: never), "\(viewer) on \(table)")
                    }
                }
            }
        }
    }
}
