import OrbitPostgres

/// The membership checks of the permission matrix (spec, "Permission Matrix"), run in the
/// request's transaction. Row-level security hides other communities, so a community the actor
/// is not in reads as "not found", never as "forbidden".
extension RequestRunner {
    /// The acting user's active membership of `community`, or nil.
    func membership(_ user: UserID, in community: CommunityID, on connection: PostgresConnection) async throws -> MemberRole? {
        let rows = try await connection.query(
            "SELECT role::text AS role FROM members WHERE community_id = \(community) AND user_id = \(user) AND left_at IS NULL"
        )
        guard let row = rows.first else { return nil }
        return MemberRole(rawValue: try row.decode("role", as: String.self))
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
