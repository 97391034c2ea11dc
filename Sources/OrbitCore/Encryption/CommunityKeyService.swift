package import Foundation
import OrbitPostgres

/// A member's copy of one version of the community key, wrapped (encrypted) for them.
package struct WrappedCommunityKey: Sendable, Codable, Equatable {
    package var keyVersion: Int
    /// Base64 of the wrapped key, as the member who recorded it sent it.
    package var encryptedKey: String
    package var createdAt: Date

    enum CodingKeys: String, CodingKey { case keyVersion = "key_version", encryptedKey = "encrypted_key", createdAt = "created_at" }
}

/// An active member as the one who re-keys needs them: their public key, and whether they hold
/// the current version.
package struct CommunityKeyHolder: Sendable, Codable, Equatable {
    package var userID: UserID
    /// Base64; nil until their app has published one.
    package var publicKey: String?
    package var hasCurrentKey: Bool

    enum CodingKeys: String, CodingKey { case userID = "user_id", publicKey = "public_key", hasCurrentKey = "has_current_key" }
}

/// Where a community's end-to-end encryption stands (docs/e2e.md).
package struct CommunityKeyStatus: Sendable, Codable, Equatable {
    package var communityID: CommunityID
    /// `settings.endToEndEncryption`.
    package var enabled: Bool
    /// The version new content must be encrypted with; nil before the first key.
    package var currentVersion: Int?
    /// Members who left or were removed but hold the current key: until a new version is
    /// recorded for the others, they could read what is posted.
    package var removedHolders: [UserID]
    /// A re-key is needed: someone in `removedHolders`.
    package var needsRekey: Bool
    /// Every active member, with their public key.
    package var members: [CommunityKeyHolder]
    /// The asker's own wrapped keys, newest version first.
    package var myKeys: [WrappedCommunityKey]

    enum CodingKeys: String, CodingKey {
        case communityID = "community_id", enabled, currentVersion = "current_version", removedHolders = "removed_holders"
        case needsRekey = "needs_rekey", members, myKeys = "my_keys"
    }
}

/// A user's published public key.
package struct UserPublicKey: Sendable, Codable, Equatable {
    package var userID: UserID
    package var publicKey: String
    package var updatedAt: Date

    enum CodingKeys: String, CodingKey { case userID = "user_id", publicKey = "public_key", updatedAt = "updated_at" }
}

