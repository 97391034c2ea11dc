package import Foundation
package import OrbitPostgres

/// An update or delete that a client sent with `If-Match` (docs/sync.md, "Offline writes"): it
/// happens only if the entity is still the version the client last saw, named by its entity tag
/// (what its GET sends as `ETag`, and the change feed as `etag`).
///
/// Bound around a request with `RequestRunner.$writePrecondition`; every transaction the request
/// runs as its user then begins by loading the entity as its GET would, and refuses with
/// `PreconditionFailed` if its tag is not one the client named. Such a transaction runs at
/// REPEATABLE READ: a concurrent write to the rows it then writes aborts it (a serialization
/// failure), and the retry finds the newer version and refuses. So a check and its write are
/// one step, with no lock and no extra privilege.
package struct WritePrecondition: Sendable {
    package enum Target: Sendable, Equatable {
        case entity(SyncEntity, UUID)
        /// The acting user's own membership of the community (`/communities/{id}/members/me`).
        case membership(CommunityID)
    }

    package var target: Target
    /// The entity tags of `If-Match`, quotes included; `*` accepts any current version.
    package var accepted: [String]
    /// The tag of an entity as its GET sends it (the API computes it from the JSON it writes).
    package var tag: @Sendable (any Encodable & Sendable) throws -> String

    package init(target: Target, accepted: [String], tag: @escaping @Sendable (any Encodable & Sendable) throws -> String) {
        self.target = target
        self.accepted = accepted
        self.tag = tag
    }

    /// Refuses unless the entity, as `user` reads it now, has a tag of `accepted`. An entity
    /// the user cannot see is left to the write, which answers "not found" as it would without
    /// `If-Match`.
    func check(as user: UserID, runner: RequestRunner, on connection: PostgresConnection) async throws {
        let entity: SyncEntity
        let id: UUID
        switch target {
        case .entity(let kind, let entityID):
            (entity, id) = (kind, entityID)
        case .membership(let community):
            let rows = try await connection.query(
                "SELECT id FROM members WHERE community_id = \(community) AND user_id = \(user) AND left_at IS NULL")
            guard let row = rows.first else { return }
            (entity, id) = (.member, try row.decode("id", as: UUID.self))
        }
        guard let current = try await entity.load(id, reader: .user(user), runner: runner, on: connection) else { return }
        let etag = try tag(current)
        guard !accepted.contains("*"), !accepted.contains(etag) else { return }
        throw PreconditionFailed(current: current, etag: etag)
    }
}

/// The entity changed since the version an `If-Match` named: here it is as it is now (412).
package struct PreconditionFailed: Error, Sendable {
    package var current: any Encodable & Sendable
    package var etag: String
}
