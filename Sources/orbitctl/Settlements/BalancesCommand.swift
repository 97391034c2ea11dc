import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl balances …`
struct BalancesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "balances",
        abstract: "Who owes whom.",
        subcommands: [Show.self, Pairs.self, With.self, Refresh.self]
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

    struct Pairs: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Who owes whom, pair by pair and per currency, before any simplification (a person's pairs add up to their balance).")
        @Option(help: "Community id.") var community: CommunityID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> [PairDebt] {
            try await services.settlements.pairs(in: community, as: actor)
        }

        func tell(_ debts: [PairDebt]) {
            if debts.isEmpty { return print("Nobody owes anybody.") }
            printTable(
                ["FROM", "OWES", "AMOUNT"],
                debts.map {
                    [$0.from.description, $0.to.description, Money(minorUnits: $0.amount, currency: Currency($0.currency) ?? .usd).description]
                }
            )
        }
    }

    struct With: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Where you stand with one member (positive: they owe you), and the expenses and settlements behind it, newest first.")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "The other member (id or email).") var member: String
        @Option(help: "Entries per page (1–500).") var limit: Int = 50
        @Option(help: "The next page's cursor (next_cursor).") var cursor: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> PairStatement {
            try await services.settlements.pair(
                in: community, with: try await services.users.resolve(member), limit: limit, cursor: cursor, as: actor)
        }

        func tell(_ statement: PairStatement) {
            if statement.balances.isEmpty { print("You are even with \(statement.memberID).") }
            for figure in statement.balances {
                let money = Money(minorUnits: abs(figure.balance), currency: Currency(figure.currency) ?? .usd)
                print(figure.balance > 0 ? "\(statement.memberID) owes you \(money)." : "You owe \(statement.memberID) \(money).")
            }
            guard !statement.entries.isEmpty else { return }
            printTable(
                ["DATE", "TRANSACTION", "DESCRIPTION", "AMOUNT"],
                statement.entries.map {
                    [
                        $0.transactionDate.description, $0.transactionID.description, $0.description,
                        Money(minorUnits: $0.amount, currency: Currency($0.currency) ?? .usd).description,
                    ]
                }
            )
            if let next = statement.nextCursor { print("More: --cursor \(next)") }
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
