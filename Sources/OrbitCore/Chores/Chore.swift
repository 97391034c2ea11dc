package import Foundation
import OrbitPostgres

package enum ChoreTag {}
package enum ChoreCompletionTag {}
package enum RewardTag {}
package enum RedemptionTag {}
package typealias ChoreID = Identifier<ChoreTag>
package typealias ChoreCompletionID = Identifier<ChoreCompletionTag>
package typealias RewardID = Identifier<RewardTag>
package typealias RedemptionID = Identifier<RedemptionTag>

package enum ChoreDifficulty: String, Sendable, Codable, CaseIterable {
    case easy, medium, hard
}

/// A chore: set by an admin (a parent) for some of the community's people, once (with an
/// optional due time) or recurring (an RRULE from `dueAt`, in the community's zone).
package struct Chore: Sendable, Codable, Equatable {
    package var id: ChoreID
    package var communityID: CommunityID
    package var title: String
    package var description: String?
    package var points: Int
    package var difficulty: ChoreDifficulty
    package var category: String?
    package var dueAt: Date?
    package var recurrenceRule: String?
    package var recurrenceTimezone: String?
    package var requiresApproval: Bool
    /// Whether marking it done needs a photo.
    package var requiresPhoto: Bool
    /// How many days back an occurrence may still be marked done: today and the N days before,
    /// in the chore's zone (a one-off chore without a due time: any time).
    package var completionWindowDays: Int
    /// The last occurrence of a rule with COUNT or UNTIL, when computed (not in the JSON).
    package var recurrenceEndsAt: Date?
    package var assignees: [Holder]
    package var createdBy: UserID?
    package var createdAt: Date
    /// When the chore itself last changed (not its completions), kept by the database.
    package var updatedAt: Date
    package var archivedAt: Date?
    /// The occurrence a completion now counts for (`ChoreService.currentOccurrence`), and
    /// whether it is done (completed and not rejected).
    package var nextOccurrenceAt: Date?
    package var nextOccurrenceDone: Bool

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", title, description, points, difficulty, category, dueAt = "due_at"
        case recurrenceRule = "recurrence_rule", recurrenceTimezone = "recurrence_timezone", requiresApproval = "requires_approval"
        case requiresPhoto = "requires_photo", completionWindowDays = "completion_window_days"
        case assignees, createdBy = "created_by", createdAt = "created_at", updatedAt = "updated_at", archivedAt = "archived_at"
        case nextOccurrenceAt = "next_occurrence_at", nextOccurrenceDone = "next_occurrence_done"
    }

    static let columns = """
        c.id, c.community_id, c.title, c.description, c.points, c.difficulty, c.category, c.due_at, c.recurrence_rule,
        c.recurrence_timezone, c.requires_approval, c.requires_photo, c.completion_window_days, c.recurrence_ends_at, c.created_by, c.created_at, c.updated_at,
        c.archived_at,
        (SELECT coalesce(jsonb_agg(jsonb_build_object('user_id', a.user_id, 'family_member_id', a.family_member_id)
                                   ORDER BY a.user_id NULLS LAST, a.family_member_id), '[]')
         FROM chore_assignees a WHERE a.chore_id = c.id) AS assignees
        """

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        communityID = try row.decode("community_id")
        title = try row.decode("title")
        description = try row.decode("description")
        points = Int(try row.decode("points", as: Int32.self))
        difficulty = ChoreDifficulty(rawValue: try row.decode("difficulty", as: String.self)) ?? .easy
        category = try row.decode("category")
        dueAt = try row.decode("due_at")
        recurrenceRule = try row.decode("recurrence_rule")
        recurrenceTimezone = try row.decode("recurrence_timezone")
        requiresApproval = try row.decode("requires_approval")
        requiresPhoto = try row.decode("requires_photo")
        completionWindowDays = Int(try row.decode("completion_window_days", as: Int16.self))
        recurrenceEndsAt = try row.decode("recurrence_ends_at")
        assignees = try row.decode("assignees", as: PostgresJSON.self).decode([Holder].self)
        createdBy = try row.decode("created_by")
        createdAt = try row.decode("created_at")
        updatedAt = try row.decode("updated_at")
        archivedAt = try row.decode("archived_at")
        nextOccurrenceAt = nil
        nextOccurrenceDone = false
    }
}

package enum CompletionStatus: String, Sendable, Codable, CaseIterable {
    case pending, approved, rejected
}

