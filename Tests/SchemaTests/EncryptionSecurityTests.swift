import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

/// End-to-end encryption's rules in the database itself, as orbit_app (sql/230_encryption.sql):
/// whatever a service does, a community with encryption on stores no plaintext, and its keys are
/// recorded by admins for active members only and never changed.
@Suite("End-to-end encryption under row-level security, as orbit_app")
struct EncryptionSecurityTests {
    /// The SQLSTATE and constraint of what `body` raised, or nil if it succeeded.
    static func refusal(_ connection: PostgresConnection, as user: UUID, _ query: PostgresQuery) async -> String? {
        do {
            try await connection.asApp(user) { try await $0.query(query) }
            return nil
        } catch let error as PostgresError {
            return "\(error.sqlState ?? "?") \(error.constraint ?? "")".trimmingCharacters(in: .whitespaces)
        } catch {
            return "\(error)"
        }
    }

    @Test(
        "with encryption on, plaintext and stale key versions are refused in posts, comments and messages; keys only by admins, for active members, never changed"
    )
    func databaseRules() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                let a = world.id(.a), a2 = world.id(.a2), community = world.communityA
                let post = try #require(world.posts[community])
                let message = try #require(world.rows["messages"]?.first?.id)
                try await connection.query(
                    "UPDATE communities SET settings = settings || '{\"endToEndEncryption\": true}'::jsonb WHERE id = \(community)")

