import ArgumentParser
import Foundation
import OrbitCore

// The operations the app gained over HTTP in issue 19 that `orbitctl` did not have yet, so that
// the CLI and the API keep offering the same things. Each is registered under its group
// (`user`, `community`, `event`, `expense`, `dues`) by its `commandName`.

/// `orbitctl user profile USER --as U`
struct UserProfileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile", abstract: "A user's public profile (name and avatar, never the email), as a co-member sees it.")
    @OptionGroup var database: DatabaseOptions
    @Argument(help: "User id or email.") var user: String
    @OptionGroup var actor: ActorOptions
    @OptionGroup var output: JSONOption

    func run() async throws {
        let profile = try await withServices(database) { services in
            try await services.users.profile(try await services.users.resolve(user), as: try await services.users.resolve(actor.actor))
        }
        if output.json { return try printJSON(profile) }
        printTable(["ID", "NAME", "AVATAR"], [[profile.id.description, profile.displayName, profile.avatarURL ?? ""]])
    }
}

/// `orbitctl user operator USER --grant|--revoke --as OPERATOR`
struct UserOperatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "operator",
        abstract: "Make a user an operator (who may set subscriptions over the API), or take it back. Audit-logged.",
        discussion: "Runs with the database's operator role: only someone with the server's database credentials can do it."
    )
    @OptionGroup var database: DatabaseOptions
    @Argument(help: "User id or email.") var user: String
    @Flag(exclusivity: .exclusive, help: "--grant makes the user an operator, --revoke takes it back.") var change: Change
    @OptionGroup var actor: ActorOptions
    @OptionGroup var output: JSONOption

    enum Change: EnumerableFlag {
        case grant, revoke
    }

    func run() async throws {
        let updated = try await withServices(database) { services in
            try await services.users.setOperator(
                try await services.users.resolve(user), change == .grant, as: try await services.users.resolve(actor.actor))
        }
        if output.json { return try printJSON(updated) }
        print("\(updated.email) is \(change == .grant ? "now" : "no longer") an operator.")
    }
}

/// `orbitctl community membership --community C --as U [--nickname N | --clear-nickname] [--notify TYPE=on|off …]`
struct CommunityMembershipCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "membership",
        abstract: "Show or change one's own membership: nickname and which notifications one gets.",
        discussion:
            "Without changes it shows the membership. Notification types: \(NotificationType.allCases.map(\.rawValue).joined(separator: ", "))."
    )
    @OptionGroup var database: DatabaseOptions
    @Option(help: "Community id.") var community: CommunityID
    @Option(help: "A nickname in this community.") var nickname: String?
    @Flag(help: "Remove the nickname.") var clearNickname = false
    @Option(help: "TYPE=on or TYPE=off, e.g. new_post=off (repeatable).") var notify: [String] = []
    @OptionGroup var actor: ActorOptions
    @OptionGroup var output: JSONOption

    func validate() throws {
        if nickname != nil && clearNickname { throw ValidationError("Give --nickname or --clear-nickname, not both.") }
    }

    func run() async throws {
        var prefs: [NotificationType: Bool] = [:]
        for item in notify {
            let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, let on = ["on": true, "off": false][pair[1]] else {
                throw CommandFailure("--notify takes TYPE=on or TYPE=off (got \"\(item)\").")
            }
            prefs[try NotificationType.parse(pair[0], field: "notify")] = on
        }
        let nicknameChange: String?? = clearNickname ? .some(nil) : nickname.map { .some($0) }
        let changes = nicknameChange != nil || !prefs.isEmpty
        let membership = try await withServices(database) { services in
            let acting = try await services.users.resolve(actor.actor)
            if !changes { return try await services.members.mine(in: community, as: acting) }
            return try await services.members.updateMine(
                in: community, nickname: nicknameChange, notificationPrefs: prefs.isEmpty ? nil : prefs, as: acting)
        }
        if output.json { return try printJSON(membership) }
        let off = membership.notificationPrefs.filter { !$0.value }.keys.sorted()
        printTable(
            ["ROLE", "NICKNAME", "NOTIFICATIONS OFF"],
            [[membership.member.role.rawValue, membership.member.nickname ?? "", off.isEmpty ? "none" : off.joined(separator: ", ")]])
    }
}

/// `orbitctl event rsvps EVENT --as U [--occurrence T] [--limit N] [--cursor C]`
struct EventRSVPsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rsvps", abstract: "Who is coming: every answer with names, notes, plus-ones and family members.")
    @OptionGroup var database: DatabaseOptions
    @Argument(help: "Event id.") var event: EventID
    @Option(help: "For a recurring event: the occurrence's original start (RFC 3339).") var occurrence: Timestamp?
    @OptionGroup var page: PageOptions
    @OptionGroup var actor: ActorOptions
    @OptionGroup var output: JSONOption

    func run() async throws {
        let answers = try await withServices(database) { services in
            try await services.events.rsvps(
                event, occurrence: occurrence?.date, limit: page.limit, cursor: page.cursor, as: try await services.users.resolve(actor.actor))
        }
        if output.json { return try printJSON(answers) }
        printPage(answers, ["NAME", "FAMILY MEMBER", "STATUS", "PLUS ONES", "NOTE"]) {
            [$0.displayName, $0.familyMemberName ?? "", $0.rsvp.status.rawValue, String($0.rsvp.plusOnes), $0.rsvp.note ?? ""]
        }
    }
}

