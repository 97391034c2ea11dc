import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl community …`
struct CommunityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "community",
        abstract: "Create and administer communities, their members and audit log.",
        subcommands: [
            Create.self, List.self, Show.self, Update.self, Delete.self, Restore.self, Archive.self, Unarchive.self, Members.self, AddMember.self,
            RemoveMember.self, SetRole.self, SplitDefaults.self, Leave.self, CommunityMembershipCommand.self, Subscription.self, Audit.self,
        ]
    )

    struct Create: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Create a community; the acting user becomes its first admin.")
        @Option(help: "Name (at most 100 characters).") var name: String
        @Option(help: "Description.") var description: String?
        @Option(help: "Icon URL (http or https).") var iconURL: String?
        @Option(help: #"Settings as JSON, e.g. '{"timezone": "Europe/Berlin", "allowMemberPosts": false}'."#) var settings: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Community {
            let parsed = try settings.map(CommunitySettings.parse(json:)) ?? CommunitySettings()
            return try await services.communities.create(
                name: name, description: description, iconURL: iconURL, settings: parsed, as: actor
            )
        }

        func tell(_ community: Community) {
            print("Created community \(community.id) (\(community.name)).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the acting user's communities, or (without --as) all of them.")
        @Flag(help: "The acting user's archived communities too.") var archived = false
        @OptionGroup var reading: ReadingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            // An operator's list of every community, or the acting user's "my groups".
            let (all, mine) = try await reading.run { services, actor -> ([Community], [MyCommunity]) in
                if let actor { return ([], try await services.communities.mine(archived: archived, as: actor)) }
                return (try await services.communities.all(), [])
            }
            if output.json { return all.isEmpty && !mine.isEmpty ? try printJSON(mine) : try printJSON(all) }
            if !mine.isEmpty {
                return printTable(
                    ["ID", "NAME", "ROLE", "MY BALANCE", "PINNED", "LAST ACTIVITY", "ARCHIVED"],
                    mine.map { entry in
                        let balance = entry.my.balances.map { Money(minorUnits: $0.balance, currency: Currency($0.currency) ?? .usd).description }
                        let pin = entry.my.pinned ? "yes" + (entry.my.position.map { " (\($0))" } ?? "") : ""
                        return [
                            entry.community.id.description, entry.community.name, entry.my.role.rawValue,
                            balance.isEmpty ? "settled" : balance.joined(separator: ", "), pin, show(entry.my.lastActivityAt),
                            entry.community.archivedAt.map(show) ?? "",
                        ]
                    }
                )
            }
            printTable(
                ["ID", "NAME", "MEMBERS", "SUBSCRIPTION", "DELETED"],
                all.map { [$0.id.description, $0.name, String($0.memberCount), $0.subscriptionStatus.rawValue, show($0.deletedAt)] }
            )
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a community, with member_count and settings.")
        @Argument(help: "Community id.") var community: CommunityID
        @OptionGroup var reading: ReadingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let found = try await reading.run { services, actor in
                if let actor {
                    return try await services.communities.get(community, as: actor)
                }
                return try await services.communities.getAsOperator(community)
            }
            if output.json { return try printJSON(found) }
            let settings = (try? String(decoding: JSONEncoder.sorted.encode(found.settings), as: UTF8.self)) ?? "{}"
            printTable(
                ["ID", "NAME", "MEMBERS", "CREATED BY", "SUBSCRIPTION", "SETTINGS", "DELETED"],
                [
                    [
                        found.id.description, found.name, String(found.memberCount), found.createdBy.description, found.subscriptionStatus.rawValue,
                        settings,
                        show(found.deletedAt),
                    ]
                ]
            )
        }
    }

    struct Update: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Change name, description, icon or settings (admins).")
        @Argument(help: "Community id.") var community: CommunityID
        @Option(help: "New name.") var name: String?
        @Option(help: "New description.") var description: String?
        @Option(help: "New icon URL.") var iconURL: String?
        @Option(help: "Settings to change, as JSON; other settings keep their values.") var settings: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            if name == nil && description == nil && iconURL == nil && settings == nil {
                throw ValidationError("Nothing to change: give --name, --description, --icon-url or --settings.")
            }
        }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Community {
            let parsed = try settings.map(CommunitySettings.parse(json:))
            return try await services.communities.update(
                community, name: name, description: description, iconURL: iconURL, settings: parsed,
                as: actor
            )
        }

        func tell(_ updated: Community) {
            print("Updated community \(updated.id) (\(updated.name)).")
        }
    }

    struct Delete: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Soft-delete a community (its creator); restorable for 30 days.")
        @Argument(help: "Community id.") var community: CommunityID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
            try await services.communities.delete(community, as: actor)
            return DoneOutput(id: community.description, deleted: true)
        }

        func tell(_ done: DoneOutput) {
            print("Deleted community \(community); an operator can restore it within 30 days.")
        }
    }

    struct Restore: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Restore a community deleted less than 30 days ago (operator).")
        @Argument(help: "Community id.") var community: CommunityID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Community {
            try await services.communities.restoreAsOperator(community, as: actor)
        }

        func tell(_ restored: Community) {
            print("Restored community \(restored.id) (\(restored.name)).")
        }
    }

    struct Archive: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Archive a community (admins): read-only for everyone, its money kept, listed with community list --archived.")
        @Argument(help: "Community id.") var community: CommunityID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Community {
            try await services.communities.archive(community, as: actor)
        }

        func tell(_ archived: Community) {
            print("Archived community \(archived.id) (\(archived.name)): it is read-only until unarchived.")
        }
    }

    struct Unarchive: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Make an archived community writable again (admins).")
        @Argument(help: "Community id.") var community: CommunityID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Community {
            try await services.communities.unarchive(community, as: actor)
        }

        func tell(_ community: Community) {
            print("Community \(community.id) (\(community.name)) is writable again.")
        }
    }

    struct Members: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a community's members.")
        @Argument(help: "Community id.") var community: CommunityID
        @Flag(help: "Include people who left.") var all = false
        @Option(help: "Members per page (1 to 500), as a member.") var limit = 100
        @Option(help: "next_cursor of the previous page, as a member.") var cursor: String?
        @OptionGroup var reading: ReadingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let page: Page<Member> = try await reading.run { services, actor in
                if let actor {
                    return try await services.members.list(
                        of: community, includeFormer: all, limit: limit, cursor: cursor, as: actor)
                }
                return Page(items: try await services.members.listAsOperator(of: community, includeFormer: all), nextCursor: nil)
            }
            if output.json { return try printJSON(page) }
            printPage(page, ["USER", "NAME", "ROLE", "NICKNAME", "JOINED", "LEFT"]) {
                [$0.userID.description, $0.displayName ?? "", $0.role.rawValue, $0.nickname ?? "", show($0.joinedAt), show($0.leftAt)]
            }
        }
    }

    struct AddMember: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Add a user to a community (admins).")
        @Argument(help: "Community id.") var community: CommunityID
        @Option(help: "The user to add (id or email).") var user: String
        @Option(help: "admin or member.") var role: MemberRole = .member
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Member {
            return try await services.members.add(try await services.users.resolve(user), to: community, role: role, as: actor)
        }

        func tell(_ member: Member) {
            print("Added \(member.displayName ?? member.userID.description) to community \(community) as \(member.role.rawValue).")
        }
    }

    struct RemoveMember: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a member (admins). The last admin cannot be removed.")
        @Argument(help: "Community id.") var community: CommunityID
        @Option(help: "The member to remove (id or email).") var user: String
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
            let member = try await services.users.resolve(user)
            try await services.members.remove(member, from: community, as: actor)
            return DoneOutput(communityId: community.description, userId: member.description, removed: true)
        }

        func tell(_ done: DoneOutput) {
            print("Removed \(user) from community \(community).")
        }
    }

    struct SetRole: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Change a member's role (admins). The last admin cannot be demoted.")
        @Argument(help: "Community id.") var community: CommunityID
        @Option(help: "The member (id or email).") var user: String
        @Option(help: "admin or member.") var role: MemberRole
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Member {
            return try await services.members.setRole(role, of: try await services.users.resolve(user), in: community, as: actor)
        }

        func tell(_ member: Member) {
            print("\(member.displayName ?? member.userID.description) is now \(member.role.rawValue) of community \(community).")
        }
    }

    struct SplitDefaults: ActingCommand {
        static let configuration = CommandConfiguration(
            commandName: "split-defaults",
            abstract:
                "Whether a member is in new splits among everyone, and their default weight (admins; a member for themselves; any member for a guest)."
        )
        @Argument(help: "Community id.") var community: CommunityID
        @Option(help: "The member (id or email; a guest by user id).") var user: String
        @Flag(inversion: .prefixedNo, help: "In new splits among everyone (--no-active: left out of them, still in old ones and in balances).")
        var active: Bool?
        @Option(help: "Their part in the default split by shares (1 to 1000).") var weight: Int?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Member {
            try await services.members.setSplitDefaults(
                of: try await services.users.resolve(user), in: community, active: active, defaultWeight: weight, as: actor)
        }

        func tell(_ member: Member) {
            print(
                "\(member.displayName ?? member.userID.description) is \(member.active ? "in" : "left out of") new splits, weight \(member.defaultWeight)."
            )
        }
    }

    struct Leave: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "The acting user leaves a community. The last admin cannot leave.")
        @Argument(help: "Community id.") var community: CommunityID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
            try await services.members.leave(community, as: actor)
            return DoneOutput(communityId: community.description, left: true)
        }

        func tell(_ done: DoneOutput) {
            print("Left community \(community).")
        }
    }

    struct Subscription: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Set the subscription status (the community's creator).")
        @Argument(help: "Community id.") var community: CommunityID
        @Option(help: "free, active, past_due or canceled.") var status: SubscriptionStatus
        @Option(help: "When the paid subscription ends (RFC 3339).") var expiresAt: Timestamp?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Community {
            try await services.communities.setSubscription(
                community, status: status, expiresAt: expiresAt?.date, as: actor)
        }

        func tell(_ updated: Community) {
            print(
                "Community \(updated.id) subscription: \(updated.subscriptionStatus)\(updated.subscriptionExpiresAt.map { " until \(show($0))" } ?? "")."
            )
        }
    }

    struct Audit: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "A community's audit log, newest first (admins).")
        @Argument(help: "Community id.") var community: CommunityID
        @OptionGroup var page: PageOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<AuditEntry> {
            try await services.communities.auditLog(
                community, limit: page.limit, cursor: page.cursor, as: actor)
        }

        func tell(_ entries: Page<AuditEntry>) {
            printPage(entries, ["WHEN", "ACTION", "BY", "TARGET", "DETAILS"]) {
                [
                    show($0.createdAt), $0.action, $0.userID.description,
                    [$0.targetType, $0.targetID?.uuidString.lowercased()].compactMap { $0 }.joined(separator: " "),
                    $0.metadata == "{}" ? "" : $0.metadata,
                ]
            }
        }
    }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