                // Keys: a member (not an admin) may not record one; an admin not for someone who left;
                // nobody changes or removes one.
                #expect(
                    await Self.refusal(
                        connection, as: a2,
                        "INSERT INTO community_keys (community_id, user_id, encrypted_key, key_version, created_by) VALUES (\(community), \(a2), '\\x01', 2, \(a2))"
                    ) == "42501")
                #expect(
                    await Self.refusal(
                        connection, as: a,
                        "INSERT INTO community_keys (community_id, user_id, encrypted_key, key_version, created_by) VALUES (\(community), \(world.id(.former)), '\\x01', 2, \(a))"
                    ) == "42501")
                #expect(
                    await Self.refusal(connection, as: a, "UPDATE community_keys SET encrypted_key = '\\x09' WHERE community_id = \(community)")
                        == "42501")
                #expect(await Self.refusal(connection, as: a, "DELETE FROM community_keys WHERE community_id = \(community)") == "42501")

                // Content: plaintext refused, ciphertext under version 1 (the world's) taken, version 2 refused.
                #expect(
                    await Self.refusal(connection, as: a, "INSERT INTO posts (community_id, author_id, content) VALUES (\(community), \(a), 'plain')")
                        == "23514 e2e_ciphertext_required")
                #expect(
                    await Self.refusal(
                        connection, as: a,
                        "INSERT INTO posts (community_id, author_id, content_encrypted, encryption_version) VALUES (\(community), \(a), '\\xc1', 1)")
                        == nil)
                #expect(
                    await Self.refusal(
                        connection, as: a,
                        "INSERT INTO posts (community_id, author_id, content_encrypted, encryption_version) VALUES (\(community), \(a), '\\xc1', 2)")
                        == "23514 e2e_key_version")
                #expect(
                    await Self.refusal(connection, as: a, "INSERT INTO comments (post_id, author_id, content) VALUES (\(post), \(a), 'plain')")
                        == "23514 e2e_ciphertext_required")
                #expect(
                    await Self.refusal(connection, as: a, "UPDATE messages SET text = 'plain again' WHERE id = \(message)")
                        == "23514 e2e_ciphertext_required")
                // Both forms at once break the table's own rule.
                #expect(
                    await Self.refusal(
                        connection, as: a,
                        "INSERT INTO posts (community_id, author_id, content, content_encrypted, encryption_version) VALUES (\(community), \(a), 'x', '\\xc1', 1)"
                    ) == "23514 posts_ciphertext_or_plaintext")
                // A deleted row is no way around it: inserted deleted, or restored after its text
                // changed while deleted.
                #expect(
                    await Self.refusal(
                        connection, as: a, "INSERT INTO comments (post_id, author_id, content, deleted_at) VALUES (\(post), \(a), 'plain', now())")
                        == "23514 e2e_ciphertext_required")
                let own = try await connection.asApp(a) { connection in
                    try await connection.query(
                        "INSERT INTO posts (community_id, author_id, content_encrypted, encryption_version) VALUES (\(community), \(a), '\\xc1', 1) RETURNING id"
                    ).single().decode("id", as: UUID.self)
                }
                // Plaintext put in a live ciphertext post by "deleting" it in the same statement
                // (issue 52: it passed): a deleted row holds no text.
                #expect(
                    await Self.refusal(
                        connection, as: a,
                        "UPDATE posts SET deleted_at = now(), content = 'plain', content_encrypted = NULL, encryption_version = 0 WHERE id = \(own)")
                        == "23514 posts_deleted_holds_no_text")
                #expect(
                    await Self.refusal(
                        connection, as: a, "UPDATE posts SET deleted_at = now(), content_encrypted = NULL, encryption_version = 0 WHERE id = \(own)")
                        == nil)
                // Plaintext stored into one's own deleted post, comment or message (it passed too).
                #expect(
                    await Self.refusal(connection, as: a, "UPDATE posts SET content = 'plain' WHERE id = \(own)")
                        == "23514 posts_deleted_holds_no_text")
                #expect(
                    await Self.refusal(
                        connection, as: a,
                        "UPDATE messages SET deleted_at = now(), text = 'plain', content_encrypted = NULL, encryption_version = NULL WHERE id = \(message)"
                    ) == "23514 messages_deleted_holds_no_text")
                #expect(
                    await Self.refusal(
                        connection, as: a,
                        "INSERT INTO comments (post_id, author_id, content_encrypted, encryption_version, deleted_at) VALUES (\(post), \(a), '\\xc1', 1, now())"
                    ) == "23514 comments_deleted_holds_no_text")
                #expect(
                    await Self.refusal(connection, as: a, "UPDATE posts SET deleted_at = NULL WHERE id = \(own)") == "23514 e2e_ciphertext_required")
                // Once on, it stays on.
                #expect(
                    await Self.refusal(
                        connection, as: a, "UPDATE communities SET settings = settings - 'endToEndEncryption' WHERE id = \(community)")
                        == "23514 e2e_stays_on")
                // In B, where it is off, ciphertext is refused.
                #expect(
                    await Self.refusal(
                        connection, as: world.id(.b),
                        "INSERT INTO posts (community_id, author_id, content_encrypted, encryption_version) VALUES (\(world.communityB), \(world.id(.b)), '\\xc1', 1)"
                    ) == "23514 e2e_off")
            }
        }
    }

    @Test("a post racing a re-key waits for it and is then checked against the new version")
    func postDuringRekey() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { setup in
                let world = try await World.build(setup)
                let a = world.id(.a), community = world.communityA
                try await setup.query(
                    "UPDATE communities SET settings = settings || '{\"endToEndEncryption\": true}'::jsonb WHERE id = \(community)")
                // The re-key to version 2, open (not committed) on a connection of its own.
                try await database.withConnection { rekey in
                    try await rekey.query("BEGIN")
                    try await rekey.query(
                        "INSERT INTO community_keys (community_id, user_id, encrypted_key, key_version) VALUES (\(community), \(a), '\\x02', 2)")
                    // A post under version 1, on a third connection: it must wait for the re-key.
                    let post = Task {
                        try await database.withConnection { writer in
                            await Self.refusal(
                                writer, as: a,
                                "INSERT INTO posts (community_id, author_id, content_encrypted, encryption_version) VALUES (\(community), \(a), '\\xc1', 1)"
                            )
                        }
                    }
                    // The re-key's backend: the post must wait for it, in this test's database
                    // (parallel tests share the cluster; another's lock wait is not this one's).
                    let holder = try await rekey.query("SELECT pg_backend_pid() AS pid").single().decode("pid", as: Int32.self)
                    var waited = false
                    // Until it waits. The deadline bounds a hang and times nothing: 200 polls of
                    // 25 ms (5 s) were too few once on a loaded CI machine (the test took 220 s),
                    // where the post reached the server only after the re-key had committed.
                    let deadline = ContinuousClock.now + .seconds(120)
                    while ContinuousClock.now < deadline {
                        let waiting = try await setup.query(
                            """
                            SELECT count(*) AS n FROM pg_stat_activity
                            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO posts%'
                              AND \(holder) = ANY(pg_blocking_pids(pid))
                            """
                        ).single().decode("n", as: Int64.self)
                        if waiting > 0 {
                            waited = true
                            break
                        }
                        try await Task.sleep(for: .milliseconds(25))
                    }
                    #expect(waited, "the post did not wait for the re-key")
                    try await rekey.query("COMMIT")
                    #expect(try await post.value == "23514 e2e_key_version")
                }
            }
        }
    }
}
