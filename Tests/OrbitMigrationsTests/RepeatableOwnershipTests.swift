import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@testable import OrbitMigrations

/// Each repeatable file owns its domain's functions, triggers, policies and rights (sql/README.md).
/// When no migration is pending the migrator re-applies only the files that changed, so one file
/// applied alone must leave the database exactly as the whole set does.
@Suite("Repeatable files each own what they grant")
struct RepeatableOwnershipTests {
    /// Every policy, every right on a table, view, sequence, column or function of OrbitCove's
    /// schemas, and every trigger: what a file re-applied alone could drop or leave behind.
    static let rules: PostgresQuery = """
        SELECT 'policy ' || schemaname || '.' || tablename || ' ' || policyname || ' ' || cmd || ' ' || array_to_string(roles, ',')
               || ' ' || coalesce(qual, '') || ' ' || coalesce(with_check, '')
        FROM pg_catalog.pg_policies
        UNION ALL
        SELECT 'relation ' || n.nspname || '.' || c.relname || ' ' || coalesce(c.relacl::text, 'default')
        FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname IN ('public', 'orbit', 'orbit_private') AND c.relkind IN ('r', 'v', 'm', 'S', 'p')
        UNION ALL
        SELECT 'column ' || c.relname || '.' || a.attname || ' ' || a.attacl::text
        FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname IN ('public', 'orbit', 'orbit_private') AND a.attacl IS NOT NULL
        UNION ALL
        SELECT 'function ' || p.oid::regprocedure::text || ' ' || coalesce(p.proacl::text, 'default') || ' ' || p.proowner::regrole::text
        FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname IN ('public', 'orbit', 'orbit_private')
        UNION ALL
        SELECT 'trigger ' || t.tgrelid::regclass::text || ' ' || t.tgname || ' ' || t.tgfoid::regprocedure::text
        FROM pg_catalog.pg_trigger t WHERE NOT t.tgisinternal
        ORDER BY 1
        """

    @Test("re-applying any one repeatable file alone leaves every policy, right and trigger as the whole set does")
    func eachFileAloneKeepsTheRules() async throws {
        try await withTestDatabase(empty: true) { database in
            let catalog = try MigrationCatalog.embedded()
            let migrator = Migrator(configuration: database.configuration, catalog: catalog)
            try await migrator.migrate()
            let expected = try await Self.snapshot(database)
            #expect(expected.count > 400)
            for file in catalog.repeatables {
                // What the migrator does when only this file's checksum changed.
                try await database.withConnection { connection in
                    try await connection.query("DELETE FROM public.schema_repeatables WHERE path = \(file.path)")
                }
                let report = try await migrator.migrate()
                #expect(report.applied.map(\.path) == [file.path])
                let after = try await Self.snapshot(database)
                let lost = Set(expected).subtracting(after).sorted()
                let gained = Set(after).subtracting(expected).sorted()
                #expect(lost.isEmpty && gained.isEmpty, "\(file.path) applied alone: lost \(lost), gained \(gained)")
            }
        }
    }

    static func snapshot(_ database: TestDatabase) async throws -> [String] {
        try await database.withConnection { connection in
            try await connection.query(rules).map { try $0.decode(String.self) }
        }
    }
}
