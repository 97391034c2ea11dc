package import Logging
package import OrbitCore
package import ServiceLifecycle

/// Runs the scheduled jobs (`ScheduledJob.all`) every `tick` on `orbitctl serve`: reminders,
/// recurring charges and delivery every tick, the balances snapshot every fifth, account deletions, retention and
/// expired idempotency keys every sixtieth. Every job is safe on several servers at once (see
/// `ScheduledJob`), a failing or timed-out run is logged and tried again at its next tick, and
/// a job never waits for another one's lock. Stops at graceful shutdown. With a `PushSignal`,
/// delivery also runs whenever it wakes (a chat message was stored: its pushes go out at once).
package struct ScheduledJobs: Service {
    let services: OrbitServices
    let jobs: [ScheduledJob]
    let logger: Logger
    let tick: Duration
    let pushes: any PushSender
    let pushSignal: PushSignal?

    package init(services: OrbitServices, pushes: any PushSender, logger: Logger, tick: Duration = .seconds(60), pushSignal: PushSignal? = nil) {
        self.services = services
        self.jobs = ScheduledJob.all(pushes: pushes)
        self.logger = logger
        self.tick = tick
        self.pushes = pushes
        self.pushSignal = pushSignal
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                if let pushSignal {
                    group.addTask {
                        for await _ in pushSignal.wakes {
                            do {
                                let report = try await services.notifications.deliverPending(using: pushes)
                                logger.debug("delivery woken", metadata: ["outcome": .string("\(report)")])
                            } catch {
                                logger.error("delivery failed", metadata: ["error": .string(ErrorLog.describe(error))])
                            }
                        }
                    }
                }
                var round = 0
                while !Task.isCancelled {
                    await runJobs(round: round)
                    round += 1
                    do {
                        try await Task.sleep(for: tick)
                    } catch {
                        break  // cancelled: shutting down
                    }
                }
                group.cancelAll()
            }
        }
    }

    /// One tick: `round` counts ticks; a job runs when `round` is a multiple of its period.
    package func runJobs(round: Int) async {
        for job in jobs where round % job.everyTicks == 0 {
            do {
                let outcome = try await job.runOnce(services)
                logger.debug("job done", metadata: ["job": .string(job.name), "outcome": .string(outcome)])
            } catch {
                logger.error("job failed", metadata: ["job": .string(job.name), "error": .string(ErrorLog.describe(error))])
            }
        }
    }
}
