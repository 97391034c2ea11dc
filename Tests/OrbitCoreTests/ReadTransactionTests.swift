import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@testable import OrbitCore

@Suite("Stale-tolerant reads run READ ONLY, the same transaction through the API or not")
struct ReadTransactionTests {
    static func settings(on connection: PostgresConnection) async throws -> (readOnly: String, address: String?, user: String?) {
        let row = try await connection.query(
            """
            SELECT current_setting('transaction_read_only') AS read_only,
                   nullif(current_setting('app.client_address', true), '') AS address,
                   current_setting('app.current_user_id', true) AS user_id
            """
        ).single()
        return (try row.decode("read_only"), try row.decode("address"), try row.decode("user_id"))
    }

    @Test("a read on the primary is READ ONLY and carries no client address; a request's writes still do")
    func readsAreReadOnlyWithoutTheClientAddress() async throws {
        try await withServices { services, _ in
            let user = try await services.users.create(email: "r@example.com", displayName: "R").id
            try await RequestRunner.$clientAddress.withValue("203.0.113.9") {
                let read = try await services.runner.asUserReading(user) { try await Self.settings(on: $0) }
                #expect(read.readOnly == "on")
                #expect(read.address == nil)
                #expect(read.user == user.description)
                // PostgreSQL refuses the write (25006 read_only_sql_transaction), as a domain error.
                let refused = await #expect(throws: ServiceError.self) {
                    try await services.runner.asUserReading(user) { connection in
                        try await connection.query("INSERT INTO family_members (user_id, name) VALUES (\(user), \("Kid"))")
                    }
                }
                #expect(refused?.code == .unavailable && refused?.message.contains("read-only transaction") == true)
                // A write of the same request: read-write, with the address for the audit log.
                let write = try await services.runner.asUser(user) { try await Self.settings(on: $0) }
                #expect(write.readOnly == "off")
                #expect(write.address == "203.0.113.9")
            }
        }
    }
}
