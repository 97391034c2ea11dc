import Foundation
import OrbitPostgres

/// Accounts (spec: Users): sign-up, profiles, and finding a user for `--as`.
package struct UserService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// Creates an account (sign-up: the new user is the acting user).
    /// - Parameter appleID: Sign in with Apple's stable id; a local id is generated when nil.
    package func create(email: String, displayName: String, appleID: String? = nil) async throws -> User {
        let email = try Validate.email(email)
        let displayName = try Validate.text(displayName, field: "display_name", limit: 100)
        let appleID = try Validate.text(appleID ?? "local.\(UUID().uuidString.lowercased())", field: "apple_id", limit: 255)
        let id = UserID.random()
        return try await runner.asUser(id) { connection in
            try await connection.query(
                "INSERT INTO users (id, apple_id, email, display_name) VALUES (\(id), \(appleID), \(email), \(displayName))"
            )
            return try User(row: try await connection.query("SELECT \(unescaped: User.columns) FROM users WHERE id = \(id)").single())
        }
    }

    /// A user the acting user may see (themselves, or someone they share a community with).
    package func get(_ id: UserID, as actor: UserID) async throws -> User {
        try await runner.asUser(actor) { connection in
            guard let row = try await connection.query("SELECT \(unescaped: User.columns) FROM users WHERE id = \(id) AND deleted_at IS NULL").first
            else { throw ServiceError.notFound("User \(id)") }
            return try User(row: row)
        }
    }

    /// Changes the acting user's own profile; nil leaves a field as it is.
    package func updateProfile(
        displayName: String? = nil, email: String? = nil, avatarURL: String? = nil, language: String? = nil, timezone: String? = nil,
        as actor: UserID
    ) async throws -> User {
        let displayName = try displayName.map { try Validate.text($0, field: "display_name", limit: 100) }
        let email = try email.map(Validate.email)
        let avatarURL = try Validate.url(avatarURL, field: "avatar_url")
        let language = try language.map { try LanguageTag.parse($0, field: "language") }
        if let timezone, !CommunitySettings.timeZoneNames.contains(timezone) {
            throw ServiceError.invalidInput(field: "timezone", reason: "is not an IANA time zone name such as Asia/Kolkata")
        }
        return try await runner.asUser(actor) { connection in
            let rows = try await connection.query(
                """
                UPDATE users SET display_name = coalesce(\(displayName), display_name), email = coalesce(\(email), email),
                    avatar_url = coalesce(\(avatarURL), avatar_url), language = coalesce(\(language), language),
                    timezone = coalesce(\(timezone), timezone)
                WHERE id = \(actor) AND deleted_at IS NULL RETURNING \(unescaped: User.columns)
                """
            )
            guard let row = rows.first else { throw ServiceError.notFound("User \(actor)") }
            return try User(row: row)
        }
    }

    /// Operator: a user by id.
    package func getAsOperator(_ id: UserID) async throws -> User {
        try await runner.asOperator { connection in
            guard let row = try await connection.query("SELECT \(unescaped: User.columns) FROM users WHERE id = \(id)").first else {
                throw ServiceError.notFound("User \(id)")
            }
            return try User(row: row)
        }
    }

    /// Operator: every user that is not deleted, oldest first (not guests: nobody signs in as one).
    package func list(limit: Int = 1000) async throws -> [User] {
        try await runner.asOperator { connection in
            try await connection.query(
                "SELECT \(unescaped: User.columns) FROM users WHERE deleted_at IS NULL AND NOT is_guest ORDER BY created_at, id LIMIT \(limit)"
            ).map(User.init(row:))
        }
    }

    /// Operator: finds a user by id or email (case-insensitive), for `--as` and `--user`. A guest
    /// (who has no email) is found by id as a person in money (`--paid-by`, `--between`), and is
    /// nobody to act as: with `acting`, not found.
    package func resolve(_ reference: String, acting: Bool = false) async throws -> UserID {
        let reference = reference.trimmingCharacters(in: .whitespaces)
        return try await runner.asOperator { connection in
            let rows: PostgresRows
            if let id = UserID(reference) {
                rows = try await connection.query("SELECT id FROM users WHERE id = \(id) AND deleted_at IS NULL AND NOT (\(acting) AND is_guest)")
            } else if reference.contains("@") {
                // A NUL cannot be in a stored email (nor bound as text): nobody has it.
                guard !reference.unicodeScalars.contains("\u{0}") else { throw ServiceError.notFound("User \(reference.debugDescription)") }
                rows = try await connection.query(
                    "SELECT id FROM users WHERE lower(email) = lower(\(reference)) AND deleted_at IS NULL AND NOT is_guest ORDER BY created_at LIMIT 2"
                )
                if rows.count > 1 {
                    throw ServiceError.conflict("Several users have the email \(reference); name one by id.")
                }
            } else {
                throw ServiceError.invalidInput(field: "user", reason: "must be a user id (UUID) or an email address")
            }
            guard let row = rows.first else { throw ServiceError.notFound("User \(reference)") }
            return try row.decode("id", as: UserID.self)
        }
    }

    /// Another user's public profile (name and avatar; never the email or Apple id), for a
    /// user who shares a community with them (row-level security decides), or oneself.
    package func profile(_ id: UserID, as actor: UserID) async throws -> PublicProfile {
        try await runner.asUserReading(actor) { connection in
            guard
                let row = try await connection.query(
                    "SELECT id, display_name, avatar_url FROM users WHERE id = \(id) AND deleted_at IS NULL"
                ).first
            else { throw ServiceError.notFound("User \(id)") }
            return try PublicProfile(row: row)
        }
    }

    /// Whether `user` is an operator (`users.is_operator`).
    package func isOperator(_ user: UserID) async throws -> Bool {
        try await runner.asOperator { connection in
            try await connection.query("SELECT is_operator FROM users WHERE id = \(user) AND deleted_at IS NULL").first?.decode(
                "is_operator", as: Bool.self) ?? false
        }
    }

    /// Operator: makes `user` an operator or takes it back, on behalf of `actor`. Audit-logged.
    package func setOperator(_ user: UserID, _ isOperator: Bool, as actor: UserID) async throws -> User {
        try await runner.asOperator(actor) { connection in
            guard
                let row = try await connection.query(
                    "UPDATE users SET is_operator = \(isOperator) WHERE id = \(user) AND deleted_at IS NULL RETURNING \(unescaped: User.columns)"
                ).first
            else { throw ServiceError.notFound("User \(user)") }
            try await runner.audit(
                isOperator ? "operator.granted" : "operator.revoked", by: actor, community: nil, target: ("user", user.uuid), on: connection)
            return try User(row: row)
        }
    }
}
