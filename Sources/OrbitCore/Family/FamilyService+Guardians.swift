package import Foundation
import OrbitPostgres

/// A guardian of a family member, or an invitation to become one (`family_guardians`).
package struct Guardian: Sendable, Codable, Equatable {
    package var familyMemberID: FamilyMemberID
    /// The family member's name, for an invitation's "be Mia's guardian".
    package var familyMemberName: String
    package var userID: UserID
    /// The guardian's display name, when the reader shares a community with them.
    package var displayName: String?
    package var invitedBy: UserID?
    package var invitedAt: Date
    /// Nil for an invitation not accepted yet: not a guardian so far.
    package var acceptedAt: Date?
    /// The guardian of record: the child's new shares in expenses are owed by them, and the
    /// child is listed in their family.
    package var ofRecord: Bool

    enum CodingKeys: String, CodingKey {
        case familyMemberID = "family_member_id", familyMemberName = "family_member_name", userID = "user_id", displayName = "display_name"
        case invitedBy = "invited_by", invitedAt = "invited_at", acceptedAt = "accepted_at", ofRecord = "of_record"
    }

    static let columns = """
        g.family_member_id, f.name AS family_member_name, g.user_id, u.display_name, g.invited_by, g.created_at AS invited_at,
        g.accepted_at, g.user_id = f.user_id AS of_record
        """
    static let source = "family_guardians g JOIN family_members f ON f.id = g.family_member_id LEFT JOIN users u ON u.id = g.user_id"

    init(row: PostgresRow) throws {
        (familyMemberID, familyMemberName, userID, displayName, invitedBy, invitedAt, acceptedAt, ofRecord) = try row.decode(
            (FamilyMemberID, String, UserID, String?, UserID?, Date, Date?, Bool).self)
    }
}

/// Two parents (docs/chores.md, "Two parents"): a family member has one or more guardians. The one
/// who adds them is the first, and their guardian of record; a guardian invites someone they share
/// a community with, who accepts. Every guardian manages the child's sign-in (PIN, devices), sets
/// the child's chores and rewards where they are a member, approves the child's completions and
/// sees what the child sees. A guardian leaves by themselves; the guardian of record only once
/// another guardian is it, and the last guardian not at all (the family member is removed instead).
extension FamilyService {
    static let guardianOnlyRule = "only one of the family member's guardians does that"

    /// The guardians of `child` and the invitations not accepted yet: guardians first (the oldest
    /// first), then invitations. The guardians see them; an invitee sees their own invitation.
    package func guardians(of child: FamilyMemberID, as actor: UserID) async throws -> [Guardian] {
        try await runner.asUser(actor) { connection in
            let guardians = try await connection.query(
                """
                SELECT \(unescaped: Guardian.columns) FROM \(unescaped: Guardian.source)
                WHERE g.family_member_id = \(child) ORDER BY g.accepted_at IS NULL, coalesce(g.accepted_at, g.created_at), g.user_id
                """
            ).map(Guardian.init(row:))
            guard !guardians.isEmpty else { throw ServiceError.notFound("Family member \(child)") }
            return guardians
        }
    }

    /// The acting user's invitations to be a guardian, not accepted yet, the newest first.
    package func guardianInvitations(as actor: UserID) async throws -> [Guardian] {
        try await runner.asUser(actor) { connection in
            try await connection.query(
                """
                SELECT \(unescaped: Guardian.columns) FROM \(unescaped: Guardian.source)
                WHERE g.user_id = \(actor) AND g.accepted_at IS NULL ORDER BY g.created_at DESC, g.family_member_id
                """
            ).map(Guardian.init(row:))
        }
    }

    /// Invites `invitee`, someone the acting user shares a community with, to be a guardian of
    /// `child`, one of the acting user's. 404 for a family member who is not theirs or someone
    /// they share no community with; 409 for a guardian, or someone invited already.
    package func inviteGuardian(_ invitee: UserID, of child: FamilyMemberID, as actor: UserID) async throws -> Guardian {
        try await runner.asUser(actor) { connection in
            try await requireGuardian(actor, of: child, on: connection)
            guard invitee != actor else { throw ServiceError.notFound("User \(invitee) (someone you share a community with)") }
            // Someone the actor shares no community with (or the actor) is 404 from the function
            // (family_guardians_contact, RequestRunner); the child's own guardians and invitations
            // the actor sees already, as one of them.
            let existing = try await connection.query(
                "SELECT accepted_at IS NOT NULL AS accepted FROM family_guardians WHERE family_member_id = \(child) AND user_id = \(invitee)"
            ).first?.decode("accepted", as: Bool.self)
            if let existing {
                throw ServiceError.conflict(field: "user_id", reason: existing ? "is a guardian already" : "is invited already")
            }
            try await connection.query("SELECT orbit.invite_guardian(\(child), \(invitee))")
            try await runner.audit(
                "family.guardian_invited", by: actor, community: nil, target: ("family_member", child.uuid),
                metadata: ["user_id": invitee.uuid.uuidString], on: connection)
            return try await guardian(invitee, of: child, on: connection)
        }
    }

