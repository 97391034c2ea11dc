package import OrbitCore
package import OrbitPostgres
import ServiceLifecycle

/// Closes the connection pool at shutdown. It is the first service, so the service group
/// shuts it down last, after the HTTP server has finished its requests.
package struct PoolService: Service {
    let pool: ConnectionPool
    let replicas: ReadReplicas?

    package init(pool: ConnectionPool, replicas: ReadReplicas?) {
        self.pool = pool
        self.replicas = replicas
    }

    package func run() async throws {
        // Cancellation means the group is going down too: close the pools either way.
        try? await gracefulShutdown()
        await pool.close()
        await replicas?.close()
    }
}