/// One occurrence of a chore, done: by whoever did it first; `pending` until a parent approves
/// or rejects it (approved at once when the chore needs no approval).
package struct ChoreCompletion: Sendable, Codable, Equatable {
    package var id: ChoreCompletionID
    package var choreID: ChoreID
    package var communityID: CommunityID
    package var occurrenceAt: Date
    package var holder: Holder
    package var recordedBy: UserID?
    package var status: CompletionStatus
    package var points: Int
    package var note: String?
    /// The photo proof: an image of the community (`GET /media/{id}`).
    package var photoMediaID: MediaID?
    package var completedAt: Date
    package var reviewedBy: UserID?
    package var reviewedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, choreID = "chore_id", communityID = "community_id", occurrenceAt = "occurrence_at", holder = "done_by"
        case recordedBy = "recorded_by", status, points, note, photoMediaID = "photo_media_id", completedAt = "completed_at"
        case reviewedBy = "reviewed_by"
        case reviewedAt = "reviewed_at"
    }

    static let columns = """
        id, chore_id, community_id, occurrence_at, user_id, family_member_id, recorded_by, status, points, note, photo_media_id,
        completed_at, reviewed_by, reviewed_at
        """

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        choreID = try row.decode("chore_id")
        communityID = try row.decode("community_id")
        occurrenceAt = try row.decode("occurrence_at")
        holder = try Holder(row: row)
        recordedBy = try row.decode("recorded_by")
        status = CompletionStatus(rawValue: try row.decode("status", as: String.self)) ?? .pending
        points = Int(try row.decode("points", as: Int32.self))
        note = try row.decode("note")
        photoMediaID = try row.decode("photo_media_id")
        completedAt = try row.decode("completed_at")
        reviewedBy = try row.decode("reviewed_by")
        reviewedAt = try row.decode("reviewed_at")
    }
}

/// Something to spend points on.
package struct Reward: Sendable, Codable, Equatable {
    package var id: RewardID
    package var communityID: CommunityID
    package var title: String
    package var description: String?
    package var pointsCost: Int
    package var available: Bool
    /// How many are left; nil: unlimited.
    package var stock: Int?
    package var createdBy: UserID?
    package var createdAt: Date
    /// When anything of it last changed (its stock too), kept by the database.
    package var updatedAt: Date
    /// Archived: off the lists, nobody redeems it; its redemptions stay.
    package var archivedAt: Date?
    /// A parent's reward for their own children (a parent who is not an admin set it): only their
    /// children redeem it. Nil: the community's, for everyone.
    package var familyOf: UserID?

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", title, description, pointsCost = "points_cost", available, stock
        case createdBy = "created_by", createdAt = "created_at", updatedAt = "updated_at", archivedAt = "archived_at", familyOf = "family_of"
    }

    static let columns =
        "id, community_id, title, description, points_cost, available, stock, created_by, created_at, updated_at, archived_at, family_of"

    init(row: PostgresRow) throws {
        let (cost, stock): (Int32, Int32?)
        (id, communityID, title, description, cost, available, stock, createdBy, createdAt, updatedAt, archivedAt, familyOf) = try row.decode(
            (RewardID, CommunityID, String, String?, Int32, Bool, Int32?, UserID?, Date, Date, Date?, UserID?).self)
        pointsCost = Int(cost)
        self.stock = stock.map(Int.init)
    }
}

package enum RedemptionStatus: String, Sendable, Codable, CaseIterable {
    case requested, fulfilled, cancelled
}

/// A reward asked for: debited at once; a parent fulfils it, or cancels it (a refund).
package struct RewardRedemption: Sendable, Codable, Equatable {
    package var id: RedemptionID
    package var rewardID: RewardID
    package var communityID: CommunityID
    package var holder: Holder
    package var pointsCost: Int
    package var status: RedemptionStatus
    package var requestedBy: UserID?
    package var requestedAt: Date
    package var resolvedBy: UserID?
    package var resolvedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, rewardID = "reward_id", communityID = "community_id", holder = "redeemed_by", pointsCost = "points_cost", status
        case requestedBy = "requested_by", requestedAt = "requested_at", resolvedBy = "resolved_by", resolvedAt = "resolved_at"
    }

    static let columns =
        "id, reward_id, community_id, user_id, family_member_id, points_cost, status, requested_by, requested_at, resolved_by, resolved_at"

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        rewardID = try row.decode("reward_id")
        communityID = try row.decode("community_id")
        holder = try Holder(row: row)
        pointsCost = Int(try row.decode("points_cost", as: Int32.self))
        status = RedemptionStatus(rawValue: try row.decode("status", as: String.self)) ?? .requested
        requestedBy = try row.decode("requested_by")
        requestedAt = try row.decode("requested_at")
        resolvedBy = try row.decode("resolved_by")
        resolvedAt = try row.decode("resolved_at")
    }
}

/// A holder's points in a community: the balance to spend and everything ever earned.
package struct PointsAccount: Sendable, Codable, Equatable {
    package var balance: Int
    package var lifetimeEarned: Int

    package init(balance: Int, lifetimeEarned: Int) {
        self.balance = balance
        self.lifetimeEarned = lifetimeEarned
    }

    enum CodingKeys: String, CodingKey { case balance, lifetimeEarned = "lifetime_earned" }
}

/// One holder's points in a community, as the change feed sends them (`points`): the account
/// `GET …/points?for={holder_id}` returns, with whose it is.
package struct HolderPoints: Sendable, Encodable {
    package var id: UUID
    package var communityID: CommunityID
    /// The user or family member the points are for.
    package var holderID: UUID
    package var balance: Int
    package var lifetimeEarned: Int
    package var updatedAt: Date

    static let columns = "id, community_id, holder_id, balance, lifetime_earned, updated_at"

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        communityID = try row.decode("community_id")
        holderID = try row.decode("holder_id")
        balance = Int(try row.decode("balance", as: Int32.self))
        lifetimeEarned = Int(try row.decode("lifetime_earned", as: Int32.self))
        updatedAt = try row.decode("updated_at")
    }

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", holderID = "holder_id", balance, lifetimeEarned = "lifetime_earned", updatedAt = "updated_at"
    }
}
