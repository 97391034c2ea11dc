import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Search is a query of the searchable tables' vectors as orbit_app (OrbitCore's SearchService):
/// what anyone finds is what row-level security lets them read, and nothing that is deleted or
/// encrypted is in the index at all. The RLS matrix's world, searched by every viewer.
@Suite("Search under row-level security, as orbit_app")
struct SearchSecurityTests {
    static let searchable = ["posts", "comments", "events", "transactions", "messages"]
    /// The text column each table's vector is made of (one of them).
    static let textColumn = ["posts": "content", "comments": "content", "events": "title", "transactions": "description", "messages": "text"]

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
                    for table in Self.searchable {
                        let found = Set(
                            try await connection.query(
                                """
                                SELECT id FROM \(unescaped: table)
                                WHERE search_vector @@ websearch_to_tsquery(orbit.search_config(community_id), 'zebra')
                                """
                            ).map { try $0.decode("id", as: UUID.self) })
                        let expected = world.expectedIDs(table, for: person)
                        #expect(found == expected, "\(viewer) on \(table): found \(found.count) rows, may read \(expected.count)")
                        #expect(found.isDisjoint(with: never), "\(viewer) on \(table)")
                    }
                }
            }
        }
    }
}
