package import Foundation
import OrbitPostgres

/// Rewards, redemptions and points (docs/chores.md).
extension ChoreService {
    /// Adds a reward: `cost` points, `stock` of them (nil: unlimited). An admin's is for everyone;
    /// a parent who is not an admin sets one for their own children (`familyOf`: them).
    package func createReward(
        in community: CommunityID, title: String, description: String? = nil, cost: Int, stock: Int? = nil, as actor: UserID
    ) async throws -> Reward {
        let title = try Validate.text(title, field: "title", limit: 200)
        let description = try description.map { try Validate.text($0, field: "description", limit: 2000, multiline: true) }
        guard (1...1_000_000).contains(cost) else { throw ServiceError.invalidInput(field: "points_cost", reason: "must be from 1 to 1000000") }
        if let stock, !(0...1_000_000).contains(stock) {
            throw ServiceError.invalidInput(field: "stock", reason: "must be from 0 to 1000000")
        }
        return try await runner.asUser(actor, auditingRefusal: .init(action: "reward.created", community: community)) { connection in
            var familyOf: UserID?
            if try await runner.requireMember(actor, of: community, on: connection) != .admin {
                guard try await connection.query("SELECT FROM unnest(orbit.parent_family_member_ids()) LIMIT 1").first != nil else {
                    throw ServiceError.forbidden(rule: Self.parentRule)
                }
                familyOf = actor
            }
            let reward = try Reward(
                row: try await connection.query(
                    """
                    INSERT INTO rewards (community_id, title, description, points_cost, stock, created_by, family_of)
                    VALUES (\(community), \(title), \(description), \(Int32(cost)), \(stock.map(Int32.init)), \(actor), \(familyOf))
                    RETURNING \(unescaped: Reward.columns)
                    """
                ).single())
            try await runner.audit(
                "reward.created", by: actor, community: community, target: ("reward", reward.id.uuid), metadata: ["title": title], on: connection)
            return reward
        }
    }

    /// The order of rewards: cheapest first.
    static let rewardOrder = Paging.Keyset("rewards", [.integer("points_cost"), .time("created_at"), .id("id")], newestFirst: false)

