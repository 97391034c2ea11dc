import ArgumentParser
import Foundation
import Logging
import OrbitCore

/// `--now`: the time the jobs act as of (tests, catching up); default the clock.
struct ClockOptions: ParsableArguments {
    @Option(help: "Act as if it were this time (RFC 3339).") var now: Timestamp?

    func apply(to services: OrbitServices) -> OrbitServices {
        guard let now else { return services }
        var copy = services
        let date = now.date
        copy.now = { date }
        return copy
    }
}

/// `orbitctl retention run`
struct RetentionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention",
        abstract: "Hard-delete what the retention policies no longer keep.",
        subcommands: [Run.self]
    )

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the retention policies once (operator).",
            discussion: """
                Deleted posts after 30 days, notifications after 90, expired invites after 7, revoked or expired refresh tokens
                after 30, audit log rows after 2 years, deleted communities after 30 days with all their data. In batches, one
                transaction each; a second run started meanwhile does nothing.
                """
        )
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var clock: ClockOptions
        @Flag(help: "Report what would be deleted, delete nothing.") var dryRun = false
        @Option(help: "Rows per transaction.") var batchSize = 1000
        @OptionGroup var output: JSONOption

        func run() async throws {
            let report = try await withServices(database) {
                try await clock.apply(to: $0).lifecycle.runRetention(dryRun: dryRun, batchSize: batchSize)
            }
            if output.json { return try printJSON(report) }
            guard report.ran else { return print("Another retention run is in progress; nothing done.") }
            print(dryRun ? "Would delete:" : "Deleted:")
            printTable(["TABLE", "ROWS"], report.counts.sorted { $0.key < $1.key }.map { [$0.key, String($0.value)] })
        }
    }
}

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

/// `orbitctl account …`
struct AccountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account",
        abstract: "Account deletion: request (7-day grace period) or cancel.",
        subcommands: [Delete.self, CancelDeletion.self]
    )

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Request the acting user's account deletion.")
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var actor: ActorOptions

        func run() async throws {
            let effective = try await withServices(database) { services in
                try await services.lifecycle.requestAccountDeletion(as: try await services.users.resolve(actor.actor))
            }
            print("The account will be deleted after \(show(effective)) unless the request is cancelled.")
        }
    }

    struct CancelDeletion: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Cancel a pending account deletion.")
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var actor: ActorOptions

        func run() async throws {
            try await withServices(database) { services in
                try await services.lifecycle.cancelAccountDeletion(as: try await services.users.resolve(actor.actor))
            }
            print("Account deletion cancelled.")
        }
    }
}

/// `orbitctl notifications …`
struct NotificationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications",
        abstract: "The acting user's notifications.",
        subcommands: [List.self, Read.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Newest first, with the unread count.")
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var page: PageOptions
        @Flag(help: "Only unread ones.") var unread = false
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let (items, count) = try await withServices(database) { services in
                let acting = try await services.users.resolve(actor.actor)
                return (
                    try await services.notifications.list(limit: page.limit, cursor: page.cursor, unreadOnly: unread, as: acting),
                    try await services.notifications.unreadCount(as: acting)
                )
            }
            if output.json { return try printJSON(items) }
            printPage(items, ["WHEN", "TYPE", "TITLE", "READ", "ID"]) {
                [show($0.createdAt), $0.type.rawValue, $0.title, $0.readAt == nil ? "" : "yes", $0.id.description]
            }
            print("Unread: \(count)")
        }
    }

    struct Read: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Mark one notification, or all with --all, read.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "Notification id.") var notification: NotificationID?
        @Flag(help: "Mark all read.") var all = false
        @OptionGroup var actor: ActorOptions

        func validate() throws {
            if all == (notification != nil) { throw ValidationError("Give a notification id or --all.") }
        }

        func run() async throws {
            let count = try await withServices(database) { services in
                try await services.notifications.markRead(notification, as: try await services.users.resolve(actor.actor))
            }
            print("Marked \(count) notification(s) read.")
        }
    }
}
