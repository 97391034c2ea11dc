import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl user …`
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Create, list and show users.",
        subcommands: [Create.self, List.self, Show.self, UserProfileCommand.self, UserOperatorCommand.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a user (as if they signed up).")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "Email address.") var email: String
        @Option(help: "Display name (at most 100 characters).") var name: String
        @Option(help: "Sign in with Apple id (default: a generated local id).") var appleID: String?
        @OptionGroup var output: JSONOption

        func run() async throws {
            let user = try await withServices(database) { try await $0.users.create(email: email, displayName: name, appleID: appleID) }
            if output.json { return try printJSON(user) }
            print("Created user \(user.id) (\(user.displayName) <\(user.email)>).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List all users (operator).")
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let users = try await withServices(database) { try await $0.users.list() }
            if output.json { return try printJSON(users) }
            printTable(["ID", "NAME", "EMAIL", "CREATED"], users.map { [$0.id.description, $0.displayName, $0.email, show($0.createdAt)] })
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a user (by id or email).")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "User id or email.") var user: String
        @OptionGroup var output: JSONOption

        func run() async throws {
            let found = try await withServices(database) { services in
                try await services.users.getAsOperator(try await services.users.resolve(user))
            }
            if output.json { return try printJSON(found) }
            printTable(
                ["ID", "NAME", "EMAIL", "APPLE ID", "CREATED"],
                [[found.id.description, found.displayName, found.email, found.appleID, show(found.createdAt)]])
        }
    }
}

/// `orbitctl family …`
struct FamilyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "family",
        abstract: "Manage a user's family members (dependents without a login).",
        subcommands: [Add.self, List.self, Rename.self, Remove.self, SetPIN.self, Pair.self, Devices.self]
    )

    struct SetPIN: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-pin", abstract: "Set a child's sign-in PIN (4 to 6 digits; the child's own parent only).")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "Family member id.") var member: FamilyMemberID
        @Option(help: "A community the child's parent is in.") var community: CommunityID
        @Option(help: "The PIN.") var pin: String
        @OptionGroup var actor: ActorOptions

        func run() async throws {
            try await withServices(database) { services in
                try await services.family.setPIN(pin, for: member, in: community, as: try await services.users.resolve(actor.actor))
            }
            print("PIN set for \(member).")
        }
    }

    struct Pair: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pair a device for a child: prints a one-time code for POST /auth/child (valid 15 minutes).",
            discussion: "The child's own parent only. The device's token reaches --community alone; a device unused for 30 days must be paired again."
        )
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "Family member id.") var member: FamilyMemberID
        @Option(help: "The community the device is for (the only one the child reaches on it).") var community: CommunityID
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let pairing = try await withServices(database) { services in
                try await services.family.startPairing(for: member, in: community, as: try await services.users.resolve(actor.actor))
            }
            if output.json { return try printJSON(pairing) }
            print("Pairing code \(pairing.pairingCode) (until \(show(pairing.expiresAt))).")
        }
    }

    /// `orbitctl family devices list|revoke`
    struct Devices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List or revoke the devices paired for a child (the child's own parent only).",
            subcommands: [ListDevices.self, Revoke.self]
        )

        struct ListDevices: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list", abstract: "List a child's devices for --community: pending, paired, expired or revoked.")
            @OptionGroup var database: DatabaseOptions
            @Argument(help: "Family member id.") var member: FamilyMemberID
            @Option(help: "The community the devices were paired for.") var community: CommunityID
            @OptionGroup var actor: ActorOptions
            @OptionGroup var output: JSONOption

            func run() async throws {
                let devices = try await withServices(database) { services in
                    try await services.family.devices(of: member, in: community, as: try await services.users.resolve(actor.actor))
                }
                if output.json { return try printJSON(devices) }
                printTable(
                    ["ID", "STATUS", "PAIRED", "LAST USED", "EXPIRES", "REVOKED"],
                    devices.map {
                        [$0.id.description, $0.status.rawValue, show($0.pairedAt), show($0.lastUsedAt), show($0.expiresAt), show($0.revokedAt)]
                    })
            }
        }

        struct Revoke: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Revoke one of a child's devices (--device), or all of them (--all): it signs in no more, and its tokens stop at once.")
            @OptionGroup var database: DatabaseOptions
            @Argument(help: "Family member id.") var member: FamilyMemberID
            @Option(help: "The community the devices were paired for.") var community: CommunityID
            @Option(help: "The device to revoke (its id, from `family devices list`).") var device: ChildDeviceID?
            @Flag(help: "Revoke every device of the child for --community, and any pairing code not used yet.") var all = false
            @OptionGroup var actor: ActorOptions
            @OptionGroup var output: JSONOption

            func validate() throws {
                guard (device != nil) != all else { throw ValidationError("Name one device with --device, or revoke them all with --all.") }
            }

            func run() async throws {
                try await withServices(database) { services in
                    try await services.family.revokeDevices(
                        of: member, in: community, device: device, as: try await services.users.resolve(actor.actor))
                }
                if output.json { return try printJSON(DoneOutput(id: device?.description ?? member.description, revoked: true)) }
                print(device.map { "Revoked device \($0)." } ?? "Revoked every device of \(member) for \(community).")
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a family member to the acting user.")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "Name (at most 100 characters).") var name: String
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let member = try await withServices(database) { services in
                try await services.family.add(name: name, as: try await services.users.resolve(actor.actor))
            }
            if output.json { return try printJSON(member) }
            print("Added family member \(member.id) (\(member.name)).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List family members of the acting user, or of --user.")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "Whose family members (id or email; default: the acting user's).") var user: String?
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let members = try await withServices(database) { services in
                let actor = try await services.users.resolve(actor.actor)
                let owner = try await user.asyncMap { try await services.users.resolve($0) }
                return try await services.family.list(of: owner, as: actor)
            }
            if output.json { return try printJSON(members) }
            printTable(["ID", "NAME", "USER", "CREATED"], members.map { [$0.id.description, $0.name, $0.userID.description, show($0.createdAt)] })
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename one of the acting user's family members.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "Family member id.") var familyMember: FamilyMemberID
        @Option(help: "New name.") var name: String
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let member = try await withServices(database) { services in
                try await services.family.rename(familyMember, to: name, as: try await services.users.resolve(actor.actor))
            }
            if output.json { return try printJSON(member) }
            print("Renamed family member \(member.id) to \(member.name).")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove one of the acting user's family members.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "Family member id.") var familyMember: FamilyMemberID
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            try await withServices(database) { services in
                try await services.family.remove(familyMember, as: try await services.users.resolve(actor.actor))
            }
            if output.json { return try printJSON(DoneOutput(id: familyMember.description, removed: true)) }
            print("Removed family member \(familyMember).")
        }
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
