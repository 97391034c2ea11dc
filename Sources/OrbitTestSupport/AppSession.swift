package import Foundation
package import OrbitPostgres

extension PostgresConnection {
    /// Runs `body` in one transaction the way a service request runs (docs/architecture.md): as
    /// `orbit_app`, with `app.current_user_id` set to `user` (not set at all for nil, or set to
    /// `rawSetting` verbatim, such as "").
    @discardableResult
    package func asApp<Result>(
        _ user: UUID?,
        rawSetting: String? = nil,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        var settings = ["role": "orbit_app"]
        settings["app.current_user_id"] = rawSetting ?? user?.uuidString.lowercased()
        return try await withTransaction(TransactionOptions(localSettings: settings), body)
    }

    /// Runs `body` as a signed-in child's request: as `orbit_app`, with
    /// `app.current_family_member_id` set to `child`, `app.current_child_device_id` to `device`
    /// (the paired device the child's token names) and no user.
    @discardableResult
    package func asChild<Result>(_ child: UUID, device: UUID?, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        var settings = ["role": "orbit_app", "app.current_family_member_id": child.uuidString.lowercased()]
        settings["app.current_child_device_id"] = device?.uuidString.lowercased()
        return try await withTransaction(TransactionOptions(localSettings: settings), body)
    }
}