/// `orbitctl event unrsvp EVENT --as U [--occurrence T] [--family-member F]`
struct EventWithdrawRSVPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unrsvp", abstract: "Take back one's answer to an event, or one's family member's.")
    @OptionGroup var database: DatabaseOptions
    @Argument(help: "Event id.") var event: EventID
    @Option(help: "For a recurring event: the occurrence's original start (RFC 3339).") var occurrence: Timestamp?
    @Option(help: "The answer of this family member of yours.") var familyMember: FamilyMemberID?
    @OptionGroup var actor: ActorOptions
    @OptionGroup var output: JSONOption

    func run() async throws {
        try await withServices(database) { services in
            try await services.events.withdrawRSVP(
                event, occurrence: occurrence?.date, familyMember: familyMember, as: try await services.users.resolve(actor.actor))
        }
        if output.json { return try printJSON(DoneOutput(id: event.description, removed: true)) }
        print("Answer to event \(event) withdrawn.")
    }
}

/// `orbitctl expense settle-split SPLIT --as U [--via METHOD]`
struct ExpenseSettleSplitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settle-split",
        abstract: "Mark one split settled (its debtor, the payer or an admin); it stays in the balances, as settled.")
    @OptionGroup var database: DatabaseOptions
    @Argument(help: "Split id (an expense's `splits[].id`).") var split: SplitID
    @Option(help: "How it was paid (cash, venmo, …).") var via: String?
    @OptionGroup var actor: ActorOptions
    @OptionGroup var output: JSONOption

    func run() async throws {
        let expense = try await withServices(database) { services in
            try await services.finances.settleSplit(split, via: via, as: try await services.users.resolve(actor.actor))
        }
        if output.json { return try printJSON(expense) }
        print("Split \(split) of expense \(expense.id) settled.")
    }
}

/// `orbitctl dues update DUES [--name N] [--amount A] [--due-date D] --as U`
struct DuesUpdateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update", abstract: "Change dues' name, amount or due date (admins); never below what a member already paid.")
    @OptionGroup var database: DatabaseOptions
    @Argument(help: "Dues id.") var dues: DuesID
    @Option(help: "New name.") var name: String?
    @Option(help: "New amount per member, in the dues' currency (50.00; \(MoneyHelp.amounts)).") var amount: String?
    @Option(help: "New due date, YYYY-MM-DD.") var dueDate: String?
    @OptionGroup var actor: ActorOptions
    @OptionGroup var output: JSONOption

    func run() async throws {
        let day = try dueDate.map { try CivilDate.parse($0, field: "due_date") }
        let updated = try await withServices(database) { services in
            let acting = try await services.users.resolve(actor.actor)
            var money: Money?
            if let amount {
                let current = try await services.dues.get(dues, as: acting)
                money = try Money(parsing: amount, currency: try Currency.parse(current.currency))
            }
            return try await services.dues.update(dues, name: name, amount: money, dueDate: day, as: acting)
        }
        if output.json { return try printJSON(updated) }
        print(
            "Dues \(updated.id): \(updated.name), \(Money(minorUnits: updated.amount, currency: Currency(updated.currency) ?? .usd)) due \(updated.dueDate)."
        )
    }
}

/// `orbitctl dues payments DUES --as U [--limit N] [--cursor C]`
struct DuesPaymentsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "payments", abstract: "Dues' individual payments, newest first (admins see all, a member their own).")
    @OptionGroup var database: DatabaseOptions
    @Argument(help: "Dues id.") var dues: DuesID
    @OptionGroup var page: PageOptions
    @OptionGroup var actor: ActorOptions
    @OptionGroup var output: JSONOption

    func run() async throws {
        let payments = try await withServices(database) { services in
            try await services.dues.payments(of: dues, limit: page.limit, cursor: page.cursor, as: try await services.users.resolve(actor.actor))
        }
        if output.json { return try printJSON(payments) }
        printPage(payments, ["PAID", "USER", "AMOUNT", "METHOD", "NOTE"]) {
            [
                show($0.paidAt), $0.userID.description, Money(minorUnits: $0.amountPaid, currency: Currency($0.currency) ?? .usd).description,
                $0.paymentMethod ?? "", $0.notes ?? "",
            ]
        }
    }
}

/// `orbitctl device register|list|remove --as U`: a user's APNs device tokens, as the app
/// registers them over HTTP.
struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "A user's APNs device tokens (where their pushes go).", subcommands: [Register.self, List.self, Remove.self])

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register (or refresh) a device token for the acting user; a token another user had moves to them.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The APNs device token, in hex.") var token: String
        @Option(help: "sandbox (development builds) or production (TestFlight, App Store).") var environment: APNsEnvironment
        @Option(help: "The app's bundle id (the pushes' apns-topic).") var bundleID: String
        @Option(help: "The device's language, e.g. en-US.") var locale: String?
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let device = try await withServices(database) { services in
                try await services.devices.register(
                    token: token, environment: environment, bundleID: bundleID, locale: locale, as: try await services.users.resolve(actor.actor))
            }
            if output.json { return try printJSON(device) }
            print("Registered device \(device.token) (\(device.environment)).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The acting user's devices, newest first.")
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let devices = try await withServices(database) { services in
                try await services.devices.list(as: try await services.users.resolve(actor.actor))
            }
            if output.json { return try printJSON(devices) }
            printTable(
                ["TOKEN", "ENVIRONMENT", "BUNDLE", "LOCALE", "UPDATED"],
                devices.map { [$0.token, $0.environment.rawValue, $0.bundleID, $0.locale ?? "", show($0.updatedAt)] })
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove one of the acting user's device tokens.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The APNs device token, in hex.") var token: String
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            try await withServices(database) { services in
                try await services.devices.remove(token: token, as: try await services.users.resolve(actor.actor))
            }
            if output.json { return try printJSON(DoneOutput(id: token, removed: true)) }
            print("Removed device \(token).")
        }
    }
}
