import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Rows created by the tests through the spec's own columns, as the table owner (a
/// superuser, to whom constraints and triggers apply as to anyone).
struct Seed {
    let connection: PostgresConnection

    @discardableResult
    func user(_ name: String) async throws -> UUID {
        try await id(
            "INSERT INTO users (apple_id, email, display_name) VALUES (\(name + "-apple"), \(name + "@example.com"), \(name)) RETURNING id"
        )
    }

    /// A community created by `creator`, with the creator as its first admin.
    func community(_ name: String, creator: UUID) async throws -> UUID {
        let community = try await id("INSERT INTO communities (name, created_by) VALUES (\(name), \(creator)) RETURNING id")
        try await member(community, creator, role: "admin")
        return community
    }

    /// Users "a" and "b" and a community "Club" that a created (its admin) and b joined.
    func pair() async throws -> (a: UUID, b: UUID, community: UUID) {
        let a = try await user("a")
        let b = try await user("b")
        let community = try await community("Club", creator: a)
        try await member(community, b)
        return (a, b, community)
    }

    @discardableResult
    func member(_ community: UUID, _ user: UUID, role: String = "member") async throws -> UUID {
        try await id(
            "INSERT INTO members (community_id, user_id, role) VALUES (\(community), \(user), \(role)::member_role) RETURNING id"
        )
    }

    func event(_ community: UUID, by user: UUID, title: String = "Practice") async throws -> UUID {
        try await id(
            "INSERT INTO events (community_id, created_by, title, starts_at) VALUES (\(community), \(user), \(title), now() + interval '1 day') RETURNING id"
        )
    }

    func post(_ community: UUID, by user: UUID, content: String = "Hello") async throws -> UUID {
        try await id("INSERT INTO posts (community_id, author_id, content) VALUES (\(community), \(user), \(content)) RETURNING id")
    }

    func poll(_ community: UUID, by user: UUID, options: [String] = ["Saturday", "Sunday", "Monday"], allowMultiple: Bool = false)
        async throws -> UUID
    {
        let data = try PostgresJSON(encoding: PollData(question: "When?", options: options, allowMultiple: allowMultiple))
        return try await id(
            "INSERT INTO posts (community_id, author_id, type, content, poll_data) VALUES (\(community), \(user), 'poll', 'Vote', \(data)) RETURNING id"
        )
    }

    func comment(_ post: UUID, by user: UUID, parent: UUID? = nil) async throws -> UUID {
        try await id("INSERT INTO comments (post_id, author_id, parent_id, content) VALUES (\(post), \(user), \(parent), 'Nice') RETURNING id")
    }

    /// An expense paid by `payer`, split as given, inserted in one transaction.
    @discardableResult
    func expense(_ community: UUID, paidBy payer: UUID, total: Int, currency: String = "USD", splits: [(UUID, Int)]) async throws -> UUID {
        try await connection.withTransaction { connection in
            let seed = Seed(connection: connection)
            let transaction = try await seed.id(
                """
                INSERT INTO transactions (community_id, created_by, type, description, total_amount, currency, paid_by, transaction_date)
                VALUES (\(community), \(payer), 'expense', 'Pizza', \(total), \(currency), \(payer), current_date) RETURNING id
                """
            )
            for (user, amount) in splits {
                try await connection.query("INSERT INTO splits (transaction_id, user_id, amount) VALUES (\(transaction), \(user), \(amount))")
            }
            return transaction
        }
    }

    func id(_ query: PostgresQuery) async throws -> UUID {
        try await connection.query(query).single().decode("id", as: UUID.self)
    }
}

struct PollData: Codable, Sendable {
    var question: String
    var options: [String]
    var allowMultiple: Bool
}

extension TestDatabase {
    /// Runs `body` with a superuser connection and a `Seed` on it.
    func seeding<Result>(_ body: (Seed, PostgresConnection) async throws -> Result) async throws -> Result {
        try await withConnection { connection in
            try await body(Seed(connection: connection), connection)
        }
    }
}

extension PostgresConnection {
    /// The single value of a one-row, one-column query.
    func value<Value: PostgresDecodable>(_ query: PostgresQuery, as type: Value.Type = Value.self) async throws -> Value {
        try await self.query(query).single().decode(0, as: Value.self)
    }
}
