import ArgumentParser
import Foundation
import Logging
import OrbitCore

/// `orbitctl account …`
struct AccountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account",
        abstract: "Account deletion: request (7-day grace period) or cancel.",
        subcommands: [Delete.self, CancelDeletion.self]
    )

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Request the acting user's account deletion.")
        @OptionGroup var acting: ActingOptions

        func run() async throws {
            let effective = try await acting.run { services, actor in
                try await services.lifecycle.requestAccountDeletion(as: actor)
            }
            print("The account will be deleted after \(show(effective)) unless the request is cancelled.")
        }
    }

    struct CancelDeletion: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Cancel a pending account deletion.")
        @OptionGroup var acting: ActingOptions

        func run() async throws {
            try await acting.run { services, actor in
                try await services.lifecycle.cancelAccountDeletion(as: actor)
            }
            print("Account deletion cancelled.")
        }
    }
}
