import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@testable import OrbitCore

@Suite("Transactions aborted by serialization failures and deadlocks are retried")
struct RetryTests {
    static let abort40001 = "DO $$ BEGIN RAISE EXCEPTION 'simulated' USING ERRCODE = '40001'; END $$"
    static let abort40P01 = "DO $$ BEGIN RAISE EXCEPTION 'simulated' USING ERRCODE = '40P01'; END $$"

    @Test("a transaction aborted by a serialization failure or a deadlock runs again, from the start")
    func aTransactionAbortedByASerializationFailure() async throws {
        try await withServices { services, database in
            let user = try await services.users.create(email: "u@example.com", displayName: "U").id
            var attempts = 0
            let result = try await services.runner.asUser(user) { connection in
                attempts += 1
                try await connection.query("INSERT INTO family_members (user_id, name) VALUES (\(user), \("Kid \(attempts)"))")
                if attempts == 1 { try await connection.executeScript(Self.abort40001) }
                if attempts == 2 { try await connection.executeScript(Self.abort40P01) }
                return attempts
            }
            #expect(result == 3)
            // Only the last attempt's row exists.
            let names = try await database.withConnection { connection in
                try await connection.query("SELECT name FROM family_members").map { try $0.decode("name", as: String.self) }
            }
            #expect(names == ["Kid 3"])
        }
    }

    @Test("other errors are not retried, and retries stop after four attempts")
    func otherErrorsAreNotRetriedAndRetries() async throws {
        try await withServices { services, _ in
            let user = try await services.users.create(email: "u@example.com", displayName: "U").id
            var attempts = 0
            // After the last attempt the failure reaches the caller as a domain error (503 over HTTP).
            let busy = await #expect(throws: ServiceError.self) {
                try await services.runner.asUser(user) { connection in
                    attempts += 1
                    try await connection.executeScript(Self.abort40001)
                }
            }
            #expect(busy?.code == .unavailable)
            #expect(attempts == 4)
            attempts = 0
            await #expect(throws: (any Error).self) {
                try await services.runner.asUser(user) { connection in
                    attempts += 1
                    try await connection.executeScript("DO $$ BEGIN RAISE EXCEPTION 'no' USING ERRCODE = '22023'; END $$")
                }
            }
            #expect(attempts == 1)
            // A row that is never there (a bug, not a race): four attempts, then the error itself (500).
            attempts = 0
            let missing = await #expect(throws: PostgresError.self) {
                try await services.runner.asUser(user) { connection in
                    attempts += 1
                    _ = try await connection.query("SELECT 1 AS one WHERE false").single()
                }
            }
            #expect(missing?.code == .noRow && attempts == 4, "\(String(describing: missing)), \(attempts)")
        }
    }
}
