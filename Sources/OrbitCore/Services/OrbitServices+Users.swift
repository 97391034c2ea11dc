import Foundation
import OrbitPostgres

extension OrbitServices {
    /// Creates an account (sign-up: the new user is the acting user).
    /// - Parameter appleID: Sign in with Apple's stable id; a local id is generated when nil.
    public func createUser(email: String, displayName: String, appleID: String? = nil) async throws -> User {
        let email = try Validate.email(email)
        let displayName = try Validate.text(displayName, field: "display_name", limit: 100)
        let appleID = try Validate.text(appleID ?? "local.\(UUID().uuidString.lowercased())", field: "apple_id", limit: 255)
        let id = UserID.random()
        return try await asUser(id) { connection in
            try await connection.query(
                "INSERT INTO users (id, apple_id, email, display_name) VALUES (\(id), \(appleID), \(email), \(displayName))"
            )
            return try User(row: try await connection.query("SELECT \(unescaped: User.columns) FROM users WHERE id = \(id)").single())
        }
    }

    /// A user the acting user may see (themselves, or someone they share a community with).
    public func user(_ id: UserID, as actor: UserID) async throws -> User {
        try await asUser(actor) { connection in
            guard let row = try await connection.query("SELECT \(unescaped: User.columns) FROM users WHERE id = \(id) AND deleted_at IS NULL").first
            else { throw ServiceError.notFound("User \(id)") }
            return try User(row: row)
        }
    }

    /// Changes the acting user's own profile; nil leaves a field as it is.
    public func updateProfile(displayName: String? = nil, email: String? = nil, avatarURL: String? = nil, as actor: UserID) async throws -> User {
        let displayName = try displayName.map { try Validate.text($0, field: "display_name", limit: 100) }
        let email = try email.map(Validate.email)
        let avatarURL = try Validate.url(avatarURL, field: "avatar_url")
        return try await asUser(actor) { connection in
            let rows = try await connection.query(
                """
                UPDATE users SET display_name = coalesce(\(displayName), display_name), email = coalesce(\(email), email),
                    avatar_url = coalesce(\(avatarURL), avatar_url)
                WHERE id = \(actor) AND deleted_at IS NULL RETURNING \(unescaped: User.columns)
                """
            )
            guard let row = rows.first else { throw ServiceError.notFound("User \(actor)") }
            return try User(row: row)
        }
    }

    /// Operator: a user by id.
    public func userAsOperator(_ id: UserID) async throws -> User {
        try await asOperator { connection in
            guard let row = try await connection.query("SELECT \(unescaped: User.columns) FROM users WHERE id = \(id)").first else {
                throw ServiceError.notFound("User \(id)")
            }
            return try User(row: row)
        }
    }

    /// Operator: every user that is not deleted, oldest first.
    public func listUsers(limit: Int = 1000) async throws -> [User] {
        try await asOperator { connection in
            try await connection.query(
                "SELECT \(unescaped: User.columns) FROM users WHERE deleted_at IS NULL ORDER BY created_at, id LIMIT \(limit)"
            ).map(User.init(row:))
        }
    }

    /// Operator: finds a user by id or email (case-insensitive), for `--as` and `--user`.
    public func resolveUser(_ reference: String) async throws -> UserID {
        let reference = reference.trimmingCharacters(in: .whitespaces)
        return try await asOperator { connection in
            let rows: PostgresRows
            if let id = UserID(reference) {
                rows = try await connection.query("SELECT id FROM users WHERE id = \(id) AND deleted_at IS NULL")
            } else if reference.contains("@") {
                rows = try await connection.query(
                    "SELECT id FROM users WHERE lower(email) = lower(\(reference)) AND deleted_at IS NULL ORDER BY created_at LIMIT 2"
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
}

extension OrbitServices {
    /// Adds a dependent the acting user manages.
    public func addFamilyMember(name: String, as actor: UserID) async throws -> FamilyMember {
        let name = try Validate.text(name, field: "name", limit: 100)
        return try await asUser(actor) { connection in
            try FamilyMember(
                row: try await connection.query(
                    "INSERT INTO family_members (user_id, name) VALUES (\(actor), \(name)) RETURNING \(unescaped: FamilyMember.columns)"
                ).single()
            )
        }
    }

    /// Renames one of the acting user's dependents.
    public func renameFamilyMember(_ id: FamilyMemberID, to name: String, as actor: UserID) async throws -> FamilyMember {
        let name = try Validate.text(name, field: "name", limit: 100)
        return try await asUser(actor) { connection in
            guard
                let row = try await connection.query(
                    "UPDATE family_members SET name = \(name) WHERE id = \(id) AND user_id = \(actor) RETURNING \(unescaped: FamilyMember.columns)"
                ).first
            else { throw ServiceError.notFound("Family member \(id)") }
            return try FamilyMember(row: row)
        }
    }

    /// Removes one of the acting user's dependents (and their RSVPs).
    public func removeFamilyMember(_ id: FamilyMemberID, as actor: UserID) async throws {
        try await asUser(actor) { connection in
            let deleted = try await connection.query("DELETE FROM family_members WHERE id = \(id) AND user_id = \(actor)").affectedRows
            guard deleted == 1 else { throw ServiceError.notFound("Family member \(id)") }
        }
    }

    /// The dependents of `user` the acting user may see: their own, or those of people they
    /// share a community with.
    public func familyMembers(of user: UserID? = nil, as actor: UserID) async throws -> [FamilyMember] {
        try await asUser(actor) { connection in
            try await connection.query(
                "SELECT \(unescaped: FamilyMember.columns) FROM family_members WHERE user_id = \(user ?? actor) ORDER BY created_at, id"
            ).map(FamilyMember.init(row:))
        }
    }
}
