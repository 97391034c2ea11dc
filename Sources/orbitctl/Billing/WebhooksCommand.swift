import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl webhooks`: the payment providers' events, for support (docs/money.md).
struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks", abstract: "The payment providers' events.", subcommands: [Replay.self])

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply a saved Stripe event (its JSON, as delivered or from the Dashboard), as the webhook would.",
            discussion: """
                For support: an event the webhook missed or refused. No signature is checked (whoever runs this \
                has the database); the event is applied once by its id, like a delivery: one already received \
                is a duplicate, one older than what its subscription last had is stale.
                """)
        @Argument(help: "The event's JSON file.") var file: String
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            guard let data = FileManager.default.contents(atPath: file) else { throw CommandFailure("cannot read \(file).") }
            let event: StripeEvent
            do {
                event = try StripeEvent(json: Array(data))
            } catch {
                throw CommandFailure("\(file): \(error)")
            }
            let receipt = try await withServices(database) { try await $0.billing.applyStripe(event) }
            if output.json { return try printJSON(receipt) }
            print(
                "\(receipt.eventID) (\(receipt.type)): \(receipt.outcome.rawValue)\(receipt.community.map { ", community \($0)" } ?? "")"
                    + "\(receipt.detail.map { ": \($0)" } ?? "").")
        }
    }
}
