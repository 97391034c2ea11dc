package import Foundation
import OrbitPostgres

/// What to do with a request that carries an `Idempotency-Key`.
package enum IdempotencyDecision: Sendable, Equatable {
    /// The key is new: run the request, then `completeIdempotentRequest` (or `abandon…`).
    case proceed
    /// The request ran before: send this response again.
    case replay(status: Int, body: Data)
    /// The first request with this key has not finished yet.
    case inProgress
    /// The key was used for a different request.
    case mismatch
}

/// Idempotency keys (the API's `Idempotency-Key` header): a request sent twice with the same key
/// runs once, and the second gets the first one's response.
package struct IdempotencyService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// Reserves `key` for `user`'s request (`requestHash` identifies method, path and body), or
    /// says what happened to the first request with it.
    package func begin(key: String, requestHash: String, lifetime: Duration, as user: UserID) async throws -> IdempotencyDecision {
        // 1 to 255 visible ASCII characters, as openapi.yaml says (a UUID fits).
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw ServiceError.invalidInput(field: "Idempotency-Key", reason: "must be 1 to 255 visible ASCII characters (a UUID)")
        }
        let now = runner.now()
        let expiresAt = now.addingTimeInterval(lifetime.seconds)
        return try await runner.asUser(user) { connection in
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
    package func complete(key: String, status: Int, body: Data, as user: UserID) async throws {
        try await runner.asUser(user) { connection in
            _ = try await connection.query(
                "UPDATE idempotency_keys SET status_code = \(status), response_body = \(body) WHERE user_id = \(user) AND key = \(key)"
            )
        }
    }

    /// Releases `key` after a request that failed without an answer worth replaying (a server
    /// error), so that a retry runs it again.
    package func abandon(key: String, as user: UserID) async throws {
        try await runner.asUser(user) { connection in
            _ = try await connection.query("DELETE FROM idempotency_keys WHERE user_id = \(user) AND key = \(key) AND status_code IS NULL")
        }
    }

    /// Deletes expired idempotency keys, `batchSize` rows per transaction; returns how many.
    package func purgeExpired(batchSize: Int = 1000) async throws -> Int {
        let now = runner.now()
        var total = 0
        while true {
            let deleted = try await runner.asOperator { connection in
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
