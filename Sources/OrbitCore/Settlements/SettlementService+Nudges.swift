package import Foundation
import OrbitPostgres

package enum NudgeTag {}
package typealias NudgeID = Identifier<NudgeTag>

/// A nudge (docs/money.md, "Who hears about money"): someone who is owed asks someone who owes
/// them to settle up; One By Two's `nudge`.
package struct Nudge: Sendable, Codable, Equatable {
    package var id: NudgeID
    package var communityID: CommunityID
    package var fromUserID: UserID
    package var toUserID: UserID
    /// What `toUserID` owes `fromUserID` in each currency when it was sent (positive).
    package var owed: [CurrencyBalance]
    package var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", fromUserID = "from_user_id", toUserID = "to_user_id", owed, createdAt = "created_at"
    }
}

extension SettlementService {
    /// How long a pair waits between nudges.
    package static let nudgeInterval: TimeInterval = 86_400

    /// Nudges `member`, who owes the actor money in `community`: a `nudge` notification (and its
    /// push) to them, with what they owe in each currency. At most one per pair per 24 hours, by
    /// the services' clock (`tooSoon` with the seconds left); two at once wait for each other
    /// (a lock of the pair). Someone who owes the actor nothing is a conflict, and so are a guest
    /// (nobody to tell) and oneself.
    package func nudge(_ member: UserID, in community: CommunityID, as actor: UserID) async throws -> Nudge {
        guard member != actor else { throw ServiceError.conflict(field: "member", reason: "is you: nudge someone who owes you") }
        return try await runner.asUser(actor) { connection in
            try await runner.requireMember(actor, of: community, on: connection)
            let now = runner.now()
            let results = try await connection.pipeline([
                // The pair's lock: a second nudge at once waits, then sees the first.
                "SELECT pg_advisory_xact_lock(hashtextextended(\("nudge \(community) \(actor) \(member)"), 0))",
                """
                SELECT u.is_guest, EXISTS (SELECT FROM members m WHERE m.community_id = \(community) AND m.user_id = u.id AND m.left_at IS NULL) AS member
                FROM users u WHERE u.id = \(member)
                """,
                """
                SELECT currency, balance FROM pair_balances
                WHERE community_id = \(community) AND user_id = \(actor) AND counterparty_id = \(member) AND balance > 0
                ORDER BY currency
                """,
                "SELECT max(created_at) AS last FROM nudges WHERE community_id = \(community) AND from_user_id = \(actor) AND to_user_id = \(member)",
            ])
            guard let person = results[1].first, try person.decode("member", as: Bool.self) else {
                throw ServiceError.notFound("Member \(member)")
            }
            if try person.decode("is_guest", as: Bool.self) {
                throw ServiceError.conflict(field: "member", reason: "is a guest, who has no account to be told: share their link instead")
            }
            let owed = try results[2].map { CurrencyBalance(currency: try $0.decode("currency"), balance: try $0.decode("balance")) }
            guard !owed.isEmpty else { throw ServiceError.conflict(field: "member", reason: "owes you nothing here") }
            if let last = try results[3].first?.decode("last", as: Date?.self), now.timeIntervalSince(last) < Self.nudgeInterval {
                let wait = Int((Self.nudgeInterval - now.timeIntervalSince(last)).rounded(.up))
                throw ServiceError.tooSoon("You nudged them less than a day ago; try again in \(wait) seconds.", retryAfter: wait)
            }
            let id = NudgeID.random()
            let owedJSON = try PostgresJSON(encoding: owed)
            _ = try await connection.pipeline([
                "INSERT INTO nudges (id, community_id, from_user_id, to_user_id, created_at) VALUES (\(id), \(community), \(actor), \(member), \(now))",
                NotificationService.enqueue(
                    .nudge,
                    """
                    SELECT m.user_id, m.community_id, left(c.name, 200), coalesce(a.display_name, 'Someone') || ' asks you to settle up',
                        jsonb_build_object('community_id', m.community_id, 'from_user_id', \(actor)::uuid, 'owed', \(owedJSON)::jsonb,
                            'actor_name', a.display_name),
                        NULL::text, m.notification_prefs
                    FROM members m JOIN communities c ON c.id = m.community_id LEFT JOIN users a ON a.id = \(actor)
                    WHERE m.community_id = \(community) AND m.user_id = \(member) AND m.left_at IS NULL
                    """),
            ])
            return Nudge(id: id, communityID: community, fromUserID: actor, toUserID: member, owed: owed, createdAt: now)
        }
    }
}
