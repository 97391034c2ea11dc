import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl guest …`: people without an account in a community's money (docs/money.md, "Guests").
struct GuestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "guest",
        abstract: "Add, list, rename, remove and invite guests: people without an account, in a community's money.",
        discussion: """
            Any member adds a guest by name. A guest takes part wherever members do in money: splits,
            payments, settlements, balances and settle-up; give their user id as any member's. The user
            who joins through a guest's link (guest invite) takes over the guest's money.
            """,
        subcommands: [Add.self, List.self, Rename.self, Remove.self, Invite.self]
    )

    struct Add: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Add a guest by name (any member).")
        @Option(help: "Community id.") var community: CommunityID
        @Argument(help: "The guest's name (1 to 100 characters).") var name: String
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Member {
            try await services.members.addGuest(named: name, to: community, as: actor)
        }

        func tell(_ guest: Member) {
            print("Added guest \(guest.displayName ?? name) (member \(guest.id), user \(guest.userID)) to community \(community).")
        }
    }

    struct List: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "List a community's guests (any member).")
        @Option(help: "Community id.") var community: CommunityID
        @OptionGroup var page: PageOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<Member> {
            try await services.members.guests(of: community, limit: page.limit, cursor: page.cursor, as: actor)
        }

        func tell(_ guests: Page<Member>) {
            printPage(guests, ["MEMBER", "USER", "NAME", "ADDED BY", "ADDED"]) {
                [$0.id.description, $0.userID.description, $0.displayName ?? "", $0.invitedBy?.description ?? "", show($0.joinedAt)]
            }
        }
    }

    struct Rename: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a guest (any member).")
        @Argument(help: "The guest's member id.") var guest: MemberID
        @Argument(help: "The new name (1 to 100 characters).") var name: String
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Member {
            try await services.members.renameGuest(guest, to: name, as: actor)
        }

        func tell(_ guest: Member) {
            print("Renamed guest \(guest.id) to \(guest.displayName ?? name).")
        }
    }

    struct Remove: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a guest (any member), once nothing is owed between them and anyone in any currency.")
        @Argument(help: "The guest's member id.") var guest: MemberID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
            try await services.members.removeGuest(guest, as: actor)
            return DoneOutput(id: guest.description, removed: true)
        }

        func tell(_ done: DoneOutput) {
            print("Removed guest \(guest).")
        }
    }

    struct Invite: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "A link for a guest (any member): an invite code of one use; whoever joins with it takes over the guest's money.")
        @Argument(help: "The guest's member id.") var guest: MemberID
        @Option(help: "When it expires (RFC 3339; default: in 30 days).") var expiresAt: Timestamp?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> OrbitCore.Invite {
            try await services.members.inviteGuest(guest, expiresAt: expiresAt?.date, as: actor)
        }

        func tell(_ invite: OrbitCore.Invite) {
            print("Invite code \(invite.code) for guest \(guest)" + (invite.expiresAt.map { ", expires \(show($0))" } ?? "") + ".")
        }
    }
}
