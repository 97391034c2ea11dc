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

private func describeHolder(_ holder: Holder) -> String {
    switch holder {
    case .user(let id): "user \(id)"
    case .familyMember(let id): "family member \(id)"
    }
}

/// `orbitctl chore …`: household chores (docs/chores.md).
struct ChoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chore", abstract: "Chores: set by admins (parents), done by members and their family members for points.",
        subcommands: [
            Create.self, List.self, Update.self, Archive.self, Unarchive.self, Delete.self, Complete.self, Decide<Approve>.self, Decide<Reject>.self,
            Completions.self,
        ]
    )

    struct Create: ActingCommand {
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
        @Flag(help: "Marking it done needs a photo (an image uploaded to the community).") var requiresPhoto = false
        @Option(help: "How many days back an occurrence may still be marked done: today and N days before (0 to 31).")
        var windowDays = ChoreService.defaultCompletionWindowDays
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Chore {
            let assignees = try holderIDs(assign, option: "--assign")
            return try await services.chores.create(
                .init(
                    title: title, description: description, points: points, difficulty: difficulty, category: category, dueAt: due?.date,
                    recurrenceRule: rrule, requiresApproval: !noApproval, completionWindowDays: windowDays, assignees: assignees,
                    requiresPhoto: requiresPhoto),
                in: community, as: actor)
        }

        func tell(_ chore: Chore) {
            print("Set chore \(chore.id) (\(chore.title), \(chore.points) points) for \(chore.assignees.count) people.")
        }
    }

    struct Update: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a chore (admins): what is not given stays. Points already earned stay as credited.")
        @Argument(help: "Chore id.") var chore: ChoreID
        @Option(help: "What to do (at most 200 characters).") var title: String?
        @Option(help: "More about it.") var description: String?
        @Flag(help: "Remove the description.") var noDescription = false
        @Option(help: "Points it earns from now on (1 to 1,000).") var points: Int?
        @Option(help: "easy, medium or hard.") var difficulty: ChoreDifficulty?
        @Option(help: "A category (at most 50 characters).") var category: String?
        @Option(help: "Who does it, all of them: user ids or family member ids, comma-separated.") var assign: String?
        @Option(help: "When it is due (RFC 3339); a recurring chore's first occurrence.") var due: Timestamp?
        @Option(help: "A new recurrence (RRULE), in the community's time zone.") var rrule: String?
        @Flag(help: "Make it happen once (no recurrence).") var once = false
        @Option(help: "A recurring chore's last day (YYYY-MM-DD, the community's): it ends there.") var endsOn: String?
        @Option(help: "Whether the points need a parent's approval (true or false).") var approval: Bool?
        @Option(help: "Whether marking it done needs a photo (true or false).") var photo: Bool?
        @Option(help: "How many days back an occurrence may still be marked done (0 to 31).") var windowDays: Int?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Chore {
            let change = ChoreService.ChoreChange(
                title: title, description: noDescription ? .some(nil) : description.map { .some($0) }, points: points, difficulty: difficulty,
                category: category.map { .some($0) }, dueAt: due.map { .some($0.date) }, recurrenceRule: once ? .some(nil) : rrule.map { .some($0) },
                requiresApproval: approval, completionWindowDays: windowDays, assignees: try assign.map { try holderIDs($0, option: "--assign") },
                endsOn: try endsOn.map { try CivilDate.parse($0, field: "ends-on") }, requiresPhoto: photo)
            return try await services.chores.update(chore, change, as: actor)
        }

        func tell(_ chore: Chore) {
            print("Changed chore \(chore.id) (\(chore.title), \(chore.points) points\(chore.recurrenceRule.map { ", \($0)" } ?? "")).")
        }
    }

    struct Archive: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Archive a chore (admins): off the lists; its completions and points stay.")
        @Argument(help: "Chore id.") var chore: ChoreID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Chore { try await services.chores.setArchived(chore, true, as: actor) }
        func tell(_ chore: Chore) { print("Archived chore \(chore.id) (\(chore.title)).") }
    }

    struct Unarchive: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Bring an archived chore back (admins).")
        @Argument(help: "Chore id.") var chore: ChoreID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Chore { try await services.chores.setArchived(chore, false, as: actor) }
        func tell(_ chore: Chore) { print("Unarchived chore \(chore.id) (\(chore.title)).") }
    }

    struct Delete: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a chore nobody has done yet (admins); one with completions is archived instead.")
        @Argument(help: "Chore id.") var chore: ChoreID
        @OptionGroup var acting: ActingOptions
        var output: TextOutput { TextOutput() }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> ChoreID {
            try await services.chores.delete(chore, as: actor)
            return chore
        }

        func tell(_ chore: ChoreID) { print("Deleted chore \(chore).") }
    }

    struct List: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "The community's chores, or one person's, with the occurrence now due.")
        @Option(help: "Community id.") var community: CommunityID
        @Option(name: .customLong("for"), help: "Only this person's: a user id or a family member id.") var holder: String?
        @Flag(help: "Archived chores too.") var archived = false
        @OptionGroup var page: PageOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<Chore> {
            let holder = try holderID(holder, option: "--for")
            return try await services.chores.list(
                in: community, for: holder, archived: archived, limit: page.limit, cursor: page.cursor, as: .user(actor))
        }

        func tell(_ chores: Page<Chore>) {
            printPage(chores, ["ID", "TITLE", "POINTS", "NEXT", "DONE", "ASSIGNEES", "ARCHIVED"]) {
                [
                    $0.id.description, $0.title, String($0.points), show($0.nextOccurrenceAt), $0.nextOccurrenceDone ? "yes" : "no",
                    String($0.assignees.count), $0.archivedAt.map(show) ?? "",
                ]
            }
        }
    }

    struct Complete: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Mark a chore done: by an assignee, recorded by them, their parent, or an admin for a family member.")
        @Argument(help: "Chore id.") var chore: ChoreID
        @Option(help: "Which occurrence (RFC 3339); default: the one now due (today's for a recurring chore).") var occurrence: Timestamp?
        @Option(help: "Who did it: a user id or a family member id (default: the acting user).") var by: String?
        @Option(help: "A note for the parents.") var note: String?
        @Option(help: "The photo proof: the id of an image uploaded to the community (`media upload`).") var photo: MediaID?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> ChoreCompletion {
            let holder = try holderID(by, option: "--by")
            return try await services.chores.complete(
                chore, occurrence: occurrence?.date, by: holder, note: note, photo: photo, as: .user(actor))
        }

        func tell(_ completion: ChoreCompletion) {
            print("Completion \(completion.id) by \(describeHolder(completion.holder)): \(completion.status.rawValue), \(completion.points) points.")
        }
    }

    /// `chore approve`: its points are credited.
    enum Approve: Decision {
        static let name = "approve"
        static let abstract = "Approve a completion: its points are credited (admins)."
        static let subject = (name: "completion", help: "Completion id.")
        static func decide(_ id: ChoreCompletionID, _ services: OrbitServices, as actor: UserID) async throws -> ChoreCompletion {
            return try await services.chores.review(id, approve: true, as: actor)
        }
        static func describe(_ reviewed: ChoreCompletion) -> String {
            "Approved \(reviewed.id): \(reviewed.points) points to \(describeHolder(reviewed.holder))."
        }
    }

    /// `chore reject`: no points; the occurrence may be done again.
    enum Reject: Decision {
        static let name = "reject"
        static let abstract = "Reject a completion: no points; the occurrence may be done again (admins)."
        static let subject = (name: "completion", help: "Completion id.")
        static func decide(_ id: ChoreCompletionID, _ services: OrbitServices, as actor: UserID) async throws -> ChoreCompletion {
            return try await services.chores.review(id, approve: false, as: actor)
        }
        static func describe(_ reviewed: ChoreCompletion) -> String { "Rejected \(reviewed.id)." }
    }

    struct Completions: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Completions of the community's chores, newest first.")
        @Option(help: "Community id.") var community: CommunityID
        @Flag(help: "Only those waiting for approval.") var pending = false
        @OptionGroup var page: PageOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<ChoreCompletion> {
            try await services.chores.completions(in: community, pendingOnly: pending, limit: page.limit, cursor: page.cursor, as: .user(actor))
        }

        func tell(_ completions: Page<ChoreCompletion>) {
            printPage(completions, ["ID", "CHORE", "BY", "STATUS", "POINTS", "OCCURRENCE", "PHOTO"]) {
                [
                    $0.id.description, $0.choreID.description, describeHolder($0.holder), $0.status.rawValue, String($0.points),
                    show($0.occurrenceAt), $0.photoMediaID?.description ?? "",
                ]
            }
        }
    }
}

