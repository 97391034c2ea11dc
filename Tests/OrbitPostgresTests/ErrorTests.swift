import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Server errors carry the server's fields and never leak values or passwords")
struct ErrorTests {
    @Test("a unique violation carries SQLSTATE 23505, the constraint, table and detail")
    func uniqueViolation() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                try await connection.query("CREATE TABLE accounts (id bigint PRIMARY KEY, email text CONSTRAINT accounts_email_key UNIQUE)")
                try await connection.query("INSERT INTO accounts VALUES (\(1), \("zoe@example.com"))")
                let error = await #expect(throws: PostgresError.self) {
                    try await connection.query("INSERT INTO accounts VALUES (\(2), \("zoe@example.com"))")
                }
                #expect(error?.code == .server)
                #expect(error?.sqlState == "23505")
                #expect(error?.isUniqueViolation == true)
                #expect(error?.constraint == "accounts_email_key")
                #expect(error?.table == "accounts")
                #expect(error?.severity == "ERROR")
                #expect(error?.detail?.contains("zoe@example.com") == true)
                // The description is for logs: no row values from the detail.
                #expect(error.map { "\($0)" }?.contains("zoe@example.com") == false)
                #expect(error.map { "\($0)" }?.contains("accounts_email_key") == true)
                // After the error the connection keeps working.
                #expect(try await connection.query("SELECT count(*) AS n FROM accounts").single().decode("n", as: Int.self) == 1)
            }
        }
    }

    @Test("named helpers match their conditions")
    func namedConditions() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                try await connection.query("CREATE TABLE parent (id int PRIMARY KEY)")
                try await connection.query("CREATE TABLE child (id int PRIMARY KEY, parent_id int REFERENCES parent, n int NOT NULL CHECK (n > 0))")
                let fk = await #expect(throws: PostgresError.self) { try await connection.query("INSERT INTO child VALUES (1, 9, 1)") }
                #expect(fk?.isForeignKeyViolation == true)
                let check = await #expect(throws: PostgresError.self) { try await connection.query("INSERT INTO child VALUES (1, NULL, 0)") }
                #expect(check?.isCheckViolation == true)
                let notNull = await #expect(throws: PostgresError.self) { try await connection.query("INSERT INTO child VALUES (1, NULL, NULL)") }
                #expect(notNull?.isNotNullViolation == true)
                #expect(notNull?.column == "n")
                let syntax = await #expect(throws: PostgresError.self) { try await connection.query("SELEC 1") }
                #expect(syntax?.sqlState == "42601")
                #expect(syntax?.position == 1)
                let raised = await #expect(throws: PostgresError.self) {
                    try await connection.executeScript("DO $$ BEGIN RAISE EXCEPTION 'nope' USING HINT = 'try again'; END $$")
                }
                #expect(raised?.isRaiseException == true)
                #expect(raised?.hint == "try again")
            }
        }
    }

    @Test("a data exception's description leaves out the rejected value")
    func dataExceptionRedacted() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let error = await #expect(throws: PostgresError.self) {
                    try await connection.query("SELECT \("secret-token-123")::int")
                }
                #expect(error?.sqlState == "22P02")
                #expect(error?.message.contains("secret-token-123") == true)
                #expect(error.map { "\($0)" }?.contains("secret-token-123") == false)
            }
        }
    }

    @Test("bound values never appear in a query's description")
    func bindsRedacted() {
        let query: PostgresQuery = "SELECT * FROM users WHERE email = \("zoe@example.com") AND id = \(42)"
        #expect(query.sql == "SELECT * FROM users WHERE email = $1 AND id = $2")
        #expect(!"\(query)".contains("zoe@example.com"))
        #expect("\(query)".contains("****"))
    }
}