/// Community keys for end-to-end encryption (docs/e2e.md): the server keeps each member's
/// wrapped copy of each version and never sees a key in the clear; an admin records a new version
/// for the remaining members when someone leaves.
package struct CommunityKeyService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// The community's key status as `actor` (a member) sees it.
    package func status(of community: CommunityID, as actor: UserID) async throws -> CommunityKeyStatus {
        try await runner.asUser(actor) { connection in
            _ = try await runner.requireMember(actor, of: community, on: connection)
            return try await Self.status(of: community, reader: actor, on: connection)
        }
    }

    /// Records version `version` of the community key, wrapped for each active member
    /// (`keys`: user → wrapped key). Admins only; `version` must follow the current one, and
    /// `keys` must name every active member who has published a public key, and no one who is not
    /// an active member. (A member without a public key cannot be given one yet; they must not
    /// hold up a re-key after someone leaves. The status shows them without the current key.)
    package func record(in community: CommunityID, version: Int, keys: [UserID: Data], as actor: UserID) async throws -> CommunityKeyStatus {
        for (_, key) in keys where key.isEmpty || key.count > 4096 {
            throw ServiceError.invalidInput(field: "keys.encrypted_key", reason: "must be 1 to 4096 bytes")
        }
        return try await runner.asUser(actor) { connection in
            let role = try await runner.requireMember(actor, of: community, on: connection)
            guard role == .admin else { throw ServiceError.forbidden(rule: "only admins record the community's keys") }
            let results = try await connection.pipeline([
                "SELECT max(key_version) AS version FROM community_keys WHERE community_id = \(community)",
                """
                SELECT m.user_id, pk.user_id IS NOT NULL AS has_public_key
                FROM members m LEFT JOIN user_public_keys pk ON pk.user_id = m.user_id
                WHERE m.community_id = \(community) AND m.left_at IS NULL
                """,
            ])
            let current = try results[0].single().decode("version", as: Int32?.self).map(Int.init) ?? 0
            guard version == current + 1 else {
                throw ServiceError.conflict(field: "key_version", reason: "must be \(current + 1), the version after the current one (\(current))")
            }
            let rows = try results[1].map { try $0.decode((UserID, Bool).self) }
            let members = Set(rows.map(\.0))
            let required = Set(rows.filter(\.1).map(\.0))
            if let missing = required.subtracting(keys.keys).sorted(by: { $0.description < $1.description }).first {
                throw ServiceError.conflict(field: "keys", reason: "must hold a key for every active member with a public key (none for \(missing))")
            }
            guard !keys.isEmpty else { throw ServiceError.invalidInput(field: "keys", reason: "must hold at least one key") }
            if let stranger = Set(keys.keys).subtracting(members).sorted(by: { $0.description < $1.description }).first {
                throw ServiceError.conflict(field: "keys", reason: "may only hold keys for active members (\(stranger) is not one)")
            }
            let users = keys.keys.sorted { $0.description < $1.description }
            try await connection.query(
                """
                INSERT INTO community_keys (community_id, user_id, encrypted_key, key_version, created_by)
                SELECT \(community), k.user_id, k.encrypted_key, \(version)::int, \(actor)
                FROM unnest(\(users.map(\.uuid)), \(users.map { keys[$0] ?? Data() })) AS k (user_id, encrypted_key)
                """)
            try await runner.audit(
                "community.keys_recorded", by: actor, community: community, target: ("community", community.uuid),
                metadata: ["key_version": String(version), "members": String(users.count)], on: connection)
            return try await Self.status(of: community, reader: actor, on: connection)
        }
    }

    /// Publishes (or replaces) the acting user's public key.
    package func publish(publicKey: Data, as actor: UserID) async throws -> UserPublicKey {
        guard !publicKey.isEmpty, publicKey.count <= 1024 else {
            throw ServiceError.invalidInput(field: "public_key", reason: "must be 1 to 1024 bytes, in base64")
        }
        return try await runner.asUser(actor) { connection in
            let row = try await connection.query(
                """
                INSERT INTO user_public_keys (user_id, public_key) VALUES (\(actor), \(publicKey))
                ON CONFLICT (user_id) DO UPDATE SET public_key = excluded.public_key, updated_at = now()
                RETURNING user_id, public_key, updated_at
                """
            ).single()
            let (user, key, updated) = try row.decode((UserID, Data, Date).self)
            return UserPublicKey(userID: user, publicKey: key.base64EncodedString(), updatedAt: updated)
        }
    }

    /// One round trip: the setting, the current version, the members with their public keys and
    /// whether they hold it, who left holding it, and the reader's own wrapped keys. (Read as the
    /// reader: a member sees every row of their community's keys.)
    static func status(of community: CommunityID, reader: UserID, on connection: PostgresConnection) async throws -> CommunityKeyStatus {
        let current: PostgresQuery = "(SELECT max(key_version) FROM community_keys WHERE community_id = \(community))"
        let results = try await connection.pipeline([
            """
            SELECT coalesce((settings ->> 'endToEndEncryption')::boolean, false) AS enabled, \(current) AS version
            FROM communities WHERE id = \(community)
            """,
            """
            SELECT m.user_id, pk.public_key,
                EXISTS (SELECT FROM community_keys k WHERE k.community_id = m.community_id AND k.user_id = m.user_id
                        AND k.key_version = \(current)) AS has_current_key
            FROM members m LEFT JOIN user_public_keys pk ON pk.user_id = m.user_id
            WHERE m.community_id = \(community) AND m.left_at IS NULL
            ORDER BY m.user_id
            """,
            """
            SELECT k.user_id FROM community_keys k
            WHERE k.community_id = \(community) AND k.key_version = \(current)
              AND NOT EXISTS (SELECT FROM members m WHERE m.community_id = k.community_id AND m.user_id = k.user_id AND m.left_at IS NULL)
            ORDER BY k.user_id
            """,
            """
            SELECT key_version, encrypted_key, created_at FROM community_keys
            WHERE community_id = \(community) AND user_id = \(reader) ORDER BY key_version DESC
            """,
        ])
        guard let setting = results[0].first else { throw ServiceError.notFound("Community \(community)") }
        let removed = try results[2].map { try $0.decode("user_id", as: UserID.self) }
        return CommunityKeyStatus(
            communityID: community, enabled: try setting.decode("enabled"),
            currentVersion: try setting.decode("version", as: Int32?.self).map(Int.init), removedHolders: removed, needsRekey: !removed.isEmpty,
            members: try results[1].map { row in
                let (user, key, holds) = try row.decode((UserID, Data?, Bool).self)
                return CommunityKeyHolder(userID: user, publicKey: key?.base64EncodedString(), hasCurrentKey: holds)
            },
            myKeys: try results[3].map { row in
                let (version, key, created) = try row.decode((Int32, Data, Date).self)
                return WrappedCommunityKey(keyVersion: Int(version), encryptedKey: key.base64EncodedString(), createdAt: created)
            })
    }
}
