package import Foundation
import OrbitPostgres

/// Invites (spec: Invites): codes admins hand out, and joining a community with one. Redeeming is
/// one SQL function (`orbit.redeem_invite`), so uses and expiry hold under concurrent redemptions.
package struct InviteService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// Creates an invite (admins) with an optional number of uses and expiry.
    package func create(to community: CommunityID, maxUses: Int? = nil, expiresAt: Date? = nil, as actor: UserID) async throws -> Invite {
        if let maxUses, !(1...10_000).contains(maxUses) {
            throw ServiceError.invalidInput(field: "uses_remaining", reason: "must be between 1 and 10000")
        }
        if let expiresAt, expiresAt <= runner.now() {
            throw ServiceError.conflict(field: "expires_at", reason: "must be in the future")
        }
        return try await runner.asUser(actor) { connection in
            // 31^6 ≈ 887 million codes: a collision is rare; then the INSERT writes nothing and
            // another code is tried.
            for _ in 1...5 {
                let id = InviteID.new(in: .invites)
                let code = InviteCode.random()
                // One round trip: the invite, written only if the actor is an admin of the
                // community and the code is free, and its audit entry, only if it was written.
                let results = try await connection.pipeline([
                    """
                    INSERT INTO invites (id, community_id, code, created_by, uses_remaining, expires_at)
                    SELECT \(id), \(community), \(code.value), \(actor), \(maxUses), \(expiresAt)
                    WHERE EXISTS (
                        SELECT FROM members m
                        WHERE m.community_id = \(community) AND m.user_id = \(actor) AND m.left_at IS NULL AND m.role = 'admin')
                    ON CONFLICT DO NOTHING
                    RETURNING \(unescaped: Invite.columns)
                    """,
                    try runner.auditStatement(
                        "invite.created", by: actor, community: community, target: ("invite", id.uuid), metadata: ["code": code.value],
                        ifWritten: WrittenRow(.invites, id.uuid)),
                ])
                if let row = results[0].first { return try Invite(row: row) }
                // Nothing was written: not an admin (say so), or the code was taken.
                try await runner.requireAdmin(actor, of: community, rule: "only admins can invite members", on: connection)
            }
            throw ServiceError.conflict("Could not find a free invite code; try again.")
        }
    }

    /// The order of invites: newest first.
    static let inviteOrder = Paging.Keyset.timeAndID("invites")

    /// A community's invites, newest first (admins).
    package func list(of community: CommunityID, limit: Int = 50, cursor: String? = nil, as actor: UserID) async throws -> Page<Invite> {
        try Validate.limit(limit, in: 1...200)
        let after = try Self.inviteOrder.decode(cursor)
        return try await runner.asUser(actor) { connection in
            try await runner.requireAdmin(actor, of: community, rule: "only admins can see invites", on: connection)
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Invite.columns), \(unescaped: Self.inviteOrder.columns) FROM invites
                WHERE community_id = \(community)
                  AND \(try Self.inviteOrder.after(after))
                ORDER BY \(unescaped: Self.inviteOrder.order) LIMIT \(limit + 1)
                """
            )
            return try Self.inviteOrder.page(rows, limit: limit, item: Invite.init(row:))
        }
    }

    /// One invite of a community, for its admins (a client's replay of a create: `POST
    /// /communities/{id}/invites` with its own `id`).
    package func get(_ id: InviteID, as actor: UserID) async throws -> Invite {
        try await runner.asUserReading(actor) { connection in
            guard let row = try await connection.query("SELECT \(unescaped: Invite.columns) FROM invites WHERE id = \(id)").first else {
                throw ServiceError.notFound("Invite \(id)")
            }
            return try Invite(row: row)
        }
    }

    /// Revokes (deletes) an invite (admins of its community); with `expected`, only an invite
    /// of that community (another's is not found, as the API's path names the community).
    package func revoke(_ id: InviteID, in expected: CommunityID? = nil, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            // Invites are visible to admins of their community only (row-level security), so
            // "not found" covers "not yours" too. One statement: the invite and its audit entry.
            let revoked = try await connection.query(
                """
                WITH revoked AS (
                    DELETE FROM invites WHERE id = \(id) AND (\(expected)::uuid IS NULL OR community_id = \(expected))
                    RETURNING community_id, code)
                INSERT INTO audit_log (community_id, user_id, action, target_type, target_id, metadata, ip_address)
                SELECT community_id, \(actor), 'invite.revoked', 'invite', \(id), jsonb_build_object('code', code),
                    nullif(current_setting('app.client_address', true), '')::inet
                FROM revoked
                """
            )
            guard revoked.affectedRows == 1 else { throw ServiceError.notFound("Invite \(id)") }
        }
    }

    /// What the invite of `code` shows before joining, asked by anyone (no user): an unknown
    /// code, a revoked invite and a deleted community are alike "not found"; an expired or used
    /// up invite is `gone`, and says which.
    package func preview(_ code: InviteCode) async throws -> InvitePreview {
        try await runner.asNobody { connection in
            let row = try await connection.query(
                "SELECT outcome, community_name, member_count, inviter_name, expires_at, guest_name FROM orbit.invite_preview(\(code.value))"
            ).single()
            switch try row.decode("outcome", as: String.self) {
            case "valid":
                return InvitePreview(
                    code: code.value, communityName: try row.decode("community_name"),
                    memberCount: Int(try row.decode("member_count", as: Int32.self)), inviterName: try row.decode("inviter_name"),
                    expiresAt: try row.decode("expires_at"), guestName: try row.decode("guest_name"))
            case "expired": throw ServiceError.gone("Invite \(code) has expired.")
            case "used_up": throw ServiceError.gone("Invite \(code) has been used up.")
            default: throw ServiceError.notFound("Invite code \(code)")
            }
        }
    }

    /// Joins the community of an invite code (any case). Each refusal has its own error:
    /// unknown code, deleted community, expired, already a member, used up, and for a guest's
    /// invite, a former member. A guest's invite claims the guest: their money becomes the actor's,
    /// in the same transaction (`orbit.redeem_invite`).
    package func redeem(_ code: InviteCode, as actor: UserID) async throws -> Redemption {
        try await runner.asUser(actor) { connection in
            let row = try await connection.query(
                "SELECT outcome, community_id, member_id, guest_member_id FROM orbit.redeem_invite(\(code.value))"
            ).single()
            let (outcome, community, member, guest) = try row.decode((String, CommunityID?, MemberID?, MemberID?).self)
            switch (outcome, community, member) {
            case ("joined", let community?, let member?), ("rejoined", let community?, let member?), ("claimed", let community?, let member?):
                return Redemption(
                    communityID: community, memberID: member, rejoined: outcome == "rejoined",
                    claimedGuestMemberID: outcome == "claimed" ? guest : nil)
            case ("was_member", _, _):
                throw ServiceError.conflict(
                    "You were a member of this community before: a guest's invite is for someone new to it. Ask for a plain invite.")
            case ("not_found", _, _):
                throw ServiceError.notFound("Invite code \(code)")
            case ("community_deleted", _, _):
                throw ServiceError.conflict("The community of invite \(code) has been deleted.")
            case ("expired", _, _):
                throw ServiceError.conflict("Invite \(code) has expired.")
            case ("already_member", let community?, _):
                throw ServiceError.conflict("You are already a member of community \(community).")
            case ("used_up", _, _):
                throw ServiceError.conflict("Invite \(code) has been used up.")
            default:
                throw ServiceError.conflict("Invite \(code) could not be redeemed (\(outcome)).")
            }
        }
    }
}
