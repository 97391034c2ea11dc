import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Parameters travel as typed values and come back unchanged")
struct ParameterRoundTripTests {
    /// Sends `value` as `$1`, casts it to `type` on the server, and decodes it back.
    private func roundTrip<Value: PostgresEncodable & PostgresDecodable>(
        _ value: Value,
        as type: String,
        on connection: PostgresConnection
    ) async throws -> Value {
        let rows = try await connection.query("SELECT \(value)::\(unescaped: type) AS value")
        return try rows.single().decode("value", as: Value.self)
    }

    @Test("a fragment spliced into a query keeps its parameters, renumbered after the query's own (two-digit ones too)")
    func fragments() async throws {
        let fragment: PostgresQuery = "(\(Int64(2)) + \(Int64(3)))"
        let query: PostgresQuery = "SELECT \(Int64(10)) * \(fragment) - \(Int64(1)) AS value"
        #expect(query.sql == "SELECT $1 * ($2 + $3) - $4 AS value")
        let eleven: PostgresQuery = "\(1) + \(2) + \(3) + \(4) + \(5) + \(6) + \(7) + \(8) + \(9) + \(10) + \(11)"
        let sum: PostgresQuery = "SELECT \(100) + \(eleven) + \(1000) AS value"
        #expect(sum.sql.hasSuffix("$11 + $12 + $13 AS value"))
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let product = try await connection.query(query).single().decode("value", as: Int64.self)
                #expect(product == 49)
                let total = try await connection.query(sum).single().decode("value", as: Int64.self)
                #expect(total == 1166)
            }
        }
    }

    @Test("integers at their limits")
    func integers() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                for value in [Int.min, -1, 0, 1, Int.max] {
                    let back1 = try await roundTrip(value, as: "bigint", on: connection)
                    #expect(back1 == value)
                }
                for value in [Int32.min, 0, Int32.max] {
                    let back2 = try await roundTrip(value, as: "integer", on: connection)
                    #expect(back2 == value)
                }
                for value in [Int16.min, 0, Int16.max] {
                    let back3 = try await roundTrip(value, as: "smallint", on: connection)
                    #expect(back3 == value)
                }
                let back4 = try await roundTrip(Int64.min, as: "bigint", on: connection)
                #expect(back4 == Int64.min)
            }
        }
    }

    @Test("strings: empty, unicode, quotes and SQL are stored literally")
    func strings() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let values = [
                    "", " ", "plain", "Zoë 🏈 日本語 مرحبا", "it's \"quoted\" \\ back\\slash",
                    "'; DROP TABLE users; --", "$1", "line\nbreak\ttab", String(repeating: "x", count: 100_000),
                ]
                for value in values {
                    let back5 = try await roundTrip(value, as: "text", on: connection)
                    #expect(back5 == value)
                }
            }
        }
    }

    @Test("an injection attempt is stored as text and the table survives")
    func injectionStoredLiterally() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                try await connection.query("CREATE TABLE notes (id bigint PRIMARY KEY, body text NOT NULL)")
                let hostile = "x'); DROP TABLE notes; --"
                try await connection.query("INSERT INTO notes (id, body) VALUES (\(1), \(hostile))")
                let rows = try await connection.query("SELECT body FROM notes WHERE body = \(hostile)")
                #expect(try rows.single().decode("body", as: String.self) == hostile)
                let count = try await connection.query("SELECT count(*) AS n FROM notes").single().decode("n", as: Int.self)
                #expect(count == 1)
            }
        }
    }

    @Test("NULL is nil and the empty string is not NULL")
    func nullVersusEmpty() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let none: String? = nil
                let rows = try await connection.query(
                    "SELECT \(none)::text AS a, \("")::text AS b, \(none)::text IS NULL AS a_null, \("")::text IS NULL AS b_null"
                )
                let row = try rows.single()
                #expect(try row.decode("a", as: String?.self) == nil)
                #expect(try row.decode("b", as: String?.self) == "")
                #expect(try row.decode("a_null", as: Bool.self))
                #expect(try row.decode("b_null", as: Bool.self) == false)
                #expect(row.isNull("a"))
                #expect(!row.isNull("b"))
                let noInt: Int? = nil
                let intRow = try await connection.query("SELECT \(noInt)::bigint AS n").single()
                #expect(try intRow.decode("n", as: Int?.self) == nil)
            }
        }
    }

    @Test("booleans, doubles including infinities and NaN")
    func boolsAndDoubles() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let back6 = try await roundTrip(true, as: "boolean", on: connection)
                #expect(back6 == true)
                let back7 = try await roundTrip(false, as: "boolean", on: connection)
                #expect(back7 == false)
                for value in [0.0, -0.0, 0.1, -1.5e-300, 1.7976931348623157e308, .infinity, -.infinity] {
                    let back8 = try await roundTrip(value, as: "double precision", on: connection)
                    #expect(back8 == value)
                }
                let back9 = try await roundTrip(Double.nan, as: "double precision", on: connection)
                #expect(back9.isNaN)
                let back10 = try await roundTrip(Float(1.25), as: "real", on: connection)
                #expect(back10 == 1.25)
            }
        }
    }

    @Test("UUIDs")
    func uuids() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let id = UUID()
                let back11 = try await roundTrip(id, as: "uuid", on: connection)
                #expect(back11 == id)
                let text = try await connection.query("SELECT \(id)::text AS t").single().decode("t", as: String.self)
                #expect(text == id.uuidString.lowercased())
            }
        }
    }

    @Test("dates as timestamptz with microseconds, before 1970 and whatever the session time zone")
    func dates() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                try await connection.query("SET TimeZone TO 'America/St_Johns'")  // a -03:30 offset
                let values = [
                    Date(timeIntervalSince1970: 0),
                    Date(timeIntervalSince1970: 1_795_000_000.123456),
                    Date(timeIntervalSince1970: -2_208_988_800.5),  // 1900
                    Date(timeIntervalSince1970: -62_135_596_800),  // 0001-01-01
                ]
                for value in values {
                    let back12 = try await roundTrip(value, as: "timestamptz", on: connection)
                    #expect(abs(back12.timeIntervalSince1970 - value.timeIntervalSince1970) < 0.000_001)
                }
                let epoch = try await connection.query("SELECT extract(epoch FROM \(Date(timeIntervalSince1970: 86_400.25)))::float8 AS e")
                #expect(try epoch.single().decode("e", as: Double.self) == 86_400.25)
                let infinite = try await connection.query("SELECT 'infinity'::timestamptz AS a, '-infinity'::timestamptz AS b").single()
                #expect(try infinite.decode("a", as: Date.self) == .distantFuture)
                #expect(try infinite.decode("b", as: Date.self) == .distantPast)
                let day = try await connection.query("SELECT DATE '2026-03-08' AS d").single().decode("d", as: Date.self)
                #expect(day == Date(timeIntervalSince1970: 1_772_928_000))
            }
        }
    }

    @Test("bytea with zero bytes, empty bytea, and bytea in escape output format")
    func bytes() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let values = [Data(), Data([0]), Data([0, 1, 2, 0, 255, 0x5c, 0x27]), Data((0..<4096).map { UInt8($0 % 256) })]
                for value in values {
                    let back13 = try await roundTrip(value, as: "bytea", on: connection)
                    #expect(back13 == value)
                    let length = try await connection.query("SELECT length(\(value)) AS n").single().decode("n", as: Int.self)
                    #expect(length == value.count)
                }
                try await connection.query("SET bytea_output TO escape")
                let value = Data([0, 1, 0x5c, 200, 65])
                let back14 = try await roundTrip(value, as: "bytea", on: connection)
                #expect(back14 == value)
            }
        }
    }

    @Test("JSON documents")
    func json() async throws {
        struct Settings: Codable, Equatable {
            var allowMemberPosts: Bool
            var timezone: String
        }
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let settings = Settings(allowMemberPosts: true, timezone: "Europe/Berlin")
                let document = try PostgresJSON(encoding: settings)
                let row = try await connection.query(
                    "SELECT \(document) AS doc, \(document)->>'timezone' AS tz, \(document)::json AS plain"
                ).single()
                #expect(try row.decode("doc", as: PostgresJSON.self).decode(Settings.self) == settings)
                #expect(try row.decode("tz", as: String.self) == "Europe/Berlin")
                #expect(try row.decode("plain", as: PostgresJSON.self).decode(Settings.self) == settings)
            }
        }
    }

    @Test("arrays of integers, strings (with quotes, commas, NULL-looking text), UUIDs and bytes")
    func arrays() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let back15 = try await roundTrip([1, -2, Int.max], as: "bigint[]", on: connection)
                #expect(back15 == [1, -2, Int.max])
                let back16 = try await roundTrip([Int](), as: "bigint[]", on: connection)
                #expect(back16 == [])
                let strings = ["a", "", "NULL", "with,comma", "with \"quote\"", "back\\slash", "{brace}", " spaced "]
                let back17 = try await roundTrip(strings, as: "text[]", on: connection)
                #expect(back17 == strings)
                let ids = [UUID(), UUID()]
                let back18 = try await roundTrip(ids, as: "uuid[]", on: connection)
                #expect(back18 == ids)
                let blobs = [Data([0, 1]), Data()]
                let back19 = try await roundTrip(blobs, as: "bytea[]", on: connection)
                #expect(back19 == blobs)
                let back20 = try await roundTrip([true, false], as: "boolean[]", on: connection)
                #expect(back20 == [true, false])
                let contains = try await connection.query("SELECT 3 = ANY(\([1, 2, 3])) AS yes").single()
                #expect(try contains.decode("yes", as: Bool.self))
                let unnest = try await connection.query("SELECT count(*) AS n FROM unnest(\(strings)::text[])").single()
                #expect(try unnest.decode("n", as: Int.self) == strings.count)
            }
        }
    }

    @Test("a string holding a NUL byte is refused before it reaches the server")
    func nulByteRefused() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let error = await #expect(throws: PostgresError.self) {
                    try await connection.query("SELECT \("a\u{0}b")::text AS t")
                }
                #expect(error?.code == .encoding)
                // The connection is still fine.
                let one = try await connection.query("SELECT 1 AS one").single().decode("one", as: Int.self)
                #expect(one == 1)
            }
        }
    }
}
