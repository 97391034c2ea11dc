import ArgumentParser
import Foundation
import Logging
import OrbitCore

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
