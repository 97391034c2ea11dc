import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl family …`
struct FamilyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "family",
        abstract: "Manage a user's family members (dependents without a login).",
        subcommands: [Add.self, List.self, Rename.self, Avatar.self, Remove.self, SetPIN.self, Pair.self, Devices.self, Guardians.self]
    )

    struct SetPIN: ActingCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-pin", abstract: "Set a child's sign-in PIN (4 to 6 digits; the child's guardians only).")
        @Argument(help: "Family member id.") var member: FamilyMemberID
        @Option(help: "A community the child's parent is in.") var community: CommunityID
        @Option(help: "The PIN.") var pin: String
        @OptionGroup var acting: ActingOptions
        var output: TextOutput { TextOutput() }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
            try await services.family.setPIN(pin, for: member, in: community, as: actor)
            return DoneOutput(id: member.description)
        }

        func tell(_ done: DoneOutput) {
            print("PIN set for \(member).")
        }
    }

    struct Pair: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pair a device for a child: prints a one-time code for POST /auth/child (valid 15 minutes).",
            discussion: "The child's guardians only. The device's token reaches --community alone; a device unused for 30 days must be paired again."
        )
        @Argument(help: "Family member id.") var member: FamilyMemberID
        @Option(help: "The community the device is for (the only one the child reaches on it).") var community: CommunityID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> ChildPairing {
            try await services.family.startPairing(for: member, in: community, as: actor)
        }

        func tell(_ pairing: ChildPairing) {
            print("Pairing code \(pairing.pairingCode) (until \(show(pairing.expiresAt))).")
        }
    }

    /// `orbitctl family devices list|revoke`
    struct Devices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List or revoke the devices paired for a child (the child's guardians only).",
            subcommands: [ListDevices.self, Revoke.self]
        )

        struct ListDevices: ActingCommand {
            static let configuration = CommandConfiguration(
                commandName: "list", abstract: "List a child's devices for --community: pending, paired, expired or revoked.")
            @Argument(help: "Family member id.") var member: FamilyMemberID
            @Option(help: "The community the devices were paired for.") var community: CommunityID
            @OptionGroup var acting: ActingOptions
            @OptionGroup var output: JSONOption

            func act(_ services: OrbitServices, as actor: UserID) async throws -> [ChildDevice] {
                try await services.family.devices(of: member, in: community, as: actor)
            }

            func tell(_ devices: [ChildDevice]) {
                printTable(
                    ["ID", "STATUS", "PAIRED", "LAST USED", "EXPIRES", "REVOKED"],
                    devices.map {
                        [$0.id.description, $0.status.rawValue, show($0.pairedAt), show($0.lastUsedAt), show($0.expiresAt), show($0.revokedAt)]
                    })
            }
        }

        struct Revoke: ActingCommand {
            static let configuration = CommandConfiguration(
                abstract: "Revoke one of a child's devices (--device), or all of them (--all): it signs in no more, and its tokens stop at once.")
            @Argument(help: "Family member id.") var member: FamilyMemberID
            @Option(help: "The community the devices were paired for.") var community: CommunityID
            @Option(help: "The device to revoke (its id, from `family devices list`).") var device: ChildDeviceID?
            @Flag(help: "Revoke every device of the child for --community, and any pairing code not used yet.") var all = false
            @OptionGroup var acting: ActingOptions
            @OptionGroup var output: JSONOption

            func validate() throws {
                guard (device != nil) != all else { throw ValidationError("Name one device with --device, or revoke them all with --all.") }
            }

            func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
                try await services.family.revokeDevices(
                    of: member, in: community, device: device, as: actor)
                return DoneOutput(id: device?.description ?? member.description, revoked: true)
            }

            func tell(_ done: DoneOutput) {
                print(device.map { "Revoked device \($0)." } ?? "Revoked every device of \(member) for \(community).")
            }
        }
    }

    struct Add: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Add a family member to the acting user.")
        @Option(help: "Name (at most 100 characters).") var name: String
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> FamilyMember {
            try await services.family.add(name: name, as: actor)
        }

        func tell(_ member: FamilyMember) {
            print("Added family member \(member.id) (\(member.name)).")
        }
    }

    struct List: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the family members the acting user is a guardian of, or those --user is the guardian of record of.")
        @Option(help: "Whose family members (id or email; default: the acting user's).") var user: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> [FamilyMember] {
            let owner = try await user.asyncMap { try await services.users.resolve($0) }
            return try await services.family.list(of: owner, as: actor)
        }

        func tell(_ members: [FamilyMember]) {
            printTable(["ID", "NAME", "USER", "CREATED"], members.map { [$0.id.description, $0.name, $0.userID.description, show($0.createdAt)] })
        }
    }

    struct Rename: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a family member the acting user is a guardian of.")
        @Argument(help: "Family member id.") var familyMember: FamilyMemberID
        @Option(help: "New name.") var name: String
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> FamilyMember {
            try await services.family.rename(familyMember, to: name, as: actor)
        }

        func tell(_ member: FamilyMember) {
            print("Renamed family member \(member.id) to \(member.name).")
        }
    }

    struct Avatar: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a family member's avatar to an image uploaded with `media upload` (by the parent, or the child's device), or clear it.")
        @Argument(help: "Family member id.") var familyMember: FamilyMemberID
        @Option(help: "The image's media id.") var media: MediaID?
        @Flag(help: "Remove the avatar.") var clear = false
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            guard (media == nil) != !clear else { throw ValidationError("Give --media or --clear.") }
        }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> FamilyMember {
            try await services.family.setAvatar(familyMember, to: clear ? nil : media, as: actor)
        }

        func tell(_ member: FamilyMember) {
            print(member.avatarMediaID.map { "\(member.name)'s avatar is now media \($0)." } ?? "\(member.name) has no avatar now.")
        }
    }

    struct Remove: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a family member the acting user is the guardian of record of.")
        @Argument(help: "Family member id.") var familyMember: FamilyMemberID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
            try await services.family.remove(familyMember, as: actor)
            return DoneOutput(id: familyMember.description, removed: true)
        }

        func tell(_ done: DoneOutput) {
            print("Removed family member \(familyMember).")
        }
    }
}
