import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    /// Chores, points and rewards (docs/chores.md). Every read and the child's own writes
    /// (mark done, redeem) take a user's or a child's token; the rest a user's.
    func addChoreRoutes(to router: RouterGroup<APIContext>) {
        struct NewChore: Decodable {
            var title: String
            var description: String?
            var points: Int
            var difficulty: String?
            var category: String?
            var dueAt: Date?
            var recurrenceRule: String?
            var requiresApproval: Bool?
            var completionWindowDays: Int?
            var assignees: [UUID]
            var requiresPhoto: Bool?
        }
        router.post("communities/:community_id/chores") { request, context in
            let body = try await request.decodeJSON(NewChore.self, context: context)
            let difficulty = try body.difficulty.map { text in
                guard let value = ChoreDifficulty(rawValue: text) else {
                    throw APIProblem.validation(field: "difficulty", "difficulty must be easy, medium or hard.")
                }
                return value
            }
            let new = ChoreService.NewChore(
                title: body.title, description: body.description, points: body.points, difficulty: difficulty ?? .easy, category: body.category,
                dueAt: body.dueAt, recurrenceRule: body.recurrenceRule, requiresApproval: body.requiresApproval ?? true,
                completionWindowDays: body.completionWindowDays ?? ChoreService.defaultCompletionWindowDays, assignees: body.assignees,
                requiresPhoto: body.requiresPhoto ?? false)
            let user = try context.requireUser()
            return try await creating(.chores, request, context: context, stored: { try await services.chores.get(ChoreID($0), as: .user(user)) }) {
                try await services.chores.create(new, in: try context.id("community_id"), as: user)
            }
        }
        router.get("communities/:community_id/chores") { request, context in
            let limit = try request.queryInt("limit", default: 100, range: 1...200)
            return JSON(
                try await services.chores.list(
                    in: try context.id("community_id"), for: try request.queryUUID("for"), archived: try request.queryBool("archived"),
                    limit: limit, cursor: request.query("cursor"), as: try context.requirePrincipal()))
        }
        router.get("chores/:chore_id") { _, context in
            JSON(try await services.chores.get(try context.id("chore_id"), as: try context.requirePrincipal()))
        }
        // Chores change (admins): what it says, its points, its schedule, who does it; archived,
        // unarchived, or deleted while nobody has done it.
        struct ChoreChange: Decodable, NullableFields {
            var title: String?
            var description: String??
            var points: Int?
            var difficulty: String?
            var category: String??
            var dueAt: Date??
            var recurrenceRule: String??
            var requiresApproval: Bool?
            var completionWindowDays: Int?
            var assignees: [UUID]?
            var endsOn: String?
            var requiresPhoto: Bool?
            static let nullableFields: Set<String> = ["description", "category", "due_at", "recurrence_rule"]

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                title = try container.decodeIfPresent(String.self, forKey: .title)
                description = try container.decodeNullable(String.self, forKey: .description)
                points = try container.decodeIfPresent(Int.self, forKey: .points)
                difficulty = try container.decodeIfPresent(String.self, forKey: .difficulty)
                category = try container.decodeNullable(String.self, forKey: .category)
                dueAt = try container.decodeNullable(Date.self, forKey: .dueAt)
                recurrenceRule = try container.decodeNullable(String.self, forKey: .recurrenceRule)
                requiresApproval = try container.decodeIfPresent(Bool.self, forKey: .requiresApproval)
                completionWindowDays = try container.decodeIfPresent(Int.self, forKey: .completionWindowDays)
                assignees = try container.decodeIfPresent([UUID].self, forKey: .assignees)
                endsOn = try container.decodeIfPresent(String.self, forKey: .endsOn)
                requiresPhoto = try container.decodeIfPresent(Bool.self, forKey: .requiresPhoto)
            }

            enum CodingKeys: String, CodingKey {
                case title, description, points, difficulty, category, dueAt, recurrenceRule, requiresApproval, completionWindowDays, assignees,
                    endsOn, requiresPhoto
            }
        }
        router.patch("chores/:chore_id") { request, context in
            let body = try await request.decodeJSON(ChoreChange.self, context: context)
            let difficulty = try body.difficulty.map { text in
                guard let value = ChoreDifficulty(rawValue: text) else {
                    throw APIProblem.validation(field: "difficulty", "difficulty must be easy, medium or hard.")
                }
                return value
            }
            let change = ChoreService.ChoreChange(
                title: body.title, description: body.description, points: body.points, difficulty: difficulty, category: body.category,
                dueAt: body.dueAt, recurrenceRule: body.recurrenceRule, requiresApproval: body.requiresApproval,
                completionWindowDays: body.completionWindowDays, assignees: body.assignees,
                endsOn: try body.endsOn.map { try CivilDate.parse($0, field: "ends_on") }, requiresPhoto: body.requiresPhoto)
            return JSON(try await services.chores.update(try context.id("chore_id"), change, as: try context.requireUser()))
        }
        router.post("chores/:chore_id/archive") { _, context in
            JSON(try await services.chores.setArchived(try context.id("chore_id"), true, as: try context.requireUser()))
        }
        router.post("chores/:chore_id/unarchive") { _, context in
            JSON(try await services.chores.setArchived(try context.id("chore_id"), false, as: try context.requireUser()))
        }
        router.delete("chores/:chore_id") { _, context in
            try await services.chores.delete(try context.id("chore_id"), as: try context.requireUser())
            return NoContent()
        }
        struct Completion: Decodable {
            var occurrence: Date?
            var by: UUID?
            var note: String?
            var photoMediaId: UUID?
        }
        router.post("chores/:chore_id/completions") { request, context in
            let body = try await request.decodeJSON(Completion.self, context: context)
            let principal = try context.requirePrincipal()
            return try await creating(
                .choreCompletions, request, context: context, stored: { try await services.chores.completion(ChoreCompletionID($0), as: principal) }
            ) {
                try await services.chores.complete(
                    try context.id("chore_id"), occurrence: body.occurrence, by: body.by, note: body.note, photo: body.photoMediaId.map(MediaID.init),
                    as: principal)
            }
        }
        router.get("communities/:community_id/chore-completions") { request, context in
            let status = request.query("status")
            guard status == nil || status == "pending" else { throw APIProblem.validation(field: "status", "status can only be pending.") }
            let limit = try request.queryInt("limit", default: 100, range: 1...200)
            return JSON(
                try await services.chores.completions(
                    in: try context.id("community_id"), pendingOnly: status == "pending", limit: limit, cursor: request.query("cursor"),
                    as: try context.requirePrincipal()))
        }
        for (verb, approve) in [("approve", true), ("reject", false)] {
            router.post("chore-completions/:completion_id/\(verb)") { _, context in
                JSON(try await services.chores.review(try context.id("completion_id"), approve: approve, as: try context.requireUser()))
            }
        }

        struct NewReward: Decodable {
            var title: String
            var description: String?
            var pointsCost: Int
            var stock: Int?
        }
        router.post("communities/:community_id/rewards") { request, context in
            let body = try await request.decodeJSON(NewReward.self, context: context)
            let user = try context.requireUser()
            return try await creating(
                .rewards, request, context: context, stored: { try await services.chores.reward(RewardID($0), as: .user(user)) }
            ) {
                try await services.chores.createReward(
                    in: try context.id("community_id"), title: body.title, description: body.description, cost: body.pointsCost, stock: body.stock,
                    as: user)
            }
        }
        router.get("communities/:community_id/rewards") { request, context in
            let limit = try request.queryInt("limit", default: 100, range: 1...200)
            return JSON(
                try await services.chores.rewards(
                    in: try context.id("community_id"), archived: try request.queryBool("archived"), limit: limit, cursor: request.query("cursor"),
                    as: try context.requirePrincipal()))
        }
        // Rewards change (admins): what they are, their cost from now on, their stock; hidden and
        // shown (`available`); archived and unarchived.
        struct RewardChange: Decodable, NullableFields {
            var title: String?
            var description: String??
            var pointsCost: Int?
            var stock: Int??
            var available: Bool?
            static let nullableFields: Set<String> = ["description", "stock"]

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                title = try container.decodeIfPresent(String.self, forKey: .title)
                description = try container.decodeNullable(String.self, forKey: .description)
                pointsCost = try container.decodeIfPresent(Int.self, forKey: .pointsCost)
                stock = try container.decodeNullable(Int.self, forKey: .stock)
                available = try container.decodeIfPresent(Bool.self, forKey: .available)
            }

            enum CodingKeys: String, CodingKey { case title, description, pointsCost, stock, available }
        }
        router.get("rewards/:reward_id") { _, context in
            JSON(try await services.chores.reward(try context.id("reward_id"), as: try context.requirePrincipal()))
        }
        router.patch("rewards/:reward_id") { request, context in
            let body = try await request.decodeJSON(RewardChange.self, context: context)
            let change = ChoreService.RewardChange(
                title: body.title, description: body.description, pointsCost: body.pointsCost, stock: body.stock, available: body.available)
            return JSON(try await services.chores.updateReward(try context.id("reward_id"), change, as: try context.requireUser()))
        }
        router.post("rewards/:reward_id/archive") { _, context in
            JSON(try await services.chores.setRewardArchived(try context.id("reward_id"), true, as: try context.requireUser()))
        }
        router.post("rewards/:reward_id/unarchive") { _, context in
            JSON(try await services.chores.setRewardArchived(try context.id("reward_id"), false, as: try context.requireUser()))
        }
        struct Redeem: Decodable {
            var by: UUID?
        }
        router.post("rewards/:reward_id/redemptions") { request, context in
            let body = try await request.decodeJSON(Redeem.self, context: context)
            let principal = try context.requirePrincipal()
            return try await creating(
                .rewardRedemptions, request, context: context, stored: { try await services.chores.redemption(RedemptionID($0), as: principal) }
            ) {
                try await services.chores.redeem(try context.id("reward_id"), by: body.by, as: principal)
            }
        }
        router.get("communities/:community_id/reward-redemptions") { request, context in
            let status = request.query("status")
            guard status == nil || status == "requested" else { throw APIProblem.validation(field: "status", "status can only be requested.") }
            let limit = try request.queryInt("limit", default: 100, range: 1...200)
            return JSON(
                try await services.chores.redemptions(
                    in: try context.id("community_id"), requestedOnly: status == "requested", limit: limit, cursor: request.query("cursor"),
                    as: try context.requirePrincipal()))
        }
        for (verb, fulfil) in [("fulfil", true), ("cancel", false)] {
            router.post("reward-redemptions/:redemption_id/\(verb)") { _, context in
                JSON(try await services.chores.resolveRedemption(try context.id("redemption_id"), fulfil: fulfil, as: try context.requireUser()))
            }
        }

        router.get("communities/:community_id/points") { request, context in
            JSON(
                try await services.chores.points(
                    in: try context.id("community_id"), for: try request.queryUUID("for"), as: try context.requirePrincipal()))
        }
        struct Adjustment: Decodable {
            var holderId: UUID
            var delta: Int
            var reason: String
        }
        router.post("communities/:community_id/points/adjustments") { request, context in
            let body = try await request.decodeJSON(Adjustment.self, context: context)
            return JSON(
                try await services.chores.adjust(
                    in: try context.id("community_id"), for: body.holderId, delta: body.delta, reason: body.reason, as: try context.requireUser()))
        }

        // A child's sign-in, managed by the child's own parent: the PIN, a device's one-time
        // pairing code, the devices, and revoking them.
        struct PIN: Decodable {
            var pin: String
        }
        router.put("communities/:community_id/family/:family_member_id/pin") { request, context in
            let body = try await request.decodeJSON(PIN.self, context: context)
            try await services.family.setPIN(
                body.pin, for: try context.id("family_member_id"), in: try context.id("community_id"), as: try context.requireUser())
            return NoContent()
        }
        router.post("communities/:community_id/family/:family_member_id/devices") { _, context in
            Created(
                try await services.family.startPairing(
                    for: try context.id("family_member_id"), in: try context.id("community_id"), as: try context.requireUser()))
        }
        router.get("communities/:community_id/family/:family_member_id/devices") { _, context in
            JSON(
                Items(
                    try await services.family.devices(
                        of: try context.id("family_member_id"), in: try context.id("community_id"), as: try context.requireUser())))
        }
        router.delete("communities/:community_id/family/:family_member_id/devices") { _, context in
            try await services.family.revokeDevices(
                of: try context.id("family_member_id"), in: try context.id("community_id"), as: try context.requireUser())
            return NoContent()
        }
        router.delete("communities/:community_id/family/:family_member_id/devices/:device_id") { _, context in
            try await services.family.revokeDevices(
                of: try context.id("family_member_id"), in: try context.id("community_id"), device: try context.id("device_id"),
                as: try context.requireUser())
            return NoContent()
        }
    }
}

extension Request {
    /// An optional UUID query parameter (`?for=`): a user id or a family member id.
    func queryUUID(_ name: String) throws -> UUID? {
        guard let text = query(name) else { return nil }
        guard let id = UUID(uuidString: text) else { throw APIProblem.validation(field: name, "\(name) must be a UUID.") }
        return id
    }
}

extension KeyedDecodingContainer {
    /// A key left out: nil (leave it); `null`: `.some(nil)` (clear it); a value: `.some(value)`.
    fileprivate func decodeNullable<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value?? {
        guard contains(key) else { return .none }
        return .some(try decodeNil(forKey: key) ? nil : try decode(type, forKey: key))
    }
}
