import ArgumentParser
import Foundation
import OrbitCore

extension ChoreDifficulty: ExpressibleByArgument {}

/// Ids of people who do chores and hold points: user ids or family member ids, comma-separated.
private func holderIDs(_ text: String, option: String) throws -> [UUID] {
    let parts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    var ids: [UUID] = []
    for part in parts {
        guard let id = UUID(uuidString: part) else {
            throw ValidationError("\(option) takes user or family member ids separated by commas; '\(part)' is not one.")
        }
        ids.append(id)
    }
    guard !ids.isEmpty else { throw ValidationError("\(option) needs at least one id.") }
    return ids
}

private func holderID(_ text: String?, option: String) throws -> UUID? {
    guard let text else { return nil }
    guard let id = UUID(uuidString: text) else { throw ValidationError("\(option) takes a user id or a family member id.") }
    return id
}

private func describe(_ holder: Holder) -> String {
    switch holder {
    case .user(let id): "user \(id)"
    case .familyMember(let id): "family member \(id)"
    }
}

/// `orbitctl chore …`: household chores (docs/chores.md).
struct ChoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chore", abstract: "Chores: set by admins (parents), done by members and their family members for points.",
        subcommands: [Create.self, List.self, Complete.self, Review<Approve>.self, Review<Reject>.self, Completions.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set a chore (admins).")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "What to do (at most 200 characters).") var title: String
        @Option(help: "More about it.") var description: String?
        @Option(help: "Points it earns (1 to 1,000).") var points: Int
        @Option(help: "easy, medium or hard.") var difficulty: ChoreDifficulty = .easy
        @Option(help: "A category (at most 50 characters).") var category: String?
        @Option(help: "Who does it: user ids or family member ids, comma-separated.") var assign: String
        @Option(help: "When it is due (RFC 3339, e.g. 2026-11-28T18:00:00+01:00); a recurring chore's first occurrence.")
        var due: Timestamp?
        @Option(help: "Recurrence (RRULE, e.g. FREQ=WEEKLY;BYDAY=SA), in the community's time zone; needs --due.") var rrule: String?
        @Flag(help: "Credit the points when done, without a parent's approval.") var noApproval = false
        @Option(help: "How many days back an occurrence may still be marked done: today and N days before (0 to 31).")
        var windowDays = ChoreService.defaultCompletionWindowDays
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let assignees = try holderIDs(assign, option: "--assign")
            let chore = try await acting.run { services, actor in
                try await services.chores.create(
                    .init(
                        title: title, description: description, points: points, difficulty: difficulty, category: category, dueAt: due?.date,
                        recurrenceRule: rrule, requiresApproval: !noApproval, completionWindowDays: windowDays, assignees: assignees),
                    in: community, as: actor)
            }
            if output.json { return try printJSON(chore) }
            print("Set chore \(chore.id) (\(chore.title), \(chore.points) points) for \(chore.assignees.count) people.")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The community's chores, or one person's, with the occurrence now due.")
        @Option(help: "Community id.") var community: CommunityID
        @Option(name: .customLong("for"), help: "Only this person's: a user id or a family member id.") var holder: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let holder = try holderID(holder, option: "--for")
            let chores = try await acting.run { services, actor in
                try await services.chores.list(in: community, for: holder, as: .user(actor))
            }
            if output.json { return try printJSON(chores) }
            printTable(
                ["ID", "TITLE", "POINTS", "NEXT", "DONE", "ASSIGNEES"],
                chores.map {
                    [
                        $0.id.description, $0.title, String($0.points), show($0.nextOccurrenceAt), $0.nextOccurrenceDone ? "yes" : "no",
                        String($0.assignees.count),
                    ]
                })
        }
    }

    struct Complete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Mark a chore done: by an assignee, recorded by them, their parent, or an admin for a family member.")
        @Argument(help: "Chore id.") var chore: ChoreID
        @Option(help: "Which occurrence (RFC 3339); default: the one now due (today's for a recurring chore).") var occurrence: Timestamp?
        @Option(help: "Who did it: a user id or a family member id (default: the acting user).") var by: String?
        @Option(help: "A note for the parents.") var note: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let holder = try holderID(by, option: "--by")
            let completion = try await acting.run { services, actor in
                try await services.chores.complete(
                    chore, occurrence: occurrence?.date, by: holder, note: note, as: .user(actor))
            }
            if output.json { return try printJSON(completion) }
            print("Completion \(completion.id) by \(describe(completion.holder)): \(completion.status.rawValue), \(completion.points) points.")
        }
    }

    /// What `Review` decides: `chore approve` or `chore reject`.
    protocol Verdict {
        static var approve: Bool { get }
        static var name: String { get }
        static var abstract: String { get }
    }
    enum Approve: Verdict {
        static let approve = true
        static let name = "approve"
        static let abstract = "Approve a completion: its points are credited (admins)."
    }
    enum Reject: Verdict {
        static let approve = false
        static let name = "reject"
        static let abstract = "Reject a completion: no points; the occurrence may be done again (admins)."
    }

    /// `chore approve` and `chore reject`: one command, the verdict its parameter.
    struct Review<Choice: Verdict>: AsyncParsableCommand {
        static var configuration: CommandConfiguration { CommandConfiguration(commandName: Choice.name, abstract: Choice.abstract) }
        @Argument(help: "Completion id.") var completion: ChoreCompletionID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let reviewed = try await acting.run { services, actor in
                try await services.chores.review(completion, approve: Choice.approve, as: actor)
            }
            if output.json { return try printJSON(reviewed) }
            print(Choice.approve ? "Approved \(reviewed.id): \(reviewed.points) points to \(describe(reviewed.holder))." : "Rejected \(reviewed.id).")
        }
    }

    struct Completions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Completions of the community's chores, newest first.")
        @Option(help: "Community id.") var community: CommunityID
        @Flag(help: "Only those waiting for approval.") var pending = false
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let completions = try await acting.run { services, actor in
                try await services.chores.completions(in: community, pendingOnly: pending, as: .user(actor))
            }
            if output.json { return try printJSON(completions) }
            printTable(
                ["ID", "CHORE", "BY", "STATUS", "POINTS", "OCCURRENCE"],
                completions.map {
                    [$0.id.description, $0.choreID.description, describe($0.holder), $0.status.rawValue, String($0.points), show($0.occurrenceAt)]
                })
        }
    }
}