    /// The acting user accepts their invitation to be a guardian of `child`.
    package func acceptGuardianship(of child: FamilyMemberID, as actor: UserID) async throws -> Guardian {
        try await runner.asUser(actor) { connection in
            let accepted: Bool = try await connection.query("SELECT orbit.accept_guardianship(\(child)) AS accepted").single().decode("accepted")
            guard accepted else { throw ServiceError.notFound("Invitation to be family member \(child)'s guardian") }
            try await runner.audit("family.guardian_accepted", by: actor, community: nil, target: ("family_member", child.uuid), on: connection)
            return try await guardian(actor, of: child, on: connection)
        }
    }

    /// Ends `user`'s guardianship of `child`, or their invitation: the acting user leaves (or
    /// declines their invitation), or a guardian withdraws an invitation not accepted yet. One
    /// guardian does not remove another (403). The guardian of record leaves once another is it,
    /// and the last guardian cannot leave (409 each).
    package func removeGuardian(_ user: UserID, of child: FamilyMemberID, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            let removed: Bool
            do {
                removed = try await connection.query("SELECT orbit.remove_guardian(\(child), \(user)) AS removed").single().decode("removed")
            } catch let error as PostgresError where error.sqlState == "42501" {
                throw ServiceError.forbidden(rule: "a guardian leaves by themselves; one guardian does not remove another")
            }
            guard removed else { throw ServiceError.notFound("Guardian \(user) of family member \(child)") }
            try await runner.audit(
                user == actor ? "family.guardian_left" : "family.guardian_invitation_withdrawn", by: actor, community: nil,
                target: ("family_member", child.uuid), metadata: ["user_id": user.uuid.uuidString], on: connection)
        }
    }

    /// The acting user declines their invitation to be a guardian of `child` (an accepted
    /// guardianship is left with `removeGuardian`).
    package func declineGuardianship(of child: FamilyMemberID, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            let removed: Bool =
                try await connection.query(
                    """
                    SELECT orbit.remove_guardian(\(child), \(actor)) AS removed FROM family_guardians
                    WHERE family_member_id = \(child) AND user_id = \(actor) AND accepted_at IS NULL
                    """
                ).first?.decode("removed") ?? false
            guard removed else { throw ServiceError.notFound("Invitation to be family member \(child)'s guardian") }
            try await runner.audit("family.guardian_declined", by: actor, community: nil, target: ("family_member", child.uuid), on: connection)
        }
    }

    /// Makes `user`, one of `child`'s guardians, the guardian of record: the child's new shares in
    /// expenses are owed by them (shares written before stay with whom they were). Any guardian.
    package func setGuardianOfRecord(_ user: UserID, of child: FamilyMemberID, as actor: UserID) async throws -> FamilyMember {
        try await runner.asUser(actor) { connection in
            try await requireGuardian(actor, of: child, on: connection)
            guard
                let row = try await connection.query(
                    "UPDATE family_members SET user_id = \(user) WHERE id = \(child) RETURNING \(unescaped: FamilyMember.columns)"
                ).first
            else { throw ServiceError.notFound("Family member \(child)") }
            try await runner.audit(
                "family.guardian_of_record_set", by: actor, community: nil, target: ("family_member", child.uuid),
                metadata: ["user_id": user.uuid.uuidString], on: connection)
            return try FamilyMember(row: row)
        }
    }

    /// Throws unless `actor` is one of `child`'s guardians: 404 for a family member they cannot
    /// see, 403 for one they see and are not a guardian of.
    func requireGuardian(_ actor: UserID, of child: FamilyMemberID, on connection: PostgresConnection) async throws {
        guard
            let guardian = try await connection.query(
                "SELECT id = ANY(orbit.parent_family_member_ids()) AS guardian FROM family_members WHERE id = \(child)"
            ).first?.decode("guardian", as: Bool.self)
        else { throw ServiceError.notFound("Family member \(child)") }
        guard guardian else { throw ServiceError.forbidden(rule: Self.guardianOnlyRule) }
    }

    private func guardian(_ user: UserID, of child: FamilyMemberID, on connection: PostgresConnection) async throws -> Guardian {
        guard
            let row = try await connection.query(
                "SELECT \(unescaped: Guardian.columns) FROM \(unescaped: Guardian.source) WHERE g.family_member_id = \(child) AND g.user_id = \(user)"
            ).first
        else { throw ServiceError.notFound("Guardian \(user) of family member \(child)") }
        return try Guardian(row: row)
    }
}
