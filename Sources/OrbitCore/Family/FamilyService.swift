import OrbitPostgres

/// Dependents a parent manages (spec: Family Members): children and others without a login,
/// who can be answered for (RSVPs) by their parent.
package struct FamilyService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// Adds a dependent the acting user manages.
    package func add(name: String, as actor: UserID) async throws -> FamilyMember {
        let name = try Validate.text(name, field: "name", limit: 100)
        return try await runner.asUser(actor) { connection in
            try FamilyMember(
                row: try await connection.query(
                    "INSERT INTO family_members (user_id, name) VALUES (\(actor), \(name)) RETURNING \(unescaped: FamilyMember.columns)"
                ).single()
            )
        }
    }

    /// Renames a dependent the acting user is a guardian of.
    package func rename(_ id: FamilyMemberID, to name: String, as actor: UserID) async throws -> FamilyMember {
        let name = try Validate.text(name, field: "name", limit: 100)
        return try await runner.asUser(actor) { connection in
            guard
                let row = try await connection.query(
                    """
                    UPDATE family_members SET name = \(name) WHERE id = \(id) AND id = ANY(orbit.parent_family_member_ids())
                    RETURNING \(unescaped: FamilyMember.columns)
                    """
                ).first
            else { throw ServiceError.notFound("Family member \(id)") }
            return try FamilyMember(row: row)
        }
    }

    /// Sets the avatar of a dependent the acting user is a guardian of to an image one of the
    /// dependent's guardians uploaded (or the child did, on a paired device: their guardian of
    /// record's upload), or clears it (`media` nil). The avatar's address is the upload's
    /// (`GET /media/{id}`): members of the upload's community open it.
    package func setAvatar(_ id: FamilyMemberID, to media: MediaID?, as actor: UserID) async throws -> FamilyMember {
        let storage = runner.storage
        return try await runner.asUser(actor) { connection in
            guard
                try await connection.query("SELECT FROM family_members WHERE id = \(id) AND id = ANY(orbit.parent_family_member_ids())").first != nil
            else {
                throw ServiceError.notFound("Family member \(id)")
            }
            var url: String?
            if let media {
                guard let row = try await connection.query("SELECT \(unescaped: Media.columns) FROM media WHERE id = \(media)").first else {
                    throw ServiceError.notFound("Media \(media)")
                }
                // Whose upload it is, and that it is an image, trigger_family_avatar checks
                // (409 `media_id`, RequestRunner).
                url = try Media(row: row).linked(by: storage).url
            }
            guard
                let row = try await connection.query(
                    """
                    UPDATE family_members SET avatar_media_id = \(media), avatar_url = \(url)
                    WHERE id = \(id) AND id = ANY(orbit.parent_family_member_ids())
                    RETURNING \(unescaped: FamilyMember.columns)
                    """
                ).first
            else { throw ServiceError.notFound("Family member \(id)") }
            return try FamilyMember(row: row)
        }
    }

    /// Removes a dependent the acting user is the guardian of record of (and their RSVPs, their
    /// invitations), once they are the only guardian (409 otherwise: the others leave first).
    /// Another guardian is refused (403): they leave instead.
    package func remove(_ id: FamilyMemberID, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            let deleted = try await connection.query("DELETE FROM family_members WHERE id = \(id) AND user_id = \(actor)").affectedRows
            guard deleted == 1 else {
                guard try await Self.isGuardian(of: id, on: connection) else { throw ServiceError.notFound("Family member \(id)") }
                throw ServiceError.forbidden(rule: "the guardian of record removes a family member; another guardian leaves instead")
            }
        }
    }

    /// The dependents of `user` the acting user may see: of people they share a community with,
    /// those whose guardian of record `user` is; their own (`user` nil), every one they are a
    /// guardian of.
    package func list(of user: UserID? = nil, as actor: UserID) async throws -> [FamilyMember] {
        try await runner.asUser(actor) { connection in
            if let user, user != actor {
                return try await connection.query(
                    "SELECT \(unescaped: FamilyMember.columns) FROM family_members WHERE user_id = \(user) ORDER BY created_at, id"
                ).map(FamilyMember.init(row:))
            }
            return try await connection.query(
                """
                SELECT \(unescaped: FamilyMember.columns) FROM family_members WHERE id = ANY(orbit.parent_family_member_ids())
                ORDER BY created_at, id
                """
            ).map(FamilyMember.init(row:))
        }
    }

    /// One dependent the acting user may see.
    package func member(_ id: FamilyMemberID, as actor: UserID) async throws -> FamilyMember {
        try await runner.asUser(actor) { connection in
            guard let row = try await connection.query("SELECT \(unescaped: FamilyMember.columns) FROM family_members WHERE id = \(id)").first else {
                throw ServiceError.notFound("Family member \(id)")
            }
            return try FamilyMember(row: row)
        }
    }

    /// Whether the connection's user is one of `child`'s guardians (an invitation accepted).
    static func isGuardian(of child: FamilyMemberID, on connection: PostgresConnection) async throws -> Bool {
        try await connection.query("SELECT \(child) = ANY(orbit.parent_family_member_ids()) AS guardian").single().decode("guardian")
    }

    /// Operator (live updates): which of `devices` are paired for `community` and not revoked.
    package func devicesAsOperator(pairedFor community: CommunityID, among devices: [ChildDeviceID]) async throws -> [ChildDeviceID] {
        try await runner.asOperator { connection in
            try await connection.query(
                """
                SELECT d.id FROM child_devices d
                WHERE d.community_id = \(community) AND d.id = ANY(\(devices.map(\.uuid))) AND d.revoked_at IS NULL AND d.token_hash IS NOT NULL
                """
            ).map { try $0.decode("id", as: ChildDeviceID.self) }
        }
    }
}
