import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl invite …`
struct InviteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invite",
        abstract: "Create, list, revoke, preview and redeem invite codes.",
        subcommands: [Create.self, List.self, Revoke.self, Preview.self, Redeem.self]
    )

    struct Create: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Create an invite code (admins).")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "How many people may use it (default: unlimited).") var maxUses: Int?
        @Option(help: "When it expires (RFC 3339, e.g. 2026-12-31T18:00:00Z).") var expiresAt: Timestamp?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Invite {
            try await services.invites.create(
                to: community, maxUses: maxUses, expiresAt: expiresAt?.date, as: actor
            )
        }

        func tell(_ invite: Invite) {
            print(
                "Invite code \(invite.code) for community \(community)"
                    + (invite.usesRemaining.map { ", \($0) use(s)" } ?? "") + (invite.expiresAt.map { ", expires \(show($0))" } ?? "") + ".")
        }
    }

    struct List: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "List a community's invites (admins).")
        @Option(help: "Community id.") var community: CommunityID
        @OptionGroup var page: PageOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<Invite> {
            try await services.invites.list(
                of: community, limit: page.limit, cursor: page.cursor, as: actor)
        }

        func tell(_ invites: Page<Invite>) {
            printPage(invites, ["ID", "CODE", "USES LEFT", "EXPIRES", "CREATED"]) {
                [$0.id.description, $0.code, $0.usesRemaining.map(String.init) ?? "unlimited", show($0.expiresAt), show($0.createdAt)]
            }
        }
    }

    struct Revoke: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke an invite (admins).")
        @Argument(help: "Invite id.") var invite: InviteID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
            try await services.invites.revoke(invite, as: actor)
            return DoneOutput(id: invite.description, revoked: true)
        }

        func tell(_ done: DoneOutput) {
            print("Revoked invite \(invite).")
        }
    }

    struct Preview: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What an invite shows before joining: the community's name, its member count and who invited (anyone with the code).")
        @Argument(help: "The 6-character code.") var code: String
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            _ = try InviteCode.parse(code)
        }

        func run() async throws {
            let code = try InviteCode.parse(code)
            let preview = try await withServices(database) { try await $0.invites.preview(code) }
            if output.json { return try printJSON(preview) }
            print(
                "\(preview.communityName): \(preview.memberCount) member(s)" + (preview.inviterName.map { ", invited by \($0)" } ?? "")
                    + (preview.expiresAt.map { ", until \(show($0))" } ?? "") + "."
                    + (preview.guestName.map { " Whoever joins with it takes over the money of the guest \($0)." } ?? ""))
        }
    }

    struct Redeem: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Join a community with an invite code (any case).")
        @Argument(help: "The 6-character code.") var code: String
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Redemption {
            try await services.invites.redeem(try InviteCode.parse(code), as: actor)
        }

        func tell(_ redemption: Redemption) {
            print(
                "\(redemption.rejoined ? "Rejoined" : "Joined") community \(redemption.communityID)."
                    + (redemption.claimedGuestMemberID.map { " The money of guest \($0) is yours now." } ?? ""))
        }
    }
}
