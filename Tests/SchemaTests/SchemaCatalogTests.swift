import Foundation
import OrbitMigrations
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("The schema keeps the spec's contract")
struct SchemaCatalogTests {
    static let draftDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "DraftDDL").path

    /// Tables with their columns and types, index names, and enum types with each label and its
    /// place (an enum may gain labels after the spec's, as notification_type gained chat_message).
    static let catalogListing = """
        SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type AS item FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name NOT IN ('schema_migrations', 'schema_repeatables', 'balances')
        UNION ALL SELECT 'index ' || indexname FROM pg_indexes WHERE schemaname = 'public'
        UNION ALL SELECT 'type ' || t.typname || ' ' || e.enumlabel || ' #' || row_number() OVER (PARTITION BY t.oid ORDER BY e.enumsortorder)
        FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
        """

    private func listing(_ connection: PostgresConnection) async throws -> Set<String> {
        Set(try await connection.query(PostgresQuery(unsafeSQL: Self.catalogListing)).map { try $0.decode("item", as: String.self) })
    }

    @Test("every table, column (with its type), index and enum of the spec's DDL exists under its name")
    func containsTheSpec() async throws {
        let draft = try await withTestDatabase(empty: true) { database in
            try await Migrator(configuration: database.configuration, catalog: try MigrationCatalog.load(directory: Self.draftDirectory)).migrate()
            return try await database.withConnection { try await listing($0) }
        }
        let ours = try await withTestDatabase { database in
            try await database.withConnection { try await listing($0) }
        }
        #expect(draft.count > 150)
        #expect(draft.subtracting(ours).sorted() == [])
    }

    @Test("every column a row-level security policy filters on leads a full (non-partial) index")
    func policyColumnsIndexed() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let policies = try await connection.query("SELECT tablename, qual FROM pg_policies WHERE schemaname = 'public' AND qual IS NOT NULL")
                let pattern = /\(?(\w+) = (?:ANY \(\( SELECT orbit\.|\( SELECT orbit\.app_user_id)/
                var filtered: Set<[String]> = []
                for row in policies {
                    let (table, qual) = try row.decode((String, String).self)
                    for match in qual.matches(of: pattern) { filtered.insert([table, String(match.output.1)]) }
                }
                #expect(filtered.count >= 19)
                for pair in filtered.sorted(by: { $0.joined() < $1.joined() }) {
                    let indexed: Bool = try await connection.value(
                        """
                        SELECT EXISTS (
                            SELECT FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
                            WHERE i.indrelid = \(pair[0])::regclass AND a.attname = \(pair[1]) AND i.indpred IS NULL
                        )
                        """
                    )
                    #expect(indexed, "\(pair[0]).\(pair[1]) has no full index led by it")
                }
            }
        }
    }

    @Test("row-level security is enabled and forced on every table of user or community data")
    func rlsEverywhere() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let unprotected = try await connection.query(
                    """
                    SELECT relname FROM pg_class
                    WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'
                      AND relname NOT IN ('schema_migrations', 'schema_repeatables')
                      AND NOT (relrowsecurity AND relforcerowsecurity)
                    """
                ).map { try $0.decode("relname", as: String.self) }
                #expect(unprotected == [])
            }
        }
    }

    static let allowListPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "orbit_app_functions.txt").path

    /// Every function orbit_app can call: EXECUTE on it (granted, or PUBLIC's) in a schema it may
    /// use, outside PostgreSQL's own schemas, as `schema.name(argument types)`.
    static let callableListing = """
        SELECT n.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS item
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'
          AND has_schema_privilege('orbit_app', n.oid, 'USAGE') AND has_function_privilege('orbit_app', p.oid, 'EXECUTE')
        """

    @Test("orbit_app can call exactly the functions of the allow-list (orbit_app_functions.txt): a new function is private until granted")
    func callableFunctions() async throws {
        let allowed = Set(
            try String(contentsOfFile: Self.allowListPath, encoding: .utf8).split(separator: "\n")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") })
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let callable = Set(
                    try await connection.query(PostgresQuery(unsafeSQL: Self.callableListing)).map { try $0.decode("item", as: String.self) })
                #expect(callable.subtracting(allowed).sorted() == [], "callable by orbit_app, not in the allow-list")
                #expect(allowed.subtracting(callable).sorted() == [], "in the allow-list, not callable by orbit_app")
                // A function created later (a new helper, by a migration or a repeatable file) is
                // nobody's to call until a grant names it.
                try await connection.query("CREATE FUNCTION orbit.new_helper() RETURNS int LANGUAGE sql AS 'SELECT 1'")
                try await connection.query("CREATE FUNCTION public.new_helper() RETURNS int LANGUAGE sql AS 'SELECT 1'")
                let after = try await connection.query(PostgresQuery(unsafeSQL: Self.callableListing)).map { try $0.decode("item", as: String.self) }
                #expect(
                    !after.contains("orbit.new_helper()") && !after.contains("public.new_helper()"), "\(after.filter { $0.contains("new_helper") })")
                let denied = await #expect(throws: PostgresError.self) {
                    try await connection.asApp(nil) { try await $0.query("SELECT orbit.new_helper()") }
                }
                #expect(denied?.sqlState == "42501")
            }
        }
    }
}
