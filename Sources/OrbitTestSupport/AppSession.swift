public import Foundation
public import OrbitPostgres

extension PostgresConnection {
    /// Runs `body` in one transaction the way a service request runs (DESIGN.md): as
    /// `orbit_app`, with `app.current_user_id` set to `user` (not set at all for nil, or set to
    /// `rawSetting` verbatim, such as "").
    @discardableResult
    public func asApp<Result>(
        _ user: UUID?,
        rawSetting: String? = nil,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await withTransaction { connection in
            try await connection.query("SET LOCAL ROLE orbit_app")
            if let setting = rawSetting ?? user?.uuidString.lowercased() {
                try await connection.query("SELECT set_config('app.current_user_id', \(setting), true)")
            }
            return try await body(connection)
        }
    }
}
