package import Logging
package import OrbitCore
package import ServiceLifecycle

/// The scheduled jobs of `orbitctl serve`: reminders and delivery every minute, the
/// balances snapshot every five, account deletions, retention and expired idempotency keys
/// every hour. Each job is safe
/// to run on several servers at once (dedupe keys, advisory locks), and a failing run is
/// logged and retried at the next tick. Stops at graceful shutdown.
package struct ScheduledJobs: Service {
    let services: OrbitServices
    let delivery: any NotificationDelivery
    let logger: Logger
    let tick: Duration

    package init(services: OrbitServices, delivery: any NotificationDelivery, logger: Logger, tick: Duration = .seconds(60)) {
        self.services = services
        self.delivery = delivery
        self.logger = logger
        self.tick = tick
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            var round = 0
            while !Task.isCancelled {
                await runJobs(round: round)
                round += 1
                do {
                    try await Task.sleep(for: tick)
                } catch {
                    return  // cancelled: shutting down
                }
            }
        }
    }

    /// One tick: `round` counts ticks, for the jobs that run every fifth or sixtieth.
    package func runJobs(round: Int) async {
        await job("reminders") { "\(try await services.notifications.sendReminders()) created" }
        await job("delivery") { "\(try await services.notifications.deliverPending(using: delivery)) delivered" }
        if round % 5 == 0 {
            await job("balances snapshot") { "refreshed in \(try await services.finances.refreshBalancesSnapshot())" }
        }
        if round % 60 == 0 {
            await job("account deletions") {
                let (deleted, skipped) = try await services.lifecycle.deleteDueAccounts()
                return "\(deleted) deleted, \(skipped) skipped"
            }
            await job("retention") {
                let report = try await services.lifecycle.runRetention()
                return "\(report.counts.values.reduce(0, +)) rows removed"
            }
            await job("idempotency keys") { "\(try await services.idempotency.purgeExpired()) expired keys removed" }
        }
    }

    private func job(_ name: String, _ body: () async throws -> String) async {
        do {
            let outcome = try await body()
            logger.debug("job done", metadata: ["job": .string(name), "outcome": .string(outcome)])
        } catch {
            logger.error("job failed", metadata: ["job": .string(name), "error": .string(ProblemMiddleware.describeForLog(error))])
        }
    }
}
