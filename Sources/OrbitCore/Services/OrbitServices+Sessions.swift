public import Foundation
import OrbitPostgres

/// A refresh token as handed to a device: the token itself exists only here and on the device;
/// the database keeps its SHA-256.
public struct RefreshGrant: Sendable {
    public var userID: UserID
    public var token: String
    public var expiresAt: Date
}

extension OrbitServices {
    /// Signs in with a verified Sign in with Apple identity: the user with that Apple id, or a
    /// new account (which needs an email, from the identity token or from the app).
    public func signIn(
        appleID: String, email: String?, displayName: String?, device: String?, refreshLifetime: Duration
    ) async throws -> (user: User, refresh: RefreshGrant) {
        let appleID = try Validate.text(appleID, field: "apple_id", limit: 255)
        let device = try device.map { try Validate.text($0, field: "device_name", limit: 100) }
        let existing = try await asOperator { connection in
            try await connection.query("SELECT \(unescaped: User.columns) FROM users WHERE apple_id = \(appleID) AND deleted_at IS NULL")
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
            user = try await createUser(email: email, displayName: name, appleID: appleID)
        }
        let grant = try await startSession(for: user.id, device: device, lifetime: refreshLifetime)
        return (user, grant)
    }

    /// A new refresh-token family for `user` (a sign-in on one device).
    public func startSession(for user: UserID, device: String?, lifetime: Duration) async throws -> RefreshGrant {
        let device = try device.map { try Validate.text($0, field: "device_name", limit: 100) }
        let token = Self.newRefreshToken()
        let expiresAt = now().addingTimeInterval(lifetime.seconds)
        try await asUser(user) { connection in
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
    public func rotateRefreshToken(_ token: String, lifetime: Duration) async throws -> RefreshGrant {
        let successor = Self.newRefreshToken()
        let now = now()
        let expiresAt = now.addingTimeInterval(lifetime.seconds)
        // Looked up as an operator: the token is the credential, there is no user yet.
        let outcome: Result<RefreshGrant, ServiceError> = try await asOperator { connection in
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
    public func revokeRefreshToken(_ token: String) async throws {
        let now = now()
        try await asOperator { connection in
            _ = try await connection.query(
                """
                UPDATE refresh_tokens SET revoked_at = \(now)
                WHERE revoked_at IS NULL AND family_id IN (
                    SELECT family_id FROM refresh_tokens WHERE token_hash = encode(sha256(convert_to(\(token), 'UTF8')), 'hex'))
                """
            )
        }
    }

    /// 32 random bytes, base64url without padding (43 characters).
    static func newRefreshToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

/// What to do with a request that carries an `Idempotency-Key`.
public enum IdempotencyDecision: Sendable, Equatable {
    /// The key is new: run the request, then `completeIdempotentRequest` (or `abandon…`).
    case proceed
    /// The request ran before: send this response again.
    case replay(status: Int, body: Data)
    /// The first request with this key has not finished yet.
    case inProgress
    /// The key was used for a different request.
    case mismatch
}

extension OrbitServices {
    /// Reserves `key` for `user`'s request (`requestHash` identifies method, path and body), or
    /// says what happened to the first request with it.
    public func beginIdempotentRequest(key: String, requestHash: String, lifetime: Duration, as user: UserID) async throws -> IdempotencyDecision {
        let key = try Validate.text(key, field: "Idempotency-Key", limit: 255)
        let now = now()
        let expiresAt = now.addingTimeInterval(lifetime.seconds)
        return try await asUser(user) { connection in
            try await connection.query("DELETE FROM idempotency_keys WHERE user_id = \(user) AND key = \(key) AND expires_at <= \(now)")
            let inserted = try await connection.query(
                """
                INSERT INTO idempotency_keys (user_id, key, request_hash, expires_at) VALUES (\(user), \(key), \(requestHash), \(expiresAt))
                ON CONFLICT (user_id, key) DO NOTHING RETURNING key
                """
            )
            if inserted.first != nil { return .proceed }
            let row = try await connection.query(
                "SELECT request_hash, status_code, response_body FROM idempotency_keys WHERE user_id = \(user) AND key = \(key)"
            ).single()
            let (hash, status, body) = try row.decode((String, Int?, Data?).self)
            guard hash == requestHash else { return .mismatch }
            guard let status, let body else { return .inProgress }
            return .replay(status: status, body: body)
        }
    }

    /// Stores the response to replay for `key`.
    public func completeIdempotentRequest(key: String, status: Int, body: Data, as user: UserID) async throws {
        try await asUser(user) { connection in
            _ = try await connection.query(
                "UPDATE idempotency_keys SET status_code = \(status), response_body = \(body) WHERE user_id = \(user) AND key = \(key)"
            )
        }
    }

    /// Releases `key` after a request that failed without an answer worth replaying (a server
    /// error), so that a retry runs it again.
    public func abandonIdempotentRequest(key: String, as user: UserID) async throws {
        try await asUser(user) { connection in
            _ = try await connection.query("DELETE FROM idempotency_keys WHERE user_id = \(user) AND key = \(key) AND status_code IS NULL")
        }
    }
}

extension OrbitServices {
    /// Deletes expired idempotency keys, `batchSize` rows per transaction; returns how many.
    public func purgeExpiredIdempotencyKeys(batchSize: Int = 1000) async throws -> Int {
        let now = now()
        var total = 0
        while true {
            let deleted = try await asOperator { connection in
                try await connection.query(
                    """
                    DELETE FROM idempotency_keys WHERE ctid = ANY(ARRAY(
                        SELECT ctid FROM idempotency_keys WHERE expires_at <= \(now) LIMIT \(batchSize)))
                    """
                ).affectedRows ?? 0
            }
            total += deleted
            if deleted < batchSize { return total }
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
