import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl balances …`
struct BalancesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "balances",
        abstract: "Who owes whom.",
        subcommands: [Show.self, Refresh.self]
    )

    struct Show: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Balances per member and currency (positive = is owed).")
        @Option(help: "Community id.") var community: CommunityID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> [Balance] {
            try await services.settlements.balances(in: community, as: actor)
        }

        func tell(_ balances: [Balance]) {
            printTable(
                ["USER", "BALANCE"],
                balances.map { [$0.userID.description, Money(minorUnits: $0.balance, currency: Currency($0.currency) ?? .usd).description] }
            )
        }
    }

    struct Refresh: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Refresh the materialized balances snapshot, concurrently (operator).")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            guard let duration = try await withServices(database, { try await $0.settlements.refreshBalancesSnapshot() }) else {
                throw CommandFailure("Another balances refresh is running; try again when it has finished.")
            }
            print("Refreshed the balances snapshot in \(duration.wholeMilliseconds) ms.")
        }
    }
}
