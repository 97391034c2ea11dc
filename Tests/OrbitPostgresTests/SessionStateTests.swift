import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("The server's DateStyle does not matter, and the client sets nothing per session")
struct SessionStateTests {
    /// Gives `body` a database whose sessions start with `datestyle = 'SQL, DMY'`, a time zone
    /// of +05:45 and `IntervalStyle` sql_standard, as a database or role setting would, or a
    /// pooler's server connection that another client left that way.
    private func withForeignSessionDefaults(_ body: (TestDatabase) async throws -> Void) async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let name = try await connection.escapeIdentifier(database.name)
                try await connection.executeScript(
                    """
                    ALTER DATABASE \(name) SET datestyle = 'SQL, DMY';
                    ALTER DATABASE \(name) SET timezone = 'Asia/Kathmandu';
                    ALTER DATABASE \(name) SET intervalstyle = 'sql_standard'
                    """
                )
            }
            try await body(database)
        }
    }

    @Test("a new connection, alone or from a pool, keeps the database's DateStyle: nothing is SET at connect")
    func nothingSetAtConnect() async throws {
        try await withForeignSessionDefaults { database in
            try await database.withConnection { connection in
                let dateStyle = try await connection.query("SHOW datestyle").single().decode(0, as: String.self)
                #expect(dateStyle == "SQL, DMY")
                let sources = try await connection.query(
                    "SELECT name, source FROM pg_settings WHERE source = 'session' ORDER BY name"
                )
                #expect(try sources.map { try $0.decode("name", as: String.self) } == [])
            }
            let pool = database.makePool(maxConnections: 2)
            let pooled = try await pool.query("SHOW datestyle").single().decode(0, as: String.self)
            await pool.close()
            #expect(pooled == "SQL, DMY")
        }
    }

    /// Instants with the text `to_char(… AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US BC')`
    /// gives for them (computed apart from this client: proleptic Gregorian days since 1970).
    static let instants: [(Date, String)] = [
        (Date(timeIntervalSince1970: 1_795_458_615.123456), "2026-11-23 18:30:15.123456 AD"),
        (Date(timeIntervalSince1970: 946_684_799.999999), "1999-12-31 23:59:59.999999 AD"),
        (Date(timeIntervalSince1970: 946_684_800), "2000-01-01 00:00:00.000000 AD"),
        (Date(timeIntervalSince1970: -0.5), "1969-12-31 23:59:59.500000 AD"),
        (Date(timeIntervalSince1970: -62_167_219_200), "0001-01-01 00:00:00.000000 BC"),
        (Date(timeIntervalSince1970: -63_517_780_800), "0044-03-15 12:00:00.000000 BC"),
        (Date(timeIntervalSince1970: -210_863_520_000), "4713-01-01 00:00:00.000000 BC"),
        (Date(timeIntervalSince1970: 3_093_527_980_799), "99999-12-31 23:59:59.000000 AD"),
    ]

    @Test("timestamps go and come back exactly under DateStyle SQL, DMY: microseconds, BC, far future, infinity")
    func timestamps() async throws {
        try await withForeignSessionDefaults { database in
            try await database.withConnection { connection in
                for (instant, utc) in Self.instants {
                    let row = try await connection.query(
                        """
                        SELECT \(instant) AS value, to_char(\(instant) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US BC') AS utc,
                            \(instant)::timestamp AS local
                        """
                    ).single()
                    #expect(try row.decode("utc", as: String.self) == utc, "the server read \(utc) as another instant")
                    let back = try row.decode("value", as: Date.self)
                    #expect(abs(back.timeIntervalSince1970 - instant.timeIntervalSince1970) < 0.000_001, "\(utc)")
                    // The text form is ISO in UTC whatever DateStyle and TimeZone say.
                    let iso = try row.decode("value", as: String.self)
                    #expect(iso.hasSuffix(utc.hasSuffix("BC") ? "+00 BC" : "+00"), "\(iso)")
                    #expect(iso.hasPrefix(String(utc.prefix(19))), "\(iso) for \(utc)")
                }
                let infinite = try await connection.query(
                    "SELECT 'infinity'::timestamptz AS a, '-infinity'::timestamptz AS b, 'infinity'::timestamp AS c"
                ).single()
                #expect(try infinite.decode("a", as: Date.self) == .distantFuture)
                #expect(try infinite.decode("b", as: Date.self) == .distantPast)
                #expect(try infinite.decode("c", as: Date.self) == .distantFuture)
                #expect(try infinite.decode("a", as: String.self) == "infinity")
                // Arrays of dates travel as ISO text, which every DateStyle reads the same way.
                let instants = Self.instants.map(\.0)
                let unnested = try await connection.query("SELECT unnest(\(instants)) AS value")
                let backs = try unnested.map { try $0.decode("value", as: Date.self) }
                #expect(zip(backs, instants).allSatisfy { abs($0.timeIntervalSince1970 - $1.timeIntervalSince1970) < 0.000_001 })
                // A batch takes the same path.
                let batch = try await connection.pipeline(instants.map { "SELECT \($0) AS value" })
                #expect(try batch.map { try $0.single().decode("value", as: Date.self) } == backs)
            }
        }
    }

    @Test("dates come back exactly under DateStyle SQL, DMY: BC, the last date, infinity")
    func dates() async throws {
        try await withForeignSessionDefaults { database in
            try await database.withConnection { connection in
                // ISO input (year first) is read the same in every DateStyle.
                let cases: [(sql: String, seconds: Double, text: String)] = [
                    ("DATE '2026-11-23'", 1_795_392_000, "2026-11-23"),
                    ("DATE '1999-12-31'", 946_598_400, "1999-12-31"),
                    ("DATE '0044-03-15 BC'", -63_517_824_000, "0044-03-15 BC"),
                    ("DATE '4714-11-24 BC'", -210_866_803_200, "4714-11-24 BC"),
                    ("DATE '5874897-12-31'", 185_331_706_992_000, "5874897-12-31"),
                ]
                for (sql, seconds, text) in cases {
                    let row = try await connection.query("SELECT \(unescaped: sql) AS d").single()
                    #expect(try row.decode("d", as: Date.self) == Date(timeIntervalSince1970: seconds), "\(sql)")
                    #expect(try row.decode("d", as: String.self) == text)
                }
                let infinite = try await connection.query("SELECT 'infinity'::date AS a, '-infinity'::date AS b").single()
                #expect(try infinite.decode("a", as: Date.self) == .distantFuture)
                #expect(try infinite.decode("b", as: Date.self) == .distantPast)
                #expect(try infinite.decode("b", as: String.self) == "-infinity")
            }
        }
    }

    @Test("executeScript's text follows the server's DateStyle, which the ISO reader refuses rather than misreads")
    func textResultsFollowTheServer() async throws {
        try await withForeignSessionDefaults { database in
            try await database.withConnection { connection in
                let row = try await connection.executeScript("SELECT DATE '2026-03-04' AS d").single()
                #expect(try row.decode("d", as: String.self) == "04/03/2026")
                let error = #expect(throws: PostgresError.self) { try row.decode("d", as: Date.self) }
                #expect(error?.code == .decoding)
            }
        }
    }
}
