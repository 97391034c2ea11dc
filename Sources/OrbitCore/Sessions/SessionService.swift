package import Foundation
import OrbitPostgres

/// A refresh token as handed to a device: the token itself exists only here and on the device;
/// the database keeps its SHA-256.
package struct RefreshGrant: Sendable {
    package var userID: UserID
    package var token: String
    package var expiresAt: Date
}

/// Sessions (spec: Refresh Tokens): signing in with Apple, and refresh tokens that rotate on
/// every use; a token used twice signs out its whole family (someone else has a copy).
package struct SessionService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// Signs in with a verified Sign in with Apple identity: the user with that Apple id, or a
    /// new account (which needs an email, from the identity token or from the app).
    package func signIn(
        appleID: String, email: String?, displayName: String?, device: String?, refreshLifetime: Duration
    ) async throws -> (user: User, refresh: RefreshGrant) {
        let appleID = try Validate.text(appleID, field: "apple_id", limit: 255)
        let device = try device.map { try Validate.text($0, field: "device_name", limit: 100) }
        let existing = try await runner.asOperator { connection in
            try await connection.query(
                "SELECT \(unescaped: User.columns) FROM users WHERE apple_id = \(appleID) AND deleted_at IS NULL AND NOT is_guest"
            )
            .first.map(User.init(row:))
        }
        let user: User
        if let existing {
            user = existing
        } else {
            guard let email else {
                throw ServiceError.invalidInput(field: "email", reason: "is required on the first sign-in (the identity token carries none)")
            }
            let name = displayName ?? String(email.prefix { $0 != "@" })
            user = try await UserService(runner).create(email: email, displayName: name, appleID: appleID)
        }
        let grant = try await start(for: user.id, device: device, lifetime: refreshLifetime)
        return (user, grant)
    }

    /// A new refresh-token family for `user` (a sign-in on one device).
    package func start(for user: UserID, device: String?, lifetime: Duration) async throws -> RefreshGrant {
        let device = try device.map { try Validate.text($0, field: "device_name", limit: 100) }
        let token = SecretToken.random()
        let expiresAt = runner.now().addingTimeInterval(lifetime.seconds)
        try await runner.asUser(user) { connection in
            _ = try await connection.query(
                """
                INSERT INTO refresh_tokens (user_id, token_hash, device_name, expires_at)
                VALUES (\(user), encode(sha256(convert_to(\(token), 'UTF8')), 'hex'), \(device), \(expiresAt))
                """
            )
        }
        return RefreshGrant(userID: user, token: token, expiresAt: expiresAt)
    }

    /// Exchanges a refresh token for its successor. A token that was already used (or revoked
    /// because its family was) revokes every token of its family: someone else has a copy.
    package func rotate(_ token: String, lifetime: Duration) async throws -> RefreshGrant {
        guard SecretToken.hasShape(token) else { throw ServiceError.unauthenticated("The refresh token is not valid.") }
        let successor = SecretToken.random()
        let now = runner.now()
        let expiresAt = now.addingTimeInterval(lifetime.seconds)
        // Looked up as an operator: the token is the credential, there is no user yet.
        let outcome: Result<RefreshGrant, ServiceError> = try await runner.asOperator { connection in
            guard
                let row = try await connection.query(
                    """
                    SELECT id, user_id, family_id, device_name, expires_at, used_at, revoked_at FROM refresh_tokens
                    WHERE token_hash = encode(sha256(convert_to(\(token), 'UTF8')), 'hex') FOR UPDATE
                    """
                ).first
            else { return .failure(.unauthenticated("The refresh token is not valid.")) }
            let (id, user, family, device, expires, used, revoked) = try row.decode(
                (UUID, UserID, UUID, String?, Date, Date?, Date?).self
            )
            if used != nil || revoked != nil {
                try await connection.query(
                    "UPDATE refresh_tokens SET revoked_at = \(now) WHERE family_id = \(family) AND revoked_at IS NULL"
                )
                return .failure(.unauthenticated("The refresh token was already used; every session of that sign-in is now signed out."))
            }
            guard expires > now else { return .failure(.unauthenticated("The refresh token has expired.")) }
            try await connection.query("UPDATE refresh_tokens SET used_at = \(now), revoked_at = \(now) WHERE id = \(id)")
            try await connection.query(
                """
                INSERT INTO refresh_tokens (user_id, token_hash, device_name, expires_at, family_id)
                VALUES (\(user), encode(sha256(convert_to(\(successor), 'UTF8')), 'hex'), \(device), \(expiresAt), \(family))
                """
            )
            return .success(RefreshGrant(userID: user, token: successor, expiresAt: expiresAt))
        }
        // The family's revocation commits before the refusal is thrown.
        return try outcome.get()
    }

    /// Signs a device out: revokes the token's whole family. Unknown tokens are ignored, so
    /// signing out twice is not an error.
    package func revoke(_ token: String, deviceToken: String? = nil) async throws {
        // Not one this server could have made (a NUL, which text cannot hold, or any other
        // character): nothing to revoke, as for any unknown token.
        guard SecretToken.hasShape(token) else { return }
        // The phone signing out stops getting pushes: its device token goes too, if it is the
        // signed-in user's (an unknown or malformed one is ignored, like an unknown session).
        let device = try? deviceToken.map(DeviceService.validToken)
        let now = runner.now()
        try await runner.asOperator { connection in
            _ = try await connection.query(
                """
                WITH session AS (
                    SELECT family_id, user_id FROM refresh_tokens WHERE token_hash = encode(sha256(convert_to(\(token), 'UTF8')), 'hex')
                ),
                revoked AS (
                    UPDATE refresh_tokens SET revoked_at = \(now)
                    WHERE revoked_at IS NULL AND family_id IN (SELECT family_id FROM session)
                )
                DELETE FROM devices WHERE token = \(device ?? nil) AND user_id IN (SELECT user_id FROM session)
                """
            )
        }
    }
}
