import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl nudge`: ask someone who owes you to settle up (docs/money.md, "Who hears about money").
struct NudgeCommand: ActingCommand {
    static let configuration = CommandConfiguration(
        commandName: "nudge",
        abstract: "Ask a member who owes you money to settle up: they are notified (at most once a day per pair).")
    @Option(help: "Community id.") var community: CommunityID
    @Argument(help: "Who owes you (id or email).") var member: String
    @OptionGroup var acting: ActingOptions
    @OptionGroup var output: JSONOption

    func act(_ services: OrbitServices, as actor: UserID) async throws -> Nudge {
        try await services.settlements.nudge(try await services.users.resolve(member), in: community, as: actor)
    }

    func tell(_ nudge: Nudge) {
        let owed = nudge.owed.map { Money(minorUnits: $0.balance, currency: Currency($0.currency) ?? .usd).description }
        print("Nudged \(nudge.toUserID): they owe you \(owed.joined(separator: ", ")).")
    }
}