/// `orbitctl reward …`: what points buy.
struct RewardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reward", abstract: "Rewards: set by admins, redeemed with points; a cancellation refunds.",
        subcommands: [
            Create.self, List.self, Update.self, Archive.self, Unarchive.self, Redeem.self, Decide<Fulfil>.self, Decide<Cancel>.self,
            Redemptions.self,
        ]
    )

    struct Create: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Add a reward (admins).")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "What it is (at most 200 characters).") var title: String
        @Option(help: "More about it.") var description: String?
        @Option(help: "Its cost in points (at least 1).") var cost: Int
        @Option(help: "How many there are (default: unlimited).") var stock: Int?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Reward {
            return try await services.chores.createReward(
                in: community, title: title, description: description, cost: cost, stock: stock,
                as: actor)
        }

        func tell(_ reward: Reward) {
            print("Added reward \(reward.id) (\(reward.title), \(reward.pointsCost) points).")
        }
    }

    struct List: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "The community's rewards, cheapest first: hidden ones too for admins, the others see those on offer.")
        @Option(help: "Community id.") var community: CommunityID
        @Flag(help: "Archived rewards too (admins).") var archived = false
        @OptionGroup var page: PageOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<Reward> {
            try await services.chores.rewards(in: community, archived: archived, limit: page.limit, cursor: page.cursor, as: .user(actor))
        }

        func tell(_ rewards: Page<Reward>) {
            printPage(rewards, ["ID", "TITLE", "COST", "STOCK", "SHOWN", "ARCHIVED"]) {
                [
                    $0.id.description, $0.title, String($0.pointsCost), $0.stock.map(String.init) ?? "-", $0.available ? "yes" : "no",
                    $0.archivedAt.map(show) ?? "",
                ]
            }
        }
    }

    struct Update: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a reward (admins): what is not given stays. A redemption already asked for keeps its cost.")
        @Argument(help: "Reward id.") var reward: RewardID
        @Option(help: "What it is (at most 200 characters).") var title: String?
        @Option(help: "More about it.") var description: String?
        @Flag(help: "Remove the description.") var noDescription = false
        @Option(help: "Its cost in points from now on (1 to 1,000,000).") var cost: Int?
        @Option(help: "How many are left (0 to 1,000,000).") var stock: Int?
        @Flag(help: "No limit on how many.") var unlimited = false
        @Flag(help: "Hide it: off the children's lists, nobody redeems it.") var hide = false
        @Flag(help: "Show it again.") var show = false
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            if hide && show { throw ValidationError("--hide and --show: one or the other.") }
            if unlimited && stock != nil { throw ValidationError("--stock and --unlimited: one or the other.") }
            if noDescription && description != nil { throw ValidationError("--description and --no-description: one or the other.") }
        }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Reward {
            let change = ChoreService.RewardChange(
                title: title, description: noDescription ? .some(nil) : description.map { .some($0) }, pointsCost: cost,
                stock: unlimited ? .some(nil) : stock.map { .some($0) }, available: hide ? false : (show ? true : nil))
            return try await services.chores.updateReward(reward, change, as: actor)
        }

        func tell(_ reward: Reward) {
            print("Changed reward \(reward.id) (\(reward.title), \(reward.pointsCost) points\(reward.available ? "" : ", hidden")).")
        }
    }

    struct Archive: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Archive a reward (admins): off the lists, nobody redeems it; redemptions asked for stay.")
        @Argument(help: "Reward id.") var reward: RewardID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Reward {
            try await services.chores.setRewardArchived(reward, true, as: actor)
        }
        func tell(_ reward: Reward) { print("Archived reward \(reward.id) (\(reward.title)).") }
    }

    struct Unarchive: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Bring an archived reward back (admins).")
        @Argument(help: "Reward id.") var reward: RewardID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Reward {
            try await services.chores.setRewardArchived(reward, false, as: actor)
        }
        func tell(_ reward: Reward) { print("Unarchived reward \(reward.id) (\(reward.title)).") }
    }

    struct Redeem: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Redeem a reward: its cost is debited at once.")
        @Argument(help: "Reward id.") var reward: RewardID
        @Option(help: "For whom: a user id or a family member id (default: the acting user).") var by: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> RewardRedemption {
            let holder = try holderID(by, option: "--by")
            return try await services.chores.redeem(reward, by: holder, as: .user(actor))
        }

        func tell(_ redemption: RewardRedemption) {
            print("Redemption \(redemption.id) for \(describeHolder(redemption.holder)): \(redemption.pointsCost) points.")
        }
    }

    /// `reward fulfil`.
    enum Fulfil: Decision {
        static let name = "fulfil"
        static let abstract = "Mark a redemption fulfilled (admins)."
        static let subject = (name: "redemption", help: "Redemption id.")
        static func decide(_ id: RedemptionID, _ services: OrbitServices, as actor: UserID) async throws -> RewardRedemption {
            return try await services.chores.resolveRedemption(id, fulfil: true, as: actor)
        }
        static func describe(_ resolved: RewardRedemption) -> String { "Fulfilled \(resolved.id)." }
    }

    /// `reward cancel`: its points are refunded.
    enum Cancel: Decision {
        static let name = "cancel"
        static let abstract = "Cancel a redemption: its points are refunded (admins)."
        static let subject = (name: "redemption", help: "Redemption id.")
        static func decide(_ id: RedemptionID, _ services: OrbitServices, as actor: UserID) async throws -> RewardRedemption {
            return try await services.chores.resolveRedemption(id, fulfil: false, as: actor)
        }
        static func describe(_ resolved: RewardRedemption) -> String { "Cancelled \(resolved.id): \(resolved.pointsCost) points refunded." }
    }

    struct Redemptions: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Redemptions in the community, newest first.")
        @Option(help: "Community id.") var community: CommunityID
        @Flag(help: "Only those waiting to be fulfilled or cancelled.") var requested = false
        @OptionGroup var page: PageOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<RewardRedemption> {
            try await services.chores.redemptions(
                in: community, requestedOnly: requested, limit: page.limit, cursor: page.cursor, as: .user(actor))
        }

        func tell(_ redemptions: Page<RewardRedemption>) {
            printPage(redemptions, ["ID", "REWARD", "FOR", "COST", "STATUS"]) {
                [$0.id.description, $0.rewardID.description, describeHolder($0.holder), String($0.pointsCost), $0.status.rawValue]
            }
        }
    }
}

