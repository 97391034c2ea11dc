import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Results arrive in binary from query and pipeline, in text from executeScript, and decode alike")
struct BinaryDecodingTests {
    /// Reads only the format a value arrived in.
    private struct Format: PostgresDecodable {
        var format: PostgresFormat
        init(from value: PostgresValue) { format = value.format }
    }

    /// The text path reads ISO dates, and the text forms compared with are PostgreSQL's defaults:
    /// set them in the session, so the suite holds against a server configured otherwise too.
    private static let defaultTextSettings = "SET DateStyle TO ISO; SET IntervalStyle TO postgres; SET extra_float_digits TO 1"

    /// Selects `expression` through `query` (binary) and `executeScript` (text), checks that both
    /// decode to the same value and returns it.
    private func decodeBothWays<Value: PostgresDecodable & Equatable>(
        _ expression: String,
        as type: Value.Type,
        on connection: PostgresConnection,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Value {
        let sql = "SELECT \(expression) AS value"
        let binary = try await connection.query(PostgresQuery(unsafeSQL: sql)).single()
        let text = try await connection.executeScript(sql).single()
        #expect(try binary.decode(0, as: Format.self).format == .binary, sourceLocation: sourceLocation)
        #expect(try text.decode(0, as: Format.self).format == .text, sourceLocation: sourceLocation)
        let fromBinary = try binary.decode(0, as: Value.self)
        #expect(try text.decode(0, as: Value.self) == fromBinary, "\(expression)", sourceLocation: sourceLocation)
        return fromBinary
    }

    @Test("query and pipeline ask for binary, with and without the statement cache; executeScript gets text")
    func formats() async throws {
        try await withTestDatabase { database in
            for capacity in [0, 16] {
                var configuration = database.configuration
                configuration.statementCacheCapacity = capacity
                try await PostgresConnection.withConnection(configuration) { connection in
                    let queried = try await connection.query("SELECT 1::int AS a, 'x'::text AS b").single()
                    #expect(try queried.decode(0, as: Format.self).format == .binary)
                    #expect(try queried.decode(1, as: Format.self).format == .binary)
                    let batch = try await connection.pipeline(["SELECT \(1) AS a", "SELECT now() AS b"])
                    #expect(try batch.map { try $0.single().decode(0, as: Format.self).format } == [.binary, .binary])
                    let script = try await connection.executeScript("SELECT 1::int AS a").single()
                    #expect(try script.decode(0, as: Format.self).format == .text)
                }
            }
        }
    }

    @Test("integers, floats, numerics, booleans, UUIDs, bytes and JSON decode the same from binary and text")
    func scalars() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                try await connection.executeScript(Self.defaultTextSettings)
                #expect(try await decodeBothWays("(-32768)::int2", as: Int16.self, on: connection) == .min)
                #expect(try await decodeBothWays("2147483647::int4", as: Int32.self, on: connection) == .max)
                #expect(try await decodeBothWays("(-9223372036854775808)::int8", as: Int64.self, on: connection) == .min)
                #expect(try await decodeBothWays("7::int2", as: Int.self, on: connection) == 7)
                #expect(try await decodeBothWays("4294967295::oid", as: Int64.self, on: connection) == 4_294_967_295)
                #expect(try await decodeBothWays("1.25::float4", as: Float.self, on: connection) == 1.25)
                // Text reads the digits `0.1`; binary reads the real's exact value, which is what is stored.
                let real = try await connection.query("SELECT 0.1::float4 AS r").single()
                #expect(try real.decode("r", as: Double.self) == Double(Float(0.1)))
                #expect(try await decodeBothWays("'-Infinity'::float8", as: Double.self, on: connection) == -.infinity)
                #expect(try await decodeBothWays("5e-324::float8", as: Double.self, on: connection) == 5e-324)
                #expect(try await decodeBothWays("42::int8", as: Double.self, on: connection) == 42)
                #expect(try await decodeBothWays("0::numeric", as: Double.self, on: connection) == 0)
                #expect(try await decodeBothWays("(-1.5)::numeric", as: Double.self, on: connection) == -1.5)
                #expect(try await decodeBothWays("0.0001::numeric", as: Double.self, on: connection) == 0.0001)
                #expect(
                    try await decodeBothWays("12345678901234567890.123::numeric", as: Double.self, on: connection)
                        == 12_345_678_901_234_567_890.123)
                #expect(try await decodeBothWays("'Infinity'::numeric", as: Double.self, on: connection) == .infinity)
                let notANumber = try await connection.query("SELECT 'NaN'::numeric AS n, 'NaN'::float8 AS f").single()
                #expect(try notANumber.decode("n", as: Double.self).isNaN)
                #expect(try notANumber.decode("f", as: Double.self).isNaN)
                #expect(try notANumber.decode("n", as: String.self) == "NaN")
                #expect(try await decodeBothWays("true", as: Bool.self, on: connection) == true)
                #expect(try await decodeBothWays("false", as: Bool.self, on: connection) == false)
                let id = try #require(UUID(uuidString: "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"))
                #expect(try await decodeBothWays("'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid", as: UUID.self, on: connection) == id)
                #expect(try await decodeBothWays("'\\x00ff5c27'::bytea", as: Data.self, on: connection) == Data([0, 255, 0x5c, 0x27]))
                #expect(try await decodeBothWays("''::bytea", as: Data.self, on: connection) == Data())
                let json = try await decodeBothWays("'{\"b\": [1, 2], \"a\": null}'::jsonb", as: PostgresJSON.self, on: connection)
                #expect(json.text == "{\"a\": null, \"b\": [1, 2]}")
                let plain = try await decodeBothWays("'{\"b\":1}'::json", as: PostgresJSON.self, on: connection)
                #expect(plain.text == "{\"b\":1}")
                #expect(try await decodeBothWays("'ab'::char(4)", as: String.self, on: connection) == "ab  ")
                #expect(try await decodeBothWays("'Zoë 🏈'::varchar", as: String.self, on: connection) == "Zoë 🏈")
                #expect(try await decodeBothWays("'pg_class'::name", as: String.self, on: connection) == "pg_class")
                #expect(try await decodeBothWays("'unknown literal'", as: String.self, on: connection) == "unknown literal")
            }
        }
    }

    @Test("timestamps, timestamps without a zone and dates decode the same from binary and ISO text")
    func dates() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                try await connection.executeScript(Self.defaultTextSettings + "; SET TimeZone TO 'America/St_Johns'")
                let instant = try await decodeBothWays("TIMESTAMPTZ '2026-11-23 18:30:15.123456+00'", as: Date.self, on: connection)
                #expect(abs(instant.timeIntervalSince1970 - 1_795_458_615.123456) < 0.000_001)
                let local = try await decodeBothWays("TIMESTAMP '1999-12-31 23:59:59.999999'", as: Date.self, on: connection)
                #expect(abs(local.timeIntervalSince1970 - 946_684_799.999999) < 0.000_001)
                let bc = try await decodeBothWays("TIMESTAMPTZ '0044-03-15 12:00:00+00 BC'", as: Date.self, on: connection)
                #expect(bc == Date(timeIntervalSince1970: -63_517_780_800))
                let day = try await decodeBothWays("DATE '2026-03-08'", as: Date.self, on: connection)
                #expect(day == Date(timeIntervalSince1970: 1_772_928_000))
                #expect(try await decodeBothWays("'-infinity'::date", as: Date.self, on: connection) == .distantPast)
                #expect(try await decodeBothWays("'infinity'::timestamp", as: Date.self, on: connection) == .distantFuture)
            }
        }
    }

    @Test("arrays of every element type, with any lower bound, decode the same from binary and text")
    func arrays() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                try await connection.executeScript(Self.defaultTextSettings)
                try await connection.executeScript("CREATE TYPE mood AS ENUM ('happy', 'sad', 'so so')")
                #expect(try await decodeBothWays("ARRAY[1, -2, 9223372036854775807]::int8[]", as: [Int].self, on: connection) == [1, -2, .max])
                #expect(try await decodeBothWays("ARRAY[1, 2]::int4[]", as: [Int32].self, on: connection) == [1, 2])
                #expect(try await decodeBothWays("ARRAY[1, 2]::int2[]", as: [Int16].self, on: connection) == [1, 2])
                #expect(try await decodeBothWays("'[0:2]={7,8,9}'::int[]", as: [Int].self, on: connection) == [7, 8, 9])
                #expect(try await decodeBothWays("'{}'::int[]", as: [Int].self, on: connection) == [])
                let strings = ["", "NULL", "a b", "q\"uote", "back\\slash", "{brace}", "com,ma", "Zoë"]
                let quoted = strings.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" }.joined(separator: ", ")
                #expect(try await decodeBothWays("ARRAY[\(quoted)]::text[]", as: [String].self, on: connection) == strings)
                #expect(try await decodeBothWays("ARRAY['happy', 'so so']::mood[]", as: [String].self, on: connection) == ["happy", "so so"])
                #expect(try await decodeBothWays("ARRAY[true, false]", as: [Bool].self, on: connection) == [true, false])
                #expect(try await decodeBothWays("ARRAY[1.5, 0.25]::float8[]", as: [Double].self, on: connection) == [1.5, 0.25])
                #expect(try await decodeBothWays("ARRAY[1.5, 0.25]::float4[]", as: [Float].self, on: connection) == [1.5, 0.25])
                #expect(try await decodeBothWays("ARRAY[1.50, 2]::numeric[]", as: [Double].self, on: connection) == [1.5, 2])
                let ids = try await decodeBothWays(
                    "ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '00000000-0000-0000-0000-000000000000']::uuid[]", as: [UUID].self,
                    on: connection)
                #expect(ids.map { $0.uuidString.lowercased() } == ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "00000000-0000-0000-0000-000000000000"])
                #expect(try await decodeBothWays("ARRAY['\\x00'::bytea, '']", as: [Data].self, on: connection) == [Data([0]), Data()])
                #expect(
                    try await decodeBothWays("ARRAY[TIMESTAMPTZ '2000-01-01 00:00:00+00', 'infinity']", as: [Date].self, on: connection)
                        == [Date(timeIntervalSince1970: 946_684_800), .distantFuture])
                #expect(
                    try await decodeBothWays("ARRAY[DATE '1970-01-02']", as: [Date].self, on: connection) == [Date(timeIntervalSince1970: 86_400)])
                let documents = try await decodeBothWays("ARRAY['{\"a\":1}'::jsonb, '[]']", as: [PostgresJSON].self, on: connection)
                #expect(documents.map(\.text) == ["{\"a\": 1}", "[]"])
            }
        }
    }

    @Test("NULL decodes into an optional of every type, in binary; a NULL element or a second dimension is an error")
    func nulls() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let row = try await connection.query(
                    """
                    SELECT NULL::int2 AS a, NULL::int8 AS b, NULL::float8 AS c, NULL::numeric AS d, NULL::bool AS e, NULL::uuid AS f,
                        NULL::text AS g, NULL::bytea AS h, NULL::jsonb AS i, NULL::date AS j, NULL::timestamptz AS k, NULL::int8[] AS l
                    """
                ).single()
                #expect(try row.decode("a", as: Int16?.self) == nil)
                #expect(try row.decode("b", as: Int?.self) == nil)
                #expect(try row.decode("c", as: Double?.self) == nil)
                #expect(try row.decode("d", as: String?.self) == nil)
                #expect(try row.decode("e", as: Bool?.self) == nil)
                #expect(try row.decode("f", as: UUID?.self) == nil)
                #expect(try row.decode("g", as: String?.self) == nil)
                #expect(try row.decode("h", as: Data?.self) == nil)
                #expect(try row.decode("i", as: PostgresJSON?.self) == nil)
                #expect(try row.decode("j", as: Date?.self) == nil)
                #expect(try row.decode("k", as: Date?.self) == nil)
                #expect(try row.decode("l", as: [Int]?.self) == nil)

                for script in [false, true] {
                    let sql = "SELECT ARRAY[1, NULL, 3]::int8[] AS holes, '{{1,2},{3,4}}'::int8[] AS square"
                    let arrays = try await script ? connection.executeScript(sql).single() : connection.query(PostgresQuery(unsafeSQL: sql)).single()
                    let holes = #expect(throws: PostgresError.self) { try arrays.decode("holes", as: [Int].self) }
                    #expect(holes?.code == .decoding && holes?.message.contains("NULL") == true)
                    let square = #expect(throws: PostgresError.self) { try arrays.decode("square", as: [Int].self) }
                    #expect(square?.code == .decoding && square?.message.contains("multi-dimensional") == true)
                }
            }
        }
    }

    /// Groups of expressions whose binary value decoded as `String` must equal the text the
    /// server sends for them through `executeScript` (with DateStyle ISO, IntervalStyle postgres
    /// and TimeZone UTC).
    struct TextFormCase: Sendable, CustomTestStringConvertible {
        var name: String
        var expressions: [String]
        var testDescription: String { name }

        static let all: [TextFormCase] = [
            TextFormCase(
                name: "integers and oid",
                expressions: ["0::int2", "(-32768)::int2", "2147483647::int4", "(-9223372036854775808)::int8", "4294967295::oid"]
            ),
            TextFormCase(
                name: "numeric",
                expressions: [
                    "0::numeric", "0.00::numeric", "(-0.0001)::numeric", "0.0001::numeric", "12345678901234567890.123::numeric",
                    "1.50::numeric", "'NaN'::numeric", "'Infinity'::numeric", "'-Infinity'::numeric", "10000::numeric",
                    "100000000::numeric", "(-99999999.99990000)::numeric", "1e-20::numeric", "1e20::numeric", "round(1 / 3::numeric, 30)",
                    "0.1::numeric(10, 5)", "123.456::numeric(10, 2)", "9999.9999::numeric", "(2::numeric ^ 200)", "1.000000000000000000001::numeric",
                ]
            ),
            TextFormCase(
                name: "double precision",
                expressions: [
                    "0::float8", "'-0'::float8", "0.1::float8", "1e15::float8", "1e16::float8", "123456789012345.6::float8", "1e-4::float8",
                    "1.5e-5::float8", "'NaN'::float8", "'Infinity'::float8", "'-Infinity'::float8", "1.7976931348623157e308::float8",
                    "5e-324::float8", "2.2250738585072014e-308::float8", "(-1234.5678)::float8", "100::float8", "1e22::float8",
                    "9007199254740993::float8", "(1 / 3::float8)", "0.30000000000000004::float8", "123456789012345678::float8",
                ]
            ),
            TextFormCase(
                name: "real",
                expressions: [
                    "0.1::float4", "1234567::float4", "123456::float4", "1e-5::float4", "3.4028235e38::float4", "1.4e-45::float4",
                    "'-0'::float4", "'NaN'::float4", "16777217::float4", "(1 / 3::float4)",
                ]
            ),
            TextFormCase(name: "boolean and uuid", expressions: ["true", "false", "'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid"]),
            TextFormCase(
                name: "date",
                expressions: [
                    "DATE '2026-11-23'", "DATE '0044-03-15 BC'", "'infinity'::date", "'-infinity'::date", "DATE '5874897-12-31'",
                    "DATE '4714-11-24 BC'", "DATE '1999-12-31'", "DATE '0001-01-01'",
                ]
            ),
            TextFormCase(
                name: "timestamp and timestamptz",
                expressions: [
                    "TIMESTAMP '2026-11-23 18:30:15.123456'", "TIMESTAMP '2026-11-23 18:30:15.1'", "'-infinity'::timestamp",
                    "TIMESTAMP '0044-03-15 12:00:00 BC'", "TIMESTAMP '294276-12-31 23:59:59.999999'", "TIMESTAMP '1999-12-31 23:59:59.999999'",
                    "TIMESTAMPTZ '2026-11-23 18:30:15.5+05:45'", "'infinity'::timestamptz", "TIMESTAMPTZ '4714-11-24 00:00:00+00 BC'",
                    "TIMESTAMPTZ '2000-01-01 00:00:00.000001+00'",
                ]
            ),
            TextFormCase(
                name: "time and interval",
                expressions: [
                    "TIME '00:00:00'", "TIME '23:59:59.999999'", "TIME '24:00:00'", "TIME '12:30:00.5'",
                    "interval '1 year 2 months 3 days 04:05:06.789'", "interval '0'", "interval '-1 days 2 hours'", "interval '1 day -2 hours'",
                    "interval '-3 months'", "interval '-1 year -2 mons +3 days -04:05:06'", "interval '100 hours'", "interval '-0.5 seconds'",
                    "interval '1 mon'", "interval '14 months'", "interval '-1 day'", "interval '1 year -1 mon'", "interval '1 day 00:00:00.000001'",
                ]
            ),
            TextFormCase(
                name: "bytea, \"char\", text-likes, JSON, XML, void",
                expressions: [
                    "'\\x00ff10'::bytea", "''::bytea", "'a'::\"char\"", "''::\"char\"", "'é'::\"char\"", "'x'::name", "'ab'::char(4)",
                    "'héllo'::varchar", "'{\"a\": [1, 2]}'::json", "'{\"b\": 1, \"a\": null}'::jsonb", "'<a>x</a>'::xml", "pg_sleep(0)",
                ]
            ),
            TextFormCase(
                name: "arrays",
                expressions: [
                    "ARRAY[1, NULL, 3]::int[]", "'{{1,2},{3,4}}'::int[]", "'[0:2]={1,2,3}'::int[]", "'[1:1][-2:-1]={{1,2}}'::int[]",
                    "'{}'::text[]", "'{{{1}}}'::int[]",
                    "ARRAY['', 'NULL', 'null', 'a b', 'q\"uote', 'back\\slash', '{brace}', 'com,ma', 'plain', 'tab\t', 'Zoë']::text[]",
                    "ARRAY[1.5, NULL]::numeric[]", "ARRAY[DATE '2026-01-01', 'infinity']", "ARRAY[true, false]", "ARRAY['\\x01'::bytea]",
                    "ARRAY['{\"a\": 1}'::jsonb]", "ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid]", "ARRAY[1.5::float8, 'NaN']",
                    "ARRAY[TIMESTAMPTZ '2026-01-01 00:00:00+00']", "ARRAY['a b'::name]", "ARRAY[interval '1 day', interval '-1 mon']",
                    "ARRAY['x'::varchar, NULL]", "ARRAY['ab'::char(3)]", "ARRAY[TIME '01:02:03']", "ARRAY[1::oid]",
                ]
            ),
            TextFormCase(
                name: "types of the database: an enum and arrays of it",
                expressions: ["'so so'::mood", "ARRAY['happy', 'so so']::mood[]", "'{}'::mood[]", "ARRAY[NULL, 'sad']::mood[]"]
            ),
        ]
    }

    @Test("a binary value decoded as String is the text PostgreSQL prints for it", arguments: TextFormCase.all)
    func textForms(_ group: TextFormCase) async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                try await connection.executeScript(
                    Self.defaultTextSettings + "; SET TimeZone TO 'UTC'; CREATE TYPE mood AS ENUM ('happy', 'sad', 'so so')"
                )
                for expression in group.expressions {
                    let sql = "SELECT \(expression) AS value"
                    let binary = try await connection.query(PostgresQuery(unsafeSQL: sql)).single()
                    let text = try await connection.executeScript(sql).single().decode("value", as: String.self)
                    #expect(try binary.decode("value", as: String.self) == text, "\(expression)")
                }
            }
        }
    }

    @Test("a binary built-in type without a text form here is refused, pointing at a cast to text")
    func unprintable() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let row = try await connection.query("SELECT '10.0.0.1'::inet AS address, point(1, 2) AS spot").single()
                for column in ["address", "spot"] {
                    let error = #expect(throws: PostgresError.self) { try row.decode(column, as: String.self) }
                    #expect(error?.code == .decoding && error?.message.contains("cast") == true)
                }
                let cast = try await connection.query("SELECT host('10.0.0.1'::inet) AS address").single()
                #expect(try cast.decode("address", as: String.self) == "10.0.0.1")
            }
        }
    }
}
