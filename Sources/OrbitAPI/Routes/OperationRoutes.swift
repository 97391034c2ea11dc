import Foundation
import Hummingbird
import NIOCore
import OrbitCore
import OrbitMigrations
import OrbitPostgres

extension OrbitAPI {
    /// The migrations built into this binary, decoded and checksummed once (not per probe).
    static let catalog = Result { try MigrationCatalog.embedded() }

    func addOperationRoutes(to router: Router<APIContext>) {
        struct Health: OmitsNilMembers, Sendable {
            var status: String
            var database: String?
            var migrations: String?
        }
        // The process is up.
        router.get("healthz") { _, _ in JSON(Health(status: "ok")) }

        // The database answers and every migration built into this binary is applied.
        router.get("readyz") { _, context in
            do {
                _ = try await services.pool.query("SELECT 1")
                let status = try await Migrator(
                    configuration: services.pool.configuration, catalog: try Self.catalog.get(), logger: context.logger
                )
                .status()
                guard status.isUpToDate else {
                    return try APIJSON.response(Health(status: "unavailable", database: "ok", migrations: "pending"), status: .serviceUnavailable)
                }
                return try APIJSON.response(Health(status: "ok", database: "ok", migrations: "current"), status: .ok)
            } catch {
                context.logger.warning("readiness check failed", metadata: ["error": .string(ErrorLog.describe(error))])
                return try APIJSON.response(Health(status: "unavailable", database: "unreachable"), status: .serviceUnavailable)
            }
        }

        router.get("metrics") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.render(pool: services.pool)))
            )
        }

        router.get("openapi.yaml") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/yaml; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: OpenAPIDocument.yaml))
            )
        }
    }
}