/// `orbitctl points …`: balances and adjustments.
struct PointsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "points", abstract: "Points: a person's balance and lifetime earned; adjustments by admins.",
        subcommands: [Show.self, Adjust.self]
    )

    struct Show: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "A person's points in a community.")
        @Option(help: "Community id.") var community: CommunityID
        @Option(name: .customLong("for"), help: "Whose: a user id or a family member id (default: the acting user).") var holder: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> PointsAccount {
            let holder = try holderID(holder, option: "--for")
            return try await services.chores.points(in: community, for: holder, as: .user(actor))
        }

        func tell(_ account: PointsAccount) {
            print("Balance \(account.balance) points; earned \(account.lifetimeEarned) in all.")
        }
    }

    struct Adjust: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Give (+N) or take (-N) points, with a reason (admins).")
        @Option(help: "Community id.") var community: CommunityID
        @Option(name: .customLong("for"), help: "Whose: a user id or a family member id.") var holder: String
        @Option(help: "Points to add (negative: to take).") var delta: Int
        @Option(help: "Why (at most 500 characters).") var reason: String
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> PointsAccount {
            guard let holder = UUID(uuidString: holder) else { throw ValidationError("--for takes a user id or a family member id.") }
            return try await services.chores.adjust(
                in: community, for: holder, delta: delta, reason: reason, as: actor)
        }

        func tell(_ account: PointsAccount) {
            print("Balance now \(account.balance) points.")
        }
    }
}
