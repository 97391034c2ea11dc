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

    struct Delete: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Request the acting user's account deletion.")
        @OptionGroup var acting: ActingOptions
        var output: TextOutput { TextOutput() }

        /// When the account will be deleted.
        func act(_ services: OrbitServices, as actor: UserID) async throws -> Date {
            try await services.lifecycle.requestAccountDeletion(as: actor)
        }

        func tell(_ effective: Date) {
            print("The account will be deleted after \(show(effective)) unless the request is cancelled.")
        }
    }

    struct CancelDeletion: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Cancel a pending account deletion.")
        @OptionGroup var acting: ActingOptions
        var output: TextOutput { TextOutput() }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
            try await services.lifecycle.cancelAccountDeletion(as: actor)
            return DoneOutput()
        }

        func tell(_ done: DoneOutput) {
            print("Account deletion cancelled.")
        }
    }
}
