import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl event rsvps EVENT --as U [--occurrence T] [--limit N] [--cursor C]`
struct EventRSVPsCommand: ActingCommand {
    static let configuration = CommandConfiguration(
        commandName: "rsvps", abstract: "Who is coming: every answer with names, notes, plus-ones and family members.")
    @Argument(help: "Event id.") var event: EventID
    @Option(help: "For a recurring event: the occurrence's original start (RFC 3339).") var occurrence: Timestamp?
    @OptionGroup var page: PageOptions
    @OptionGroup var acting: ActingOptions
    @OptionGroup var output: JSONOption

    func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<RSVPEntry> {
        try await services.events.rsvps(
            event, occurrence: occurrence?.date, limit: page.limit, cursor: page.cursor, as: actor)
    }

    func tell(_ answers: Page<RSVPEntry>) {
        printPage(answers, ["NAME", "FAMILY MEMBER", "STATUS", "PLUS ONES", "NOTE"]) {
            [$0.displayName, $0.familyMemberName ?? "", $0.rsvp.status.rawValue, String($0.rsvp.plusOnes), $0.rsvp.note ?? ""]
        }
    }
}

/// `orbitctl event unrsvp EVENT --as U [--occurrence T] [--family-member F]`
struct EventWithdrawRSVPCommand: ActingCommand {
    static let configuration = CommandConfiguration(
        commandName: "unrsvp", abstract: "Take back one's answer to an event, or one's family member's.")
    @Argument(help: "Event id.") var event: EventID
    @Option(help: "For a recurring event: the occurrence's original start (RFC 3339).") var occurrence: Timestamp?
    @Option(help: "The answer of this family member of yours.") var familyMember: FamilyMemberID?
    @OptionGroup var acting: ActingOptions
    @OptionGroup var output: JSONOption

    func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
        try await services.events.withdrawRSVP(
            event, occurrence: occurrence?.date, familyMember: familyMember, as: actor)
        return DoneOutput(id: event.description, removed: true)
    }

    func tell(_ done: DoneOutput) {
        print("Answer to event \(event) withdrawn.")
    }
}
