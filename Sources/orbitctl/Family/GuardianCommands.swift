import ArgumentParser
import Foundation
import OrbitCore

extension FamilyCommand {
    /// `orbitctl family guardians …`: two parents (docs/chores.md, "Two parents").
    struct Guardians: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A child's guardians: invite a co-parent, accept or decline, leave, move the guardian of record.",
            discussion: """
                Every guardian sets the child's PIN, pairs and revokes their devices, sets their chores and rewards and \
                approves them. The guardian of record owes the child's new shares in expenses; they leave once another \
                guardian is it, and the last guardian cannot leave (remove the family member instead).
                """,
            subcommands: [ListGuardians.self, Invite.self, Invitations.self, Accept.self, Decline.self, Leave.self, Record.self]
        )

        static let headers = ["USER", "NAME", "STATE", "INVITED", "ACCEPTED"]
        static func row(_ guardian: Guardian) -> [String] {
            [
                guardian.userID.description, guardian.displayName ?? "-",
                guardian.ofRecord ? "of record" : guardian.acceptedAt == nil ? "invited" : "guardian", show(guardian.invitedAt),
                show(guardian.acceptedAt),
            ]
        }

        struct ListGuardians: ActingCommand {
            static let configuration = CommandConfiguration(
                commandName: "list", abstract: "List a family member's guardians, then the invitations not accepted yet.")
            @Argument(help: "Family member id.") var familyMember: FamilyMemberID
            @OptionGroup var acting: ActingOptions
            @OptionGroup var output: JSONOption

            func act(_ services: OrbitServices, as actor: UserID) async throws -> [Guardian] {
                try await services.family.guardians(of: familyMember, as: actor)
            }

            func tell(_ guardians: [Guardian]) { printTable(Guardians.headers, guardians.map(Guardians.row)) }
        }

        struct Invite: ActingCommand {
            static let configuration = CommandConfiguration(
                abstract: "Invite someone the acting user shares a community with to be a guardian of their family member.")
            @Argument(help: "Family member id.") var familyMember: FamilyMemberID
            @Option(help: "Who (id or email).") var user: String
            @OptionGroup var acting: ActingOptions
            @OptionGroup var output: JSONOption

            func act(_ services: OrbitServices, as actor: UserID) async throws -> Guardian {
                try await services.family.inviteGuardian(try await services.users.resolve(user), of: familyMember, as: actor)
            }

            func tell(_ guardian: Guardian) {
                print("Invited \(guardian.displayName ?? guardian.userID.description) to be \(guardian.familyMemberName)'s guardian.")
            }
        }

        struct Invitations: ActingCommand {
            static let configuration = CommandConfiguration(abstract: "List the acting user's invitations to be a guardian, not accepted yet.")
            @OptionGroup var acting: ActingOptions
            @OptionGroup var output: JSONOption

            func act(_ services: OrbitServices, as actor: UserID) async throws -> [Guardian] {
                try await services.family.guardianInvitations(as: actor)
            }

            func tell(_ invitations: [Guardian]) {
                printTable(
                    ["FAMILY MEMBER", "NAME", "INVITED BY", "INVITED"],
                    invitations.map { [$0.familyMemberID.description, $0.familyMemberName, $0.invitedBy?.description ?? "-", show($0.invitedAt)] })
            }
        }

        struct Accept: ActingCommand {
            static let configuration = CommandConfiguration(abstract: "Accept the acting user's invitation to be a guardian of the family member.")
            @Argument(help: "Family member id.") var familyMember: FamilyMemberID
            @OptionGroup var acting: ActingOptions
            @OptionGroup var output: JSONOption

            func act(_ services: OrbitServices, as actor: UserID) async throws -> Guardian {
                try await services.family.acceptGuardianship(of: familyMember, as: actor)
            }

            func tell(_ guardian: Guardian) { print("You are now \(guardian.familyMemberName)'s guardian.") }
        }

        struct Decline: ActingCommand {
            static let configuration = CommandConfiguration(abstract: "Decline the acting user's invitation to be a guardian of the family member.")
            @Argument(help: "Family member id.") var familyMember: FamilyMemberID
            @OptionGroup var acting: ActingOptions
            @OptionGroup var output: JSONOption

            func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
                try await services.family.declineGuardianship(of: familyMember, as: actor)
                return DoneOutput(id: familyMember.description, removed: true)
            }

            func tell(_ done: DoneOutput) { print("Declined the invitation for \(familyMember).") }
        }

        struct Leave: ActingCommand {
            static let configuration = CommandConfiguration(
                abstract: "Leave a family member's guardianship, or (--user) withdraw someone's invitation not accepted yet.")
            @Argument(help: "Family member id.") var familyMember: FamilyMemberID
            @Option(help: "Whose invitation to withdraw (id or email; default: the acting user leaves).") var user: String?
            @OptionGroup var acting: ActingOptions
            @OptionGroup var output: JSONOption

            func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
                let who = try await user.asyncMap { try await services.users.resolve($0) } ?? actor
                try await services.family.removeGuardian(who, of: familyMember, as: actor)
                return DoneOutput(id: familyMember.description, userId: who.description, removed: true)
            }

            func tell(_ done: DoneOutput) {
                print(user == nil ? "You are no longer \(familyMember)'s guardian." : "Withdrew the invitation of \(done.userId ?? "-").")
            }
        }

        struct Record: ActingCommand {
            static let configuration = CommandConfiguration(
                abstract: "Make one of the family member's guardians the guardian of record: the child's new shares are owed by them.")
            @Argument(help: "Family member id.") var familyMember: FamilyMemberID
            @Option(help: "The guardian (id or email).") var user: String
            @OptionGroup var acting: ActingOptions
            @OptionGroup var output: JSONOption

            func act(_ services: OrbitServices, as actor: UserID) async throws -> FamilyMember {
                try await services.family.setGuardianOfRecord(try await services.users.resolve(user), of: familyMember, as: actor)
            }

            func tell(_ member: FamilyMember) { print("\(member.name)'s guardian of record is now \(member.userID).") }
        }
    }
}