    /// A page of the community's rewards, cheapest first. Admins see hidden ones too (`available`
    /// false), and archived ones with `archived`; other members see those on offer, the
    /// community's and their own family's, and a child (row-level security) only those.
    package func rewards(
        in community: CommunityID, archived: Bool = false, limit: Int = 100, cursor: String? = nil, as principal: Principal
    ) async throws -> Page<Reward> {
        try Validate.limit(limit, in: 1...200)
        let after = try Self.rewardOrder.decode(cursor)
        return try await runner.run(as: principal) { connection in
            // Row-level security shows a child their own family's and the community's.
            let admin = try await runner.requireAccess(principal, to: community, on: connection) == .admin
            let viewer: UserID? = if case .user(let user) = principal { user } else { nil }
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Reward.columns), \(unescaped: Self.rewardOrder.columns) FROM rewards
                WHERE community_id = \(community) AND (\(admin) OR (available AND archived_at IS NULL))
                  AND (\(admin) OR \(viewer)::uuid IS NULL OR family_of IS NULL OR family_of = \(viewer))
                  AND (\(admin && archived) OR archived_at IS NULL) AND \(try Self.rewardOrder.after(after))
                ORDER BY \(unescaped: Self.rewardOrder.order) LIMIT \(limit + 1)
                """)
            return try Self.rewardOrder.page(rows, limit: limit, item: Reward.init(row:))
        }
    }

    /// What an admin changes of a reward; nil leaves a field as it is, `.some(nil)` clears an
    /// optional one.
    package struct RewardChange: Sendable {
        package var title: String?
        package var description: String??
        /// The cost from now on: a redemption already asked for keeps the cost it was asked at.
        package var pointsCost: Int?
        /// How many are left (`.some(nil)`: unlimited).
        package var stock: Int??
        /// Shown (true) or hidden (false): a hidden reward is off the children's lists, and
        /// nobody redeems it.
        package var available: Bool?

        package init(title: String? = nil, description: String?? = nil, pointsCost: Int? = nil, stock: Int?? = nil, available: Bool? = nil) {
            self.title = title
            self.description = description
            self.pointsCost = pointsCost
            self.stock = stock
            self.available = available
        }
    }

    /// Changes a reward (admins; docs/chores.md, "Rewards change"). Only the fields given are
    /// written, so a redemption taking one from the stock meanwhile is never undone.
    package func updateReward(_ id: RewardID, _ change: RewardChange, as actor: UserID) async throws -> Reward {
        let title = try change.title.map { try Validate.text($0, field: "title", limit: 200) }
        let description = try change.description.map { try $0.map { try Validate.text($0, field: "description", limit: 2000, multiline: true) } }
        if let cost = change.pointsCost, !(1...1_000_000).contains(cost) {
            throw ServiceError.invalidInput(field: "points_cost", reason: "must be from 1 to 1000000")
        }
        if let stock = change.stock ?? nil, !(0...1_000_000).contains(stock) {
            throw ServiceError.invalidInput(field: "stock", reason: "must be from 0 to 1000000")
        }
        return try await changeReward(
            id, as: actor, action: "reward.updated",
            """
            UPDATE rewards SET title = coalesce(\(title), title),
                description = CASE WHEN \(description != nil) THEN \(description ?? nil) ELSE description END,
                points_cost = coalesce(\(change.pointsCost.map(Int32.init)), points_cost),
                stock = CASE WHEN \(change.stock != nil) THEN \((change.stock ?? nil).map(Int32.init)) ELSE stock END,
                available = coalesce(\(change.available), available)
            WHERE id = \(id) RETURNING \(unescaped: Reward.columns)
            """)
    }

    /// Archives a reward (admins): off the lists, nobody redeems it; redemptions already asked
    /// for stay, to be fulfilled or cancelled. `archived: false` brings it back.
    package func setRewardArchived(_ id: RewardID, _ archived: Bool, as actor: UserID) async throws -> Reward {
        try await changeReward(
            id, as: actor, action: archived ? "reward.archived" : "reward.unarchived",
            """
            UPDATE rewards SET archived_at = CASE WHEN \(archived) THEN coalesce(archived_at, now()) END
            WHERE id = \(id) RETURNING \(unescaped: Reward.columns)
            """)
    }

    /// Runs `update` on a reward an admin of its community changes, and audits it.
    private func changeReward(_ id: RewardID, as actor: UserID, action: String, _ update: PostgresQuery) async throws -> Reward {
        try await runner.asUser(actor) { connection in
            guard let current = try await connection.query("SELECT community_id, family_of FROM rewards WHERE id = \(id)").first else {
                throw ServiceError.notFound("Reward \(id)")
            }
            let (community, familyOf) = try current.decode((CommunityID, UserID?).self)
            // Admins change any reward; a parent who is not an admin, their own children's.
            if try await runner.requireMember(actor, of: community, on: connection) != .admin, familyOf != actor {
                throw ServiceError.forbidden(rule: Self.parentRule)
            }
            guard let row = try await connection.query(update).first else { throw ServiceError.changedMeanwhile }
            let reward = try Reward(row: row)
            try await runner.audit(
                action, by: actor, community: community, target: ("reward", id.uuid), metadata: ["title": reward.title], on: connection)
            return reward
        }
    }

    /// Redeems a reward for `holderID` (the actor when nil): debited at once; refused when the
    /// balance is short, the reward unavailable or out of stock.
    package func redeem(_ id: RewardID, by holderID: UUID? = nil, as principal: Principal) async throws -> RewardRedemption {
        try await runner.run(as: principal) { connection in
            guard
                let community = try await connection.query("SELECT community_id FROM rewards WHERE id = \(id)").first?
                    .decode("community_id", as: CommunityID.self)
            else { throw ServiceError.notFound("Reward \(id)") }
            let holder: Holder
            switch principal {
            case .child(let session):
                guard holderID == nil || holderID == session.child.uuid else {
                    throw ServiceError.forbidden(rule: "a child redeems only for themselves")
                }
                holder = .familyMember(session.child)
            case .user(let actor):
                holder = try await resolve([holderID ?? actor.uuid], on: connection)[0]
                try await requireMayAct(for: holder, as: actor, in: community, on: connection)
            }
            let requestedBy: UserID? = if case .user(let actor) = principal { actor } else { nil }
            return try RewardRedemption(
                row: try await connection.query(
                    """
                    INSERT INTO reward_redemptions (reward_id, user_id, family_member_id, requested_by)
                    VALUES (\(id), \(holder.userID), \(holder.familyMemberID), \(requestedBy))
                    RETURNING \(unescaped: RewardRedemption.columns)
                    """
                ).single())
        }
    }

    /// Fulfils a requested redemption, or cancels it — a refund (admins; a parent who is not one,
    /// their own child's).
    package func resolveRedemption(_ id: RedemptionID, fulfil: Bool, as actor: UserID) async throws -> RewardRedemption {
        try await decide(
            as: actor, lookup: "SELECT community_id, user_id, family_member_id FROM reward_redemptions WHERE id = \(id)", missing: "Redemption \(id)",
            update: """
                UPDATE reward_redemptions SET status = \(fulfil ? "fulfilled" : "cancelled"), resolved_by = \(actor), resolved_at = now()
                WHERE id = \(id) AND status = 'requested' RETURNING \(unescaped: RewardRedemption.columns)
                """,
            decided: "That redemption was already fulfilled or cancelled.", action: fulfil ? "reward.fulfilled" : "reward.cancelled",
            target: ("reward_redemption", id.uuid), RewardRedemption.init(row:))
    }

    /// The order of redemptions: newest first.
    static let redemptionOrder = Paging.Keyset.timeAndID("reward-redemptions", time: "requested_at")

    /// A page of redemptions in the community, newest first (a child sees their own); only
    /// those waiting for a parent with `requestedOnly`.
    package func redemptions(
        in community: CommunityID, requestedOnly: Bool = false, limit: Int = 100, cursor: String? = nil, as principal: Principal
    ) async throws -> Page<RewardRedemption> {
        try Validate.limit(limit, in: 1...200)
        let after = try Self.redemptionOrder.decode(cursor)
        return try await runner.run(as: principal) { connection in
            try await runner.requireAccess(principal, to: community, on: connection)
            let rows = try await connection.query(
                """
                SELECT \(unescaped: RewardRedemption.columns), \(unescaped: Self.redemptionOrder.columns) FROM reward_redemptions
                WHERE community_id = \(community) AND (NOT \(requestedOnly) OR status = 'requested') AND \(try Self.redemptionOrder.after(after))
                ORDER BY \(unescaped: Self.redemptionOrder.order) LIMIT \(limit + 1)
                """)
            return try Self.redemptionOrder.page(rows, limit: limit, item: RewardRedemption.init(row:))
        }
    }

    /// A holder's points (the actor's own when nil): zero before anything was earned.
    package func points(in community: CommunityID, for holderID: UUID? = nil, as principal: Principal) async throws -> PointsAccount {
        try await runner.run(as: principal) { connection in
            try await runner.requireAccess(principal, to: community, on: connection)
            let holder: UUID
            switch principal {
            case .child(let session):
                guard holderID == nil || holderID == session.child.uuid else {
                    throw ServiceError.notFound("Points of \(holderID ?? session.child.uuid)")
                }
                holder = session.child.uuid
            case .user(let actor):
                holder = holderID ?? actor.uuid
            }
            return try await account(of: holder, in: community, on: connection)
        }
    }

    /// Gives or takes points with a reason (admins); never below zero.
    package func adjust(in community: CommunityID, for holderID: UUID, delta: Int, reason: String, as actor: UserID) async throws -> PointsAccount {
        let reason = try Validate.text(reason, field: "reason", limit: 500)
        guard delta != 0, (-1_000_000...1_000_000).contains(delta) else {
            throw ServiceError.invalidInput(field: "delta", reason: "must be a non-zero number from -1000000 to 1000000")
        }
        return try await runner.asUser(actor, auditingRefusal: .init(action: "points.adjusted", community: community)) { connection in
            try await runner.requireAdmin(actor, of: community, rule: Self.adminRule, on: connection)
            let holder = try await resolve([holderID], on: connection)[0]
            try await connection.query(
                """
                INSERT INTO points_ledger (community_id, user_id, family_member_id, delta, kind, reason, created_by)
                VALUES (\(community), \(holder.userID), \(holder.familyMemberID), \(Int32(delta)), 'adjustment', \(reason), \(actor))
                """)
            try await runner.audit(
                "points.adjusted", by: actor, community: community, target: (holder.userID == nil ? "family_member" : "user", holder.id),
                metadata: ["delta": String(delta), "reason": reason], on: connection)
            return try await account(of: holder.id, in: community, on: connection)
        }
    }

    func account(of holder: UUID, in community: CommunityID, on connection: PostgresConnection) async throws -> PointsAccount {
        guard
            let row = try await connection.query(
                "SELECT balance, lifetime_earned FROM points_accounts WHERE community_id = \(community) AND holder_id = \(holder)"
            ).first
        else { return PointsAccount(balance: 0, lifetimeEarned: 0) }
        let (balance, earned) = try row.decode((Int32, Int32).self)
        return PointsAccount(balance: Int(balance), lifetimeEarned: Int(earned))
    }

    /// One reward the principal can see.
    package func reward(_ id: RewardID, as principal: Principal) async throws -> Reward {
        try await runner.run(as: principal) { connection in
            guard let row = try await connection.query("SELECT \(unescaped: Reward.columns) FROM rewards WHERE id = \(id)").first else {
                throw ServiceError.notFound("Reward \(id)")
            }
            return try Reward(row: row)
        }
    }

    /// One redemption the principal can see (a child sees their own).
    package func redemption(_ id: RedemptionID, as principal: Principal) async throws -> RewardRedemption {
        try await runner.run(as: principal) { connection in
            guard let row = try await connection.query("SELECT \(unescaped: RewardRedemption.columns) FROM reward_redemptions WHERE id = \(id)").first
            else { throw ServiceError.notFound("Redemption \(id)") }
            return try RewardRedemption(row: row)
        }
    }
}
