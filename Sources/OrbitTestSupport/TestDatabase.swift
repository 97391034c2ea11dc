import Foundation
package import OrbitPostgres
package import Testing

/// A database of a test's own, cloned from the template and dropped afterwards.
package struct TestDatabase: Sendable {
    package let name: String
    package let server: TestServer
    /// Connects as the superuser (the owner of everything in it).
    package let configuration: PostgresConfiguration

    /// This database as a string for other programs (`--database-url`, `DATABASE_URL`): the
    /// external server's URL with this database's name, or the throwaway cluster's parameters
    /// as a key=value conninfo.
    package var connectionString: String {
        if let url = server.adminConfiguration.connectionString {
            if var components = URLComponents(string: url), components.scheme?.hasPrefix("postgres") == true {
                components.path = "/" + name
                return components.string ?? url
            }
            return url + " dbname=" + Self.quoted(name)
        }
        var pairs = server.adminConfiguration.parameters.filter { $0.keyword != "dbname" }.map { "\($0.keyword)=\(Self.quoted($0.value))" }
        pairs.append("dbname=" + Self.quoted(name))
        return pairs.joined(separator: " ")
    }

    /// A conninfo value in single quotes, with \ and ' escaped as libpq expects.
    private static func quoted(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    /// Opens a connection to this database as the superuser; close it when done.
    package func connect() async throws -> PostgresConnection {
        try await PostgresConnection.connect(configuration)
    }

    /// A pool for this database; close it when done.
    package func makePool(maxConnections: Int = 4, acquireTimeout: Duration = .seconds(10)) -> ConnectionPool {
        ConnectionPool(
            configuration: configuration,
            options: .init(maxConnections: maxConnections, acquireTimeout: acquireTimeout)
        )
    }

    /// Runs `body` with a superuser connection to this database, closed on every path.
    @discardableResult
    package func withConnection<Result>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try await PostgresConnection.withConnection(configuration, body)
    }
}

/// Gives `body` a database of its own and drops it on every path.
///
/// The server is `ORBIT_TEST_DATABASE_URL` when set, otherwise the process's throwaway cluster.
@discardableResult
/// - Parameter empty: give a database with no schema at all (for migration tests) instead of
///   one with the OrbitCove schema.
package func withTestDatabase<Result>(
    empty: Bool = false,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (TestDatabase) async throws -> Result
) async throws -> Result {
    let server = try await TestServer.shared()
    let name = try await server.createDatabase(empty: empty)
    let database = TestDatabase(name: name, server: server, configuration: server.adminConfiguration.database(name))
    do {
        let result = try await body(database)
        await drop(name, on: server, sourceLocation: sourceLocation)
        return result
    } catch {
        await drop(name, on: server, sourceLocation: sourceLocation)
        throw error
    }
}

private func drop(_ name: String, on server: TestServer, sourceLocation: SourceLocation) async {
    do {
        try await server.dropDatabase(name)
    } catch {
        Issue.record(error, "could not drop test database \(name)", sourceLocation: sourceLocation)
    }
}
