import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Decoding rows by column name and index")
struct DecodingTests {
    @Test("columns decode by name and by index, and positionally as a tuple")
    func byNameAndIndex() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let row = try await connection.query("SELECT 7::int AS id, 'seven' AS name, NULL::text AS nickname").single()
                #expect(try row.decode("id", as: Int.self) == 7)
                #expect(try row.decode(1, as: String.self) == "seven")
                let (id, name, nickname) = try row.decode((Int, String, String?).self)
                #expect(id == 7 && name == "seven" && nickname == nil)
                #expect(row.rows.columns.map(\.name) == ["id", "name", "nickname"])
                #expect(row.rows.columns.map(\.type) == [.int4, .text, .text])
            }
        }
    }

    @Test("a wrong type names the column, the Swift type and the column's type")
    func wrongType() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let row = try await connection.query("SELECT 'abc'::text AS title").single()
                let error = #expect(throws: PostgresError.self) { try row.decode("title", as: Int.self) }
                #expect(error?.code == .decoding)
                #expect(error?.column == "title")
                #expect(error?.message.contains("\"title\"") == true)
                #expect(error?.message.contains("Int") == true)
                #expect(error?.message.contains("text") == true)
            }
        }
    }

    @Test("NULL into a non-optional is an error naming the column; a missing column lists the real ones")
    func nullAndMissing() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let row = try await connection.query("SELECT NULL::bigint AS amount").single()
                let nullError = #expect(throws: PostgresError.self) { try row.decode("amount", as: Int.self) }
                #expect(nullError?.message.contains("NULL") == true)
                #expect(nullError?.column == "amount")
                let missing = #expect(throws: PostgresError.self) { try row.decode("amont", as: Int?.self) }
                #expect(missing?.message.contains("amount") == true)
                #expect(throws: PostgresError.self) { try row.decode(5, as: Int?.self) }
            }
        }
    }

    @Test("narrow integers reject values out of their range")
    func outOfRange() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let row = try await connection.query("SELECT 40000::int AS n").single()
                #expect(try row.decode("n", as: Int.self) == 40000)
                #expect(throws: PostgresError.self) { try row.decode("n", as: Int16.self) }
            }
        }
    }

    @Test("command tags and affected row counts")
    func commandTag() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                try await connection.query("CREATE TABLE t (n int)")
                let insert = try await connection.query("INSERT INTO t SELECT generate_series(1, 3)")
                #expect(insert.commandTag == "INSERT 0 3")
                #expect(insert.affectedRows == 3)
                #expect(insert.isEmpty)
                let update = try await connection.query("UPDATE t SET n = n + 1 WHERE n > \(1)")
                #expect(update.affectedRows == 2)
            }
        }
    }
}
