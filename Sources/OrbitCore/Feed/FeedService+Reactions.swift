import Foundation
import OrbitPostgres

/// Reactions and poll votes: one reaction per member and post; votes as the poll allows.
extension FeedService {
    // MARK: - Reactions

    /// Adds or changes the acting user's reaction (one per user and post).
    package func react(to id: PostID, type: ReactionType, as actor: UserID) async throws -> FeedPost {
        try await runner.asUser(actor) { connection in
            // One round trip: the reaction, written only if the actor sees the post (row-level
            // security shows a post to members of its community only), and the post as it is now.
            let results = try await connection.pipeline([
                """
                INSERT INTO reactions (post_id, user_id, type)
                SELECT p.id, \(actor), \(type)::reaction_type FROM posts p WHERE p.id = \(id) AND p.deleted_at IS NULL
                ON CONFLICT (post_id, user_id) DO UPDATE SET type = excluded.type WHERE reactions.type IS DISTINCT FROM excluded.type
                """,
                Self.postQuery(id, reader: actor),
            ])
            guard let row = results[1].first else { throw ServiceError.notFound("Post \(id)") }
            return try FeedPost(row: row)
        }
    }

    /// Takes the acting user's reaction back.
    package func removeReaction(from id: PostID, as actor: UserID) async throws -> FeedPost {
        try await runner.asUser(actor) { connection in
            let results = try await connection.pipeline([
                "DELETE FROM reactions WHERE post_id = \(id) AND user_id = \(actor)",
                Self.postQuery(id, reader: actor),
            ])
            guard let row = results[1].first else { throw ServiceError.notFound("Post \(id)") }
            return try FeedPost(row: row)
        }
    }

    // MARK: - Polls

    /// Votes for an option (zero-based). On a single-choice poll a new vote replaces the old one.
    package func vote(on id: PostID, option: Int, as actor: UserID) async throws -> FeedPost {
        try await runner.asUser(actor) { connection in
            let current = try await post(id, reader: actor, on: connection)
            guard let poll = current.pollData else { throw ServiceError.conflict(field: "post", reason: "is not a poll") }
            if let closesAt = poll.closesAt, closesAt <= runner.now() {
                throw ServiceError.conflict("The poll closed at \(closesAt.formatted(.iso8601)).")
            }
            guard poll.options.indices.contains(option) else {
                throw ServiceError.conflict(
                    field: "option", reason: "must be between 0 and \(poll.options.count - 1): the poll has \(poll.options.count) options")
            }
            if current.myVotes.contains(option) { throw ServiceError.conflict("You already voted for option \(option).") }
            let vote: PostgresQuery =
                !poll.allowMultiple && !current.myVotes.isEmpty
                ? "UPDATE poll_votes SET option_index = \(option) WHERE post_id = \(id) AND user_id = \(actor)"
                : "INSERT INTO poll_votes (post_id, user_id, option_index) VALUES (\(id), \(actor), \(option))"
            // The vote and the post as it is now, in one round trip.
            guard let row = try await connection.pipeline([vote, Self.postQuery(id, reader: actor)])[1].first else {
                throw ServiceError.notFound("Post \(id)")
            }
            return try FeedPost(row: row)
        }
    }

    /// Retracts the acting user's vote for `option`, or all their votes on the poll.
    package func retractVote(on id: PostID, option: Int? = nil, as actor: UserID) async throws -> FeedPost {
        try await runner.asUser(actor) { connection in
            let current = try await post(id, reader: actor, on: connection)
            if let closesAt = current.pollData?.closesAt, closesAt <= runner.now() {
                throw ServiceError.conflict("The poll closed at \(closesAt.formatted(.iso8601)).")
            }
            let results = try await connection.pipeline([
                "DELETE FROM poll_votes WHERE post_id = \(id) AND user_id = \(actor) AND (\(option)::int IS NULL OR option_index = \(option))",
                Self.postQuery(id, reader: actor),
            ])
            guard let row = results[1].first else { throw ServiceError.notFound("Post \(id)") }
            return try FeedPost(row: row)
        }
    }

    /// Votes per option, in the poll's order.
    package func pollResults(_ id: PostID, as actor: UserID) async throws -> [Int] {
        try await runner.asUser(actor) { connection in
            let current = try await post(id, reader: actor, on: connection)
            guard let poll = current.pollData else { throw ServiceError.conflict(field: "post", reason: "is not a poll") }
            var counts = Array(repeating: 0, count: poll.options.count)
            for row in try await connection.query("SELECT option_index, count(*) AS n FROM poll_votes WHERE post_id = \(id) GROUP BY option_index") {
                let (index, count) = try row.decode((Int32, Int64).self)
                if counts.indices.contains(Int(index)) { counts[Int(index)] = Int(count) }
            }
            return counts
        }
    }
}