/// `orbitctl reward …`: what points buy.
struct RewardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reward", abstract: "Rewards: set by admins, redeemed with points; a cancellation refunds.",
        subcommands: [Create.self, List.self, Redeem.self, Resolve<Fulfil>.self, Resolve<Cancel>.self, Redemptions.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a reward (admins).")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "What it is (at most 200 characters).") var title: String
        @Option(help: "More about it.") var description: String?
        @Option(help: "Its cost in points (at least 1).") var cost: Int
        @Option(help: "How many there are (default: unlimited).") var stock: Int?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let reward = try await acting.run { services, actor in
                try await services.chores.createReward(
                    in: community, title: title, description: description, cost: cost, stock: stock,
                    as: actor)
            }
            if output.json { return try printJSON(reward) }
            print("Added reward \(reward.id) (\(reward.title), \(reward.pointsCost) points).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The community's rewards.")
        @Option(help: "Community id.") var community: CommunityID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let rewards = try await acting.run { services, actor in
                try await services.chores.rewards(in: community, as: .user(actor))
            }
            if output.json { return try printJSON(rewards) }
            printTable(
                ["ID", "TITLE", "COST", "STOCK", "AVAILABLE"],
                rewards.map { [$0.id.description, $0.title, String($0.pointsCost), $0.stock.map(String.init) ?? "-", $0.available ? "yes" : "no"] })
        }
    }

    struct Redeem: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Redeem a reward: its cost is debited at once.")
        @Argument(help: "Reward id.") var reward: RewardID
        @Option(help: "For whom: a user id or a family member id (default: the acting user).") var by: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let holder = try holderID(by, option: "--by")
            let redemption = try await acting.run { services, actor in
                try await services.chores.redeem(reward, by: holder, as: .user(actor))
            }
            if output.json { return try printJSON(redemption) }
            print("Redemption \(redemption.id) for \(describe(redemption.holder)): \(redemption.pointsCost) points.")
        }
    }

    /// What `Resolve` does to a redemption: `reward fulfil` or `reward cancel`.
    protocol Resolution {
        static var fulfil: Bool { get }
        static var name: String { get }
        static var abstract: String { get }
    }
    enum Fulfil: Resolution {
        static let fulfil = true
        static let name = "fulfil"
        static let abstract = "Mark a redemption fulfilled (admins)."
    }
    enum Cancel: Resolution {
        static let fulfil = false
        static let name = "cancel"
        static let abstract = "Cancel a redemption: its points are refunded (admins)."
    }

    /// `reward fulfil` and `reward cancel`: one command, the resolution its parameter.
    struct Resolve<Choice: Resolution>: AsyncParsableCommand {
        static var configuration: CommandConfiguration { CommandConfiguration(commandName: Choice.name, abstract: Choice.abstract) }
        @Argument(help: "Redemption id.") var redemption: RedemptionID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let resolved = try await acting.run { services, actor in
                try await services.chores.resolveRedemption(redemption, fulfil: Choice.fulfil, as: actor)
            }
            if output.json { return try printJSON(resolved) }
            print(Choice.fulfil ? "Fulfilled \(resolved.id)." : "Cancelled \(resolved.id): \(resolved.pointsCost) points refunded.")
        }
    }

    struct Redemptions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Redemptions in the community, newest first.")
        @Option(help: "Community id.") var community: CommunityID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let redemptions = try await acting.run { services, actor in
                try await services.chores.redemptions(in: community, as: .user(actor))
            }
            if output.json { return try printJSON(redemptions) }
            printTable(
                ["ID", "REWARD", "FOR", "COST", "STATUS"],
                redemptions.map { [$0.id.description, $0.rewardID.description, describe($0.holder), String($0.pointsCost), $0.status.rawValue] })
        }
    }
}

