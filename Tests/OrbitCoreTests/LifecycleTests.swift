import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Synchronization
import Testing

@Suite("Data lifecycle: retention and account deletion")
struct LifecycleTests {
    private let day: TimeInterval = 86_400

    @Test("each retention rule removes rows past its keep period and keeps those just inside it (29 vs 31 days)")
    func retentionBoundaries() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            let old = try await services.feed.createPost(in: cast.community, PostDraft(content: "old"), as: cast.member)
            let recent = try await services.feed.createPost(in: cast.community, PostDraft(content: "recent"), as: cast.member)
            _ = try await services.feed.addComment(to: old.id, content: "on old", as: cast.admin)
            _ = try await services.feed.react(to: old.id, type: .like, as: cast.admin)
            let gone = try await services.communities.create(name: "Gone", as: cast.outsider)
            let resting = try await services.communities.create(name: "Resting", as: cast.outsider)
            try await database.withConnection { connection in
                try await connection.query("UPDATE posts SET deleted_at = now() - interval '31 days', content = NULL WHERE id = \(old.id)")
                try await connection.query("UPDATE posts SET deleted_at = now() - interval '29 days', content = NULL WHERE id = \(recent.id)")
                try await connection.query("UPDATE communities SET deleted_at = now() - interval '31 days' WHERE id = \(gone.id)")
                try await connection.query("UPDATE communities SET deleted_at = now() - interval '29 days' WHERE id = \(resting.id)")
                for (age, user) in [(91, cast.admin), (89, cast.member)] {
                    try await connection.query(
                        "INSERT INTO notifications (user_id, type, title, body, created_at) VALUES (\(user), 'new_post', 't', 'b', now() - \(age) * interval '1 day')"
                    )
                }
                for (code, age) in [("OLDAAA", 8), ("NEWAAA", 6)] {
                    try await connection.query(
                        "INSERT INTO invites (community_id, code, created_by, expires_at) VALUES (\(cast.community), \(code), \(cast.admin), now() - \(age) * interval '1 day')"
                    )
                }
                for (hash, age) in [("old-token", 31), ("new-token", 29)] {
                    try await connection.query(
                        "INSERT INTO refresh_tokens (user_id, token_hash, expires_at) VALUES (\(cast.member), \(hash), now() - \(age) * interval '1 day')"
                    )
                }
                for age in [731, 729] {
                    try await connection.query(
                        "INSERT INTO audit_log (user_id, action, created_at) VALUES (\(cast.admin), 'test.old', now() - \(age) * interval '1 day')"
                    )
                }
                for age in [31, 29] {
                    try await connection.query(
                        """
                        INSERT INTO changes (community_id, entity, entity_id, op, created_at)
                        VALUES (\(cast.community), 'post', gen_random_uuid(), 'upsert', now() - \(age) * interval '1 day')
                        """
                    )
                }
            }
            let dry = try await services.lifecycle.runRetention(dryRun: true)
            let expected = [
                "posts": 1, "comments": 1, "reactions": 1, "poll_votes": 0, "notifications": 1, "invites": 1, "refresh_tokens": 1,
                "audit_log": 1, "communities": 1, "members": 1, "events": 0, "transactions": 0, "changes": 1,
            ]
            // posts also counts the posts of the purged community (none here).
            #expect(dry.counts == expected)
            let run = try await services.lifecycle.runRetention(batchSize: 1)
            #expect(run.counts == expected && run.ran)
            let again = try await services.lifecycle.runRetention()
            #expect(again.counts.values.allSatisfy { $0 == 0 })
            let remaining = try await database.withConnection { connection in
                try await connection.query(
                    """
                    SELECT (SELECT count(*) FROM posts WHERE id = \(recent.id)) + (SELECT count(*) FROM communities WHERE id = \(resting.id))
                         + (SELECT count(*) FROM notifications WHERE title = 't') + (SELECT count(*) FROM invites WHERE code = 'NEWAAA')
                         + (SELECT count(*) FROM refresh_tokens) + (SELECT count(*) FROM audit_log WHERE action = 'test.old') AS n
                    """
                ).single().decode("n", as: Int64.self)
            }
            #expect(remaining == 6)
        }
    }

    @Test("a purge larger than a batch goes through in several transactions")
    func batching() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            try await database.withConnection { connection in
                try await connection.query(
                    "INSERT INTO notifications (user_id, type, title, body, created_at) SELECT \(cast.admin), 'new_post', 't', 'b', now() - interval '100 days' FROM generate_series(1, 2500)"
                )
            }
            let report = try await services.lifecycle.runRetention(batchSize: 1000)
            #expect(report.counts["notifications"] == 2500)
        }
    }

    @Test("account deletion: grace period, cancel, last-admin refusal, then anonymized with content kept")
    func accountDeletion() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let refused = await serviceError { try await services.lifecycle.requestAccountDeletion(as: cast.admin) }
            #expect(refused?.code == .conflict)

            _ = try await services.lifecycle.requestAccountDeletion(as: cast.member)
            try await services.lifecycle.cancelAccountDeletion(as: cast.member)
            var later = services
            later.now = { Date().addingTimeInterval(8 * 86_400) }
            #expect(try await later.lifecycle.deleteDueAccounts() == (0, 0))

            let post = try await services.feed.createPost(in: cast.community, PostDraft(content: "Bye"), as: cast.member)
            _ = try await services.family.add(name: "Kid", as: cast.member)
            _ = try await services.lifecycle.requestAccountDeletion(as: cast.member)
            var soon = services
            soon.now = { Date().addingTimeInterval(6 * 86_400) }
            #expect(try await soon.lifecycle.deleteDueAccounts() == (0, 0))
            #expect(try await later.lifecycle.deleteDueAccounts() == (1, 0))

            let user = try await services.users.getAsOperator(cast.member)
            #expect(user.displayName == "[Deleted User]" && !user.email.contains("member@"))
            let members = (try await services.members.list(of: cast.community, as: cast.admin)).items
            #expect(!members.contains { $0.userID == cast.member })
            #expect(try await services.feed.post(post.id, as: cast.admin).authorID == cast.member)
        }
    }

    @Test("a cancellation that commits while the deletion job runs keeps the account")
    func cancellationDuringTheJob() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            _ = try await services.lifecycle.requestAccountDeletion(as: cast.member)
            var later = services
            later.now = { Date().addingTimeInterval(8 * 86_400) }
            // The cancellation is under way (its row lock taken, not yet committed) when the job starts.
            let canceller = try await database.connect()
            try await canceller.executeScript("BEGIN")
            try await canceller.query("UPDATE users SET deletion_requested_at = NULL WHERE id = \(cast.member)")
            let finished = Mutex(false)
            let lifecycle = later.lifecycle
            let job = Task {
                defer { finished.withLock { $0 = true } }
                return try await lifecycle.deleteDueAccounts()
            }
            // Wait until the job has either finished or is waiting for the cancellation's lock.
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline {
                let waiting = try await database.withConnection { connection in
                    try await connection.query(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                    ).single().decode(0, as: Int64.self)
                }
                if waiting > 0 { break }
                if finished.withLock({ $0 }) { break }
                try await Task.sleep(for: .milliseconds(5))  // polling for either condition
            }
            try await canceller.executeScript("COMMIT")
            await canceller.close()
            let outcome = try await job.value
            #expect(outcome == (0, 0))
            #expect(try await later.lifecycle.deleteDueAccounts() == (0, 0))
            let user = try await services.users.getAsOperator(cast.member)
            #expect(user.displayName == "Max Member")
        }
    }
}
