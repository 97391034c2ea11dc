import Foundation
import OrbitPostgres
import OrbitTestSupport
import Synchronization
import Testing

/// Set when a task has finished.
private final class WrittenFlag: Sendable {
    let done = Atomic<Bool>(false)
}

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
                try await connection.query("UPDATE posts SET deleted_at = now(), content = NULL WHERE id = \(deletedPost)")
                let conversation = try await seed.id(
                    "SELECT id FROM conversations WHERE community_id = \(world.communityA) AND kind = 'community'")
                let deletedMessage = try await seed.id(
                    """
                    INSERT INTO messages (conversation_id, community_id, sender_id, text)
                    VALUES (\(conversation), \(world.communityA), \(world.id(.a)), 'zebra gone') RETURNING id
                    """)
                try await connection.query("UPDATE messages SET deleted_at = now(), text = NULL WHERE id = \(deletedMessage)")
                // Ciphertext is taken where end-to-end encryption is on (A has key version 1).
                try await connection.query(
                    "UPDATE communities SET settings = settings || '{\"endToEndEncryption\": true}'::jsonb WHERE id = \(world.communityA)")
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
                            "SELECT kind, id FROM orbit.search(\(community), 'zebra', NULL, NULL, NULL, 10000)")
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

    /// A community with its admin, a post by them saying `text`, and a comment on it.
    private static func community(_ seed: Seed, _ name: String) async throws -> (user: UUID, community: UUID, post: UUID, comment: UUID) {
        let user = try await seed.user(name)
        let community = try await seed.community(name, creator: user)
        let post = try await seed.post(community, by: user, content: "zebra crossing")
        let comment = try await seed.comment(post, by: user)
        return (user, community, post, comment)
    }

    @Test("a vector orbit_app writes itself is replaced by the true one, and an updated_at written beside it is not kept")
    func forgedVectors() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let seed = Seed(connection: connection)
                let home = try await Self.community(seed, "a")
                let event = try await seed.event(home.community, by: home.user, title: "Zebra practice")
                let forged = "'\(String(home.community.uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)))~nice':1A,2A,3A,4A"
                try await connection.asApp(home.user) { connection in
                    try await connection.query("UPDATE comments SET search_vector = \(forged)::tsvector WHERE id = \(home.comment)")
                    // Posts' columns are granted one by one (search_vector is not); events' row is whole.
                    try await connection.query(
                        "UPDATE events SET search_vector = NULL, updated_at = '2001-01-01' WHERE id = \(event)")
                }
                let rows = try await connection.query(
                    """
                    SELECT (SELECT c.search_vector = orbit.search_vector(c) FROM comments c WHERE c.id = \(home.comment)) AS comment_true,
                        (SELECT e.search_vector = orbit.search_vector(e) FROM events e WHERE e.id = \(event)) AS event_true,
                        (SELECT e.updated_at > now() - interval '1 hour' FROM events e WHERE e.id = \(event)) AS event_touched
                    """)
                let row = try #require(rows.first)
                #expect(try row.decode("comment_true", as: Bool.self))
                #expect(try row.decode("event_true", as: Bool.self))
                #expect(try row.decode("event_touched", as: Bool.self))
            }
        }
    }

    @Test("a row written while its community's language changes is indexed in the new language")
    func languageRace() async throws {
        try await withTestDatabase { database in
            let (user, community) = try await database.withConnection { connection in
                let seed = Seed(connection: connection)
                let user = try await seed.user("a")
                return (user, try await seed.community("Maison", creator: user))
            }
            let changing = try await database.connect()
            try await changing.query("BEGIN")
            try await changing.query(
                "UPDATE communities SET settings = settings || '{\"language\": \"french\"}' WHERE id = \(community)")
            // The language is changed, not committed: a post written now must wait for it.
            let written = WrittenFlag()
            let writer = Task {
                defer { written.done.store(true, ordering: .sequentiallyConsistent) }
                return try await database.withConnection { connection in
                    try await Seed(connection: connection).post(community, by: user, content: "les maisons chantaient")
                }
            }
            // Until the writer waits on the community's search lock (or, without that lock, has
            // written already): an observable state, not a pause.
            let deadline = ContinuousClock.now + .seconds(30)
            while !written.done.load(ordering: .sequentiallyConsistent), ContinuousClock.now < deadline {
                // In this test's database, and waiting for this connection: parallel tests share
                // the cluster, and another's advisory wait is not this one's.
                let waiting = try await changing.query(
                    """
                    SELECT FROM pg_locks l
                    WHERE l.locktype = 'advisory' AND NOT l.granted
                      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                      AND pg_backend_pid() = ANY(pg_blocking_pids(l.pid))
                    """)
                if !waiting.isEmpty { break }
                try await Task.sleep(for: .milliseconds(1))
            }
            try await changing.query("COMMIT")
            await changing.close()
            let post = try await writer.value
            try await database.withConnection { connection in
                let rows = try await connection.query(
                    "SELECT p.search_vector = orbit.search_vector(p) AS current, p.search_vector::text AS vector FROM posts p WHERE p.id = \(post)")
                let row = try #require(rows.first)
                let vector = try row.decode("vector", as: String.self)
                #expect(try row.decode("current", as: Bool.self), "\(vector)")
                #expect(vector.contains("~chant"), "\(vector)")
            }
        }
    }

    @Test("two hits of equal rank and equal id in two tables are both found across a page boundary")
    func equalRankAndID() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let seed = Seed(connection: connection)
                let home = try await Self.community(seed, "a")
                // A comment whose id is the post's (ids are unique per table), saying the same.
                try await connection.query("UPDATE comments SET id = \(home.post), content = 'zebra crossing' WHERE id = \(home.comment)")
                try await connection.asApp(home.user) { connection in
                    var seen: [String] = []
                    var after: (Double, UUID, String)?
                    for _ in 0..<3 {
                        let rows = try await connection.query(
                            "SELECT kind, id, rank FROM orbit.search(\(home.community), 'zebra', \(after?.0)::float8, \(after?.1)::uuid, \(after?.2)::text, 1)"
                        )
                        guard let row = rows.first else { break }
                        let (kind, id, rank) = try row.decode((String, UUID, Double).self)
                        seen.append(kind)
                        after = (rank, id, kind)
                    }
                    #expect(seen.sorted() == ["comment", "post"])
                }
            }
        }
    }
}
