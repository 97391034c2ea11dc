package import Foundation
import OrbitPostgres

/// Rewards, redemptions and points (docs/chores.md).
extension ChoreService {
    /// Adds a reward (admins): `cost` points, `stock` of them (nil: unlimited).
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
            try await runner.requireAdmin(actor, of: community, rule: Self.adminRule, on: connection)
            let reward = try Reward(
                row: try await connection.query(
                    """
                    INSERT INTO rewards (community_id, title, description, points_cost, stock, created_by)
                    VALUES (\(community), \(title), \(description), \(Int32(cost)), \(stock.map(Int32.init)), \(actor))
                    RETURNING \(unescaped: Reward.columns)
                    """
                ).single())
            try await runner.audit(
                "reward.created", by: actor, community: community, target: ("reward", reward.id.uuid), metadata: ["title": title], on: connection)
            return reward
        }
    }

    /// The community's rewards (a child sees those of their parent's communities).
    package func rewards(in community: CommunityID, as principal: Principal) async throws -> [Reward] {
        try await runner.run(as: principal) { connection in
            try await requireAccess(principal, to: community, on: connection)
            return try await connection.query(
                "SELECT \(unescaped: Reward.columns) FROM rewards WHERE community_id = \(community) ORDER BY points_cost, created_at, id"
            ).map(Reward.init(row:))
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

    /// Fulfils a requested redemption, or cancels it — a refund (admins).
    package func resolveRedemption(_ id: RedemptionID, fulfil: Bool, as actor: UserID) async throws -> RewardRedemption {
        try await decide(
            as: actor, lookup: "SELECT community_id FROM reward_redemptions WHERE id = \(id)", missing: "Redemption \(id)",
            update: """
                UPDATE reward_redemptions SET status = \(fulfil ? "fulfilled" : "cancelled"), resolved_by = \(actor), resolved_at = now()
                WHERE id = \(id) AND status = 'requested' RETURNING \(unescaped: RewardRedemption.columns)
                """,
            decided: "That redemption was already fulfilled or cancelled.", action: fulfil ? "reward.fulfilled" : "reward.cancelled",
            target: ("reward_redemption", id.uuid), RewardRedemption.init(row:))
    }

    /// Redemptions in the community, newest first (a child sees their own).
    package func redemptions(in community: CommunityID, as principal: Principal) async throws -> [RewardRedemption] {
        try await runner.run(as: principal) { connection in
            try await requireAccess(principal, to: community, on: connection)
            return try await connection.query(
                """
                SELECT \(unescaped: RewardRedemption.columns) FROM reward_redemptions WHERE community_id = \(community)
                ORDER BY requested_at DESC, id LIMIT 500
                """
            ).map(RewardRedemption.init(row:))
        }
    }

    /// A holder's points (the actor's own when nil): zero before anything was earned.
    package func points(in community: CommunityID, for holderID: UUID? = nil, as principal: Principal) async throws -> PointsAccount {
        try await runner.run(as: principal) { connection in
            try await requireAccess(principal, to: community, on: connection)
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
