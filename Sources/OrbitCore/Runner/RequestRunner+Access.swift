import Foundation
import OrbitPostgres

/// The membership checks of the permission matrix (spec, "Permission Matrix"), run in the
/// request's transaction. Row-level security hides other communities, so a community the actor
/// is not in reads as "not found", never as "forbidden".
extension RequestRunner {
    /// The acting user's active membership of `community`, or nil.
    func membership(_ user: UserID, in community: CommunityID, on connection: PostgresConnection) async throws -> MemberRole? {
        try Self.membership(in: try await connection.query(Self.membershipQuery(user, in: community)))
    }

    /// The statement `membership` runs, for a pipeline that checks membership beside other work.
    static func membershipQuery(_ user: UserID, in community: CommunityID) -> PostgresQuery {
        "SELECT role::text AS role FROM members WHERE community_id = \(community) AND user_id = \(user) AND left_at IS NULL"
    }

    /// The role in `membershipQuery`'s rows.
    static func membership(in rows: PostgresRows) throws -> MemberRole? {
        guard let row = rows.first else { return nil }
        return MemberRole(rawValue: try row.decode("role", as: String.self))
    }

    /// A select-list column `actor_role`: `user`'s active role in the community of the row a
    /// statement reads (null: not a member), so that one statement reads a row and the right to
    /// it. `community` is the row's community column (trusted SQL); the subquery's own alias,
    /// `actor_member`, leaves a caller's `m` alone.
    static func roleColumn(of user: UserID?, community: String) -> PostgresQuery {
        """
        (SELECT actor_member.role::text FROM members actor_member
         WHERE actor_member.community_id = \(unescaped: community) AND actor_member.user_id = \(user) AND actor_member.left_at IS NULL)
            AS actor_role
        """
    }

    /// The role in `roleColumn`'s column.
    static func role(in row: PostgresRow) throws -> MemberRole? {
        try row.decode("actor_role", as: String?.self).flatMap(MemberRole.init(rawValue:))
    }

    /// `requireMember`, then `query`, in one round trip: the two statements go as one pipeline
    /// (with the transaction's BEGIN when they are its first). For reads whose rows row-level
    /// security already limits to members: a non-member's query finds nothing, and the check
    /// then names the refusal ("not found").
    func queryAsMember(
        _ user: UserID, of community: CommunityID, on connection: PostgresConnection, _ query: PostgresQuery
    ) async throws -> PostgresRows {
        let results = try await connection.pipeline([Self.membershipQuery(user, in: community), query])
        guard try Self.membership(in: results[0]) != nil else { throw ServiceError.notFound("Community \(community)") }
        return results[1]
    }

    /// Requires that `principal` reaches `community`: a user as an active member (their role is
    /// returned), a signed-in child when it is their device's community (nil); anything else is
    /// "not found".
    @discardableResult
    func requireAccess(_ principal: Principal, to community: CommunityID, on connection: PostgresConnection) async throws -> MemberRole? {
        switch principal {
        case .user(let user):
            return try await requireMember(user, of: community, on: connection)
        case .child:
            let allowed: Bool = try await connection.query("SELECT \(community) = ANY (orbit.child_community_ids()) AS allowed").single()
                .decode("allowed")
            guard allowed else { throw ServiceError.notFound("Community \(community)") }
            return nil
        }
    }

    /// Requires an active membership; a community the user cannot see is "not found".
    @discardableResult
    func requireMember(_ user: UserID, of community: CommunityID, on connection: PostgresConnection) async throws -> MemberRole {
        guard let role = try await membership(user, in: community, on: connection) else {
            throw ServiceError.notFound("Community \(community)")
        }
        return role
    }

    /// Requires the admin role, naming the rule of the permission matrix otherwise.
    func requireAdmin(_ user: UserID, of community: CommunityID, rule: String, on connection: PostgresConnection) async throws {
        guard try await requireMember(user, of: community, on: connection) == .admin else {
            throw ServiceError.forbidden(rule: rule)
        }
    }

    /// Which of users and family members each id is (as the actor sees them: co-members and
    /// their family members); an unknown id is refused as a conflict on `field`, naming it, or,
    /// without `field`, left out.
    func holders(_ ids: [UUID], field: String?, on connection: PostgresConnection) async throws -> [UUID: Holder] {
        let unique = Array(Set(ids))
        let rows = try await connection.query(
            """
            SELECT id, 'user' AS kind FROM users WHERE id = ANY(\(unique))
            UNION ALL SELECT id, 'family_member' FROM family_members WHERE id = ANY(\(unique))
            """)
        var found: [UUID: Holder] = [:]
        for row in rows {
            let (id, kind) = try row.decode((UUID, String).self)
            found[id] = kind == "user" ? .user(UserID(id)) : .familyMember(FamilyMemberID(id))
        }
        if let field, let missing = unique.filter({ found[$0] == nil }).sorted(by: { $0.uuidString < $1.uuidString }).first {
            throw ServiceError.conflict(field: field, reason: "\(missing) is neither a member nor a family member of one")
        }
        return found
    }

    /// Requires every one of `users` to be an active member (payers and debtors of an expense).
    func requireActiveMembers(_ users: [UserID], of community: CommunityID, on connection: PostgresConnection) async throws {
        let wanted = Set(users)
        let found = Set(
            try await connection.query(
                "SELECT user_id FROM members WHERE community_id = \(community) AND left_at IS NULL AND user_id = ANY(\(wanted.map(\.uuid)))"
            ).map { try $0.decode("user_id", as: UserID.self) }
        )
        if let missing = wanted.subtracting(found).sorted().first {
            throw ServiceError.conflict(field: "user", reason: "\(missing) is not a member of this community")
        }
    }
}

extension ServiceError {
    /// A write whose checks, folded into its statement, failed there and then passed when run
    /// on their own to say why: something changed in between (another request, at that very
    /// moment). Trying again decides.
    static let changedMeanwhile = ServiceError.conflict("Something changed while this was being saved; try again.")
}
