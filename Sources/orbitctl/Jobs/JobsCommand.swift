import ArgumentParser
import Foundation
import Logging
import OrbitCore

/// `orbitctl jobs run`
struct JobsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs",
        abstract: "Scheduled jobs, run once (operators and tests).",
        subcommands: [Run.self]
    )

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the scheduled jobs once, as `orbitctl serve` runs them every tick.",
            discussion: """
                Jobs: reminders, recurring-charges, delivery, balances, accounts, retention, idempotency-keys. Any number of these
                may run at once, on one machine or many: each job claims its work in the database. Delivery
                sends pushes to APNs with the --apns-* options (as `serve` does); without them it prints one \
                `push` line per push.
                """
        )
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var clock: ClockOptions
        @OptionGroup var apns: APNsOptions
        @Option(name: .customLong("job"), help: ArgumentHelp("Run only this job (repeatable); default: all.", valueName: "name"))
        var only: [String] = []

        func validate() throws {
            let known = Set(ScheduledJob.all(pushes: LoggingPushSender()).map(\.name))
            if let unknown = only.first(where: { !known.contains($0) }) {
                throw ValidationError("No job \(unknown); the jobs are \(known.sorted().joined(separator: ", ")).")
            }
        }

        func run() async throws {
            let logger = Logger(label: "orbitctl.jobs")
            let needsPushes = only.isEmpty || only.contains("delivery")
            let (pushes, sender) = needsPushes ? try await apns.pushSender(logger: logger) : (LoggingPushSender(), nil)
            let jobs = ScheduledJob.all(pushes: pushes).filter { only.isEmpty || only.contains($0.name) }
            do {
                try await withServices(database) { services in
                    let services = clock.apply(to: services)
                    for job in jobs {
                        print("\(job.name): \(try await job.runOnce(services))")
                    }
                }
            } catch {
                await APNsOptions.close(sender, logger: logger)
                throw error
            }
            await APNsOptions.close(sender, logger: logger)
        }
    }
}
