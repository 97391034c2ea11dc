package import Foundation
import OrbitPostgres

/// Guests (docs/money.md, "Guests"): people without an account in a community's money, One By
/// Two's `isGuest`/`guestName` and Settle Up's members who are not users. Any member adds,
/// renames, removes (once settled) and invites a guest; each is a SQL function that checks the
/// caller inside (sql/157_guests.sql), because only admins write members. A guest is a member
/// wherever money is (splits of every method, payers, settlements, balances, who owes whom,
/// settle-up, the export); the user who joins through the guest's link claims them
/// (`InviteService.redeem`).
extension MemberService {
    /// The longest guest name, in characters (a user's display name's limit).
    package static let guestNameLimit = 100
    /// How long a guest's link stays valid when no expiry is given.
    package static let guestInviteLifetime: TimeInterval = 30 * 86_400

    /// Adds a guest named `name` to `community` (any member).
    package func addGuest(named name: String, to community: CommunityID, as actor: UserID) async throws -> Member {
        let name = try Validate.text(name, field: "name", limit: Self.guestNameLimit)
        return try await runner.asUser(actor) { connection in
            guard
                let member = try await connection.query("SELECT orbit.add_guest(\(community), \(name)) AS id").single()
                    .decode("id", as: MemberID?.self)
            else { throw ServiceError.notFound("Community \(community)") }
            let guest = try await guestMember(member, on: connection)
            try await runner.audit(
                "member.guest_added", by: actor, community: community, target: ("member", member.uuid),
                metadata: ["user_id": guest.userID.description, "name": name], on: connection)
            return guest
        }
    }

    /// A community's guests who are still in it, in the members' order, `limit` at a time.
    package func guests(of community: CommunityID, limit: Int = 100, cursor: String? = nil, as actor: UserID) async throws -> Page<Member> {
        try await list(of: community, guestsOnly: true, limit: limit, cursor: cursor, as: actor)
    }

    /// Renames a guest (any member of their community).
    package func renameGuest(_ guest: MemberID, in community: CommunityID? = nil, to name: String, as actor: UserID) async throws -> Member {
        let name = try Validate.text(name, field: "name", limit: Self.guestNameLimit)
        return try await runner.asUser(actor) { connection in
            _ = try await guestMember(guest, in: community, on: connection)
            guard try await connection.query("SELECT orbit.rename_guest(\(guest), \(name)) AS renamed").single().decode("renamed", as: Bool.self)
            else { throw ServiceError.notFound("Guest \(guest)") }
            let renamed = try await guestMember(guest, on: connection)
            try await runner.audit(
                "member.guest_renamed", by: actor, community: renamed.communityID, target: ("member", guest.uuid),
                metadata: ["name": name], on: connection)
            return renamed
        }
    }

    /// Removes a guest (any member of their community), only once they are settled: nothing owed
    /// between them and anyone, in any currency. Their link goes too; their past expenses keep
    /// them, as they keep a member who left.
    package func removeGuest(_ guest: MemberID, in community: CommunityID? = nil, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            let removed = try await guestMember(guest, in: community, on: connection)
            switch try await connection.query("SELECT orbit.remove_guest(\(guest)) AS outcome").single().decode("outcome", as: String.self) {
            case "removed":
                try await runner.audit(
                    "member.guest_removed", by: actor, community: removed.communityID, target: ("member", guest.uuid),
                    metadata: ["user_id": removed.userID.description], on: connection)
            case "unsettled":
                throw ServiceError.conflict(
                    "\(removed.displayName ?? "The guest") still owes or is owed money here: settle up with them first, then remove them.")
            default:
                throw ServiceError.notFound("Guest \(guest)")
            }
        }
    }

    /// A link for a guest (any member of their community): an invite of one use, valid until
    /// `expiresAt` (30 days if nil). The user who joins through it claims the guest: the guest's
    /// shares, payments and settlements become theirs.
    package func inviteGuest(_ guest: MemberID, in community: CommunityID? = nil, expiresAt: Date? = nil, as actor: UserID) async throws -> Invite {
        let expires = expiresAt ?? runner.now().addingTimeInterval(Self.guestInviteLifetime)
        guard expires > runner.now() else { throw ServiceError.conflict(field: "expires_at", reason: "must be in the future") }
        return try await runner.asUser(actor) { connection in
            _ = try await guestMember(guest, in: community, on: connection)
            // A taken code writes nothing; another is tried (as InviteService.create does).
            for _ in 1...5 {
                let code = InviteCode.random()
                let rows = try await connection.query(
                    "SELECT \(unescaped: Invite.columns) FROM orbit.invite_guest(\(guest), \(code.value), \(expires))")
                if let row = rows.first {
                    let invite = try Invite(row: row)
                    try await runner.audit(
                        "invite.created", by: actor, community: invite.communityID, target: ("invite", invite.id.uuid),
                        metadata: ["code": invite.code, "guest_member_id": guest.description], on: connection)
                    return invite
                }
                // No row: no such guest for the actor (say so), or the code was taken.
                _ = try await guestMember(guest, on: connection)
            }
            throw ServiceError.conflict("Could not find a free invite code; try again.")
        }
    }

    /// An active guest of a community the actor is a member of (row-level security hides the
    /// others), as a member; of `community`, when given (the API's path names it).
    func guestMember(_ guest: MemberID, in community: CommunityID? = nil, on connection: PostgresConnection) async throws -> Member {
        guard
            let row = try await connection.query(
                """
                SELECT \(unescaped: Member.columns) FROM members m JOIN users u ON u.id = m.user_id
                WHERE m.id = \(guest) AND u.is_guest AND m.left_at IS NULL AND (\(community)::uuid IS NULL OR m.community_id = \(community))
                """
            ).first
        else { throw ServiceError.notFound("Guest \(guest)") }
        return try Member(row: row)
    }
}