/// `orbitctl points …`: balances and adjustments.
struct PointsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "points", abstract: "Points: a person's balance and lifetime earned; adjustments by admins.",
        subcommands: [Show.self, Adjust.self]
    )

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A person's points in a community.")
        @Option(help: "Community id.") var community: CommunityID
        @Option(name: .customLong("for"), help: "Whose: a user id or a family member id (default: the acting user).") var holder: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let holder = try holderID(holder, option: "--for")
            let account = try await acting.run { services, actor in
                try await services.chores.points(in: community, for: holder, as: .user(actor))
            }
            if output.json { return try printJSON(account) }
            print("Balance \(account.balance) points; earned \(account.lifetimeEarned) in all.")
        }
    }

    struct Adjust: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Give (+N) or take (-N) points, with a reason (admins).")
        @Option(help: "Community id.") var community: CommunityID
        @Option(name: .customLong("for"), help: "Whose: a user id or a family member id.") var holder: String
        @Option(help: "Points to add (negative: to take).") var delta: Int
        @Option(help: "Why (at most 500 characters).") var reason: String
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            guard let holder = UUID(uuidString: holder) else { throw ValidationError("--for takes a user id or a family member id.") }
            let account = try await acting.run { services, actor in
                try await services.chores.adjust(
                    in: community, for: holder, delta: delta, reason: reason, as: actor)
            }
            if output.json { return try printJSON(account) }
            print("Balance now \(account.balance) points.")
        }
    }
}
