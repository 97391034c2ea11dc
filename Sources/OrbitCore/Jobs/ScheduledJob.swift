/// One piece of scheduled work: `orbitctl serve` runs each every `everyTicks` ticks (a tick is a
/// minute), `orbitctl jobs run` runs them once.
///
/// Every job is correct with any number of servers running it at the same moment: work is
/// claimed in the database (`FOR UPDATE SKIP LOCKED`, unique dedupe keys, transaction-level
/// try-locks), conditions are re-checked by the statement that writes, and each transaction is
/// bounded. Nothing is held between transactions, so the jobs also run behind a
/// transaction-mode pooler.
package struct ScheduledJob: Sendable {
    package var name: String
    package var everyTicks: Int
    /// How long one run may take; a longer one is cancelled (its running statement with it),
    /// so a stuck job cannot hold up the others.
    package var timeout: Duration
    /// Runs the job once; returns what it did, in a few words.
    package var run: @Sendable (OrbitServices) async throws -> String

    /// The jobs, in the order a tick runs them.
    package static func all(pushes: any PushSender) -> [ScheduledJob] {
        [
            ScheduledJob(name: "reminders", everyTicks: 1, timeout: .seconds(50)) { services in
                "\(try await services.notifications.sendReminders()) created"
            },
            ScheduledJob(name: "recurring-charges", everyTicks: 1, timeout: .seconds(50)) { services in
                "\(try await services.recurringCharges.createDue())"
            },
            ScheduledJob(name: "delivery", everyTicks: 1, timeout: .seconds(50)) { services in
                "\(try await services.notifications.deliverPending(using: pushes))"
            },
            // Hourly, after delivery: a tick hands out what is pending before the weekly work.
            ScheduledJob(name: "debt-reminders", everyTicks: 60, timeout: .seconds(300)) { services in
                "\(try await services.settlements.sendDebtReminders()) created"
            },
            ScheduledJob(name: "weekly-digest", everyTicks: 60, timeout: .seconds(300)) { services in
                "\(try await services.notifications.sendWeeklyDigests()) created"
            },
            ScheduledJob(name: "balances", everyTicks: 5, timeout: .seconds(300)) { services in
                guard let duration = try await services.settlements.refreshBalancesSnapshot(timeout: .seconds(290)) else {
                    return "another server is refreshing"
                }
                return "refreshed in \(duration)"
            },
            ScheduledJob(name: "accounts", everyTicks: 60, timeout: .seconds(300)) { services in
                let (deleted, skipped) = try await services.lifecycle.deleteDueAccounts()
                return "\(deleted) deleted, \(skipped) skipped (last admin of a community with other members)"
            },
            ScheduledJob(name: "retention", everyTicks: 60, timeout: .seconds(600)) { services in
                let report = try await services.lifecycle.runRetention()
                guard report.ran else { return "another server is running it" }
                return "\(report.counts.values.reduce(0, +)) rows removed"
            },
            ScheduledJob(name: "idempotency-keys", everyTicks: 60, timeout: .seconds(300)) { services in
                "\(try await services.idempotency.purgeExpired()) expired keys removed"
            },
        ]
    }

    /// Runs the job, cancelling it after `timeout`.
    /// - Throws: what the job threw, or `ScheduledJobTimeout`.
    package func runOnce(_ services: OrbitServices) async throws -> String {
        try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask { try await run(services) }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let outcome = first else {
                throw ScheduledJobTimeout(job: name, timeout: timeout)
            }
            return outcome
        }
    }
}

/// A scheduled job ran longer than its timeout and was cancelled.
package struct ScheduledJobTimeout: Error, CustomStringConvertible {
    package var job: String
    package var timeout: Duration
    package var description: String { "the \(job) job took longer than \(timeout) and was cancelled" }
}
