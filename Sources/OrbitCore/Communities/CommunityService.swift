package import Foundation
import OrbitPostgres

/// Communities (spec: Communities): creating, settings, soft deletion and restore, the
/// subscription, and the audit log admins read.
package struct CommunityService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// How long a soft-deleted community can be restored (spec: "Community Deletion Flow").
    static let restoreWindow: TimeInterval = 30 * 24 * 3600

    /// Creates a community; its creator becomes its first admin in the same transaction.
    package func create(
        name: String, description: String? = nil, iconURL: String? = nil, settings: CommunitySettings = CommunitySettings(),
        as actor: UserID
    ) async throws -> Community {
        let name = try Validate.text(name, field: "name", limit: 100)
        let description = try description.map { try Validate.text($0, field: "description", limit: 2000, multiline: true) }
        let iconURL = try Validate.url(iconURL, field: "icon_url")
        try settings.validate()
        let settingsJSON = try PostgresJSON(encoding: settings)
        // The id is made here: the new row is invisible to its creator (RLS) until the
        // membership exists, so INSERT … RETURNING cannot return it.
        let id = CommunityID.new(in: .communities)
        let audit = try runner.auditStatement("community.created", by: actor, community: id, target: ("community", id.uuid))
        return try await runner.asUser(actor) { connection in
            // One round trip: the community, its first admin, the audit entry, and the community as it now is.
            let results = try await connection.pipeline([
                """
                INSERT INTO communities (id, name, description, icon_url, created_by, settings)
                VALUES (\(id), \(name), \(description), \(iconURL), \(actor), \(settingsJSON))
                """,
                "INSERT INTO members (community_id, user_id, role) VALUES (\(id), \(actor), 'admin')",
                audit,
                Self.communityQuery(id),
            ])
            guard let row = results[3].first else { throw ServiceError.notFound("Community \(id)") }
            return try Community(row: row)
        }
    }

    static func community(_ id: CommunityID, on connection: PostgresConnection) async throws -> Community {
        guard let row = try await connection.query(communityQuery(id)).first else { throw ServiceError.notFound("Community \(id)") }
        return try Community(row: row)
    }

    /// `community(_:on:)`'s statement, for a pipeline.
    static func communityQuery(_ id: CommunityID) -> PostgresQuery {
        "SELECT \(unescaped: Community.columns) FROM communities WHERE id = \(id)"
    }

    /// A community the acting user is an active member of.
    package func get(_ id: CommunityID, as actor: UserID) async throws -> Community {
        try await runner.asUser(actor) { try await Self.community(id, on: $0) }
    }

    /// Operator: any community, deleted ones included.
    package func getAsOperator(_ id: CommunityID) async throws -> Community {
        try await runner.asOperator { try await Self.community(id, on: $0) }
    }

    /// The acting user's communities ("my groups"): those they pinned first, by their position
    /// (none last), then the most recently active; each with their role, balances and pin.
    /// - Parameter archived: archived communities too (they are left out otherwise).
    package func mine(archived: Bool = false, as actor: UserID) async throws -> [MyCommunity] {
        try await runner.asUserReading(actor) { connection in
            // One query however many communities: each with the actor's row, their balances
            // (snapshot + journal, by index) and the newest change they can see (the change
            // log's index, read backwards).
            try await connection.query(
                """
                SELECT \(unescaped: Community.columns), my_role, my_pinned, my_position,
                    coalesce((
                        SELECT jsonb_agg(jsonb_build_object('currency', b.currency, 'balance', b.balance) ORDER BY b.currency)
                        FROM balances b WHERE b.community_id = c.id AND b.user_id = \(actor) AND b.balance <> 0
                    ), '[]'::jsonb) AS my_balances,
                    greatest(c.updated_at, (
                        SELECT ch.created_at FROM changes ch WHERE ch.community_id = c.id ORDER BY ch.xid DESC, ch.seq DESC LIMIT 1
                    )) AS last_activity_at
                FROM (
                    SELECT communities.*, m.role::text AS my_role, m.pinned AS my_pinned, m.pin_position AS my_position
                    FROM communities JOIN members m ON m.community_id = communities.id
                    WHERE m.user_id = \(actor) AND m.left_at IS NULL AND (\(archived) OR communities.archived_at IS NULL)
                ) c
                ORDER BY my_pinned DESC, my_position ASC NULLS LAST, last_activity_at DESC, id
                """
            ).map { row in
                MyCommunity(
                    community: try Community(row: row),
                    my: MyCommunity.Mine(
                        role: try row.decode("my_role"),
                        balances: try row.decode("my_balances", as: PostgresJSON.self).decode([CurrencyBalance].self),
                        pinned: try row.decode("my_pinned"), position: try row.decode("my_position", as: Int32?.self).map(Int.init),
                        lastActivityAt: try row.decode("last_activity_at")))
            }
        }
    }

    /// Operator: every community, deleted ones included, by name.
    package func all() async throws -> [Community] {
        try await runner.asOperator { connection in
            try await connection.query("SELECT \(unescaped: Community.columns) FROM communities ORDER BY name, id").map(Community.init(row:))
        }
    }

    /// Changes name, description, icon or settings (admins). `settings` keys are laid over the
    /// current ones. Audit-logged as `community.updated` with the changed fields.
    package func update(
        _ id: CommunityID, name: String? = nil, description: String? = nil, iconURL: String? = nil, settings: CommunitySettings? = nil,
        as actor: UserID
    ) async throws -> Community {
        let name = try name.map { try Validate.text($0, field: "name", limit: 100) }
        let description = try description.map { try Validate.text($0, field: "description", limit: 2000, multiline: true) }
        let iconURL = try Validate.url(iconURL, field: "icon_url")
        try settings?.validate()
        return try await runner.asUser(
            actor, auditingRefusal: .init(action: "community.updated", community: id, target: ("community", id.uuid))
        ) {
            connection in
            // The community and the actor's role in one round trip.
            guard
                let current = try await connection.query(
                    """
                    SELECT \(unescaped: Community.columns), \(RequestRunner.roleColumn(of: actor, community: "communities.id"))
                    FROM communities WHERE id = \(id)
                    """
                ).first,
                let role = try RequestRunner.role(in: current)
            else { throw ServiceError.notFound("Community \(id)") }
            guard role == .admin else { throw ServiceError.forbidden(rule: "only admins can edit community settings") }
            let stored = try Community(row: current).settings
            let merged = settings.map { stored.merging($0) } ?? stored
            var changed: [String] = []
            if name != nil { changed.append("name") }
            if description != nil { changed.append("description") }
            if iconURL != nil { changed.append("icon_url") }
            if settings != nil { changed.append("settings") }
            // One round trip: the change, returned as it now is, and its audit entry.
            let results = try await connection.pipeline([
                """
                UPDATE communities SET name = coalesce(\(name), name), description = coalesce(\(description), description),
                    icon_url = coalesce(\(iconURL), icon_url), settings = \(try PostgresJSON(encoding: merged))
                WHERE id = \(id)
                RETURNING \(unescaped: Community.columns)
                """,
                try runner.auditStatement(
                    "community.updated", by: actor, community: id, target: ("community", id.uuid),
                    metadata: ["fields": changed.joined(separator: ",")]),
            ])
            guard let row = results[0].first else { throw ServiceError.notFound("Community \(id)") }
            return try Community(row: row)
        }
    }

    /// Soft-deletes a community: it disappears for every member at once. Only its creator
    /// (while an admin) may (spec: "Delete community … Only creator initially").
    package func delete(_ id: CommunityID, as actor: UserID) async throws {
        try await runner.asUser(
            actor, auditingRefusal: .init(action: "community.deleted", community: id, target: ("community", id.uuid))
        ) {
            connection in
            try await runner.requireAdmin(actor, of: id, rule: "only the community's creator can delete it", on: connection)
            let current = try await Self.community(id, on: connection)
            guard current.createdBy == actor else { throw ServiceError.forbidden(rule: "only the community's creator can delete it") }
            try await runner.audit("community.deleted", by: actor, community: id, target: ("community", id.uuid), on: connection)
            try await connection.query("UPDATE communities SET deleted_at = now() WHERE id = \(id)")
        }
    }

    /// Archives a community (admins; docs/api.md, "Archived communities"): it becomes read-only
    /// for everyone (sql/830_archive.sql refuses every write in it), keeps its money, and is
    /// listed in "my groups" only on request, until an admin unarchives it. Archiving an
    /// archived community changes nothing. Audit-logged.
    package func archive(_ id: CommunityID, as actor: UserID) async throws -> Community {
        try await setArchived(id, true, as: actor)
    }

    /// Makes an archived community writable again (admins); one that is not archived is left as it is.
    package func unarchive(_ id: CommunityID, as actor: UserID) async throws -> Community {
        try await setArchived(id, false, as: actor)
    }

    private func setArchived(_ id: CommunityID, _ archived: Bool, as actor: UserID) async throws -> Community {
        let action = archived ? "community.archived" : "community.unarchived"
        return try await runner.asUser(actor, auditingRefusal: .init(action: action, community: id, target: ("community", id.uuid))) {
            connection in
            try await runner.requireAdmin(actor, of: id, rule: "only admins archive or unarchive a community", on: connection)
            let results = try await connection.pipeline([
                """
                UPDATE communities SET archived_at = CASE WHEN \(archived) THEN coalesce(archived_at, now()) END
                WHERE id = \(id)
                RETURNING \(unescaped: Community.columns)
                """,
                try runner.auditStatement(action, by: actor, community: id, target: ("community", id.uuid)),
            ])
            guard let row = results[0].first else { throw ServiceError.notFound("Community \(id)") }
            return try Community(row: row)
        }
    }

    /// Restores a community deleted less than 30 days ago: its admins may (spec: "Community
    /// Deletion Flow"). A deleted community is hidden from everyone by row-level security, so
    /// this runs as an operator and checks the actor's admin membership itself. Audit-logged.
    package func restore(_ id: CommunityID, as actor: UserID) async throws -> Community {
        try await runner.asOperator(actor) { connection in
            let role = try await connection.query(
                "SELECT role::text FROM members WHERE community_id = \(id) AND user_id = \(actor) AND left_at IS NULL"
            ).first?.decode(String.self)
            // Its members know the community; to anyone else it does not exist.
            guard let role else { throw ServiceError.notFound("Community \(id)") }
            guard role == MemberRole.admin.rawValue else { throw ServiceError.forbidden(rule: "only admins restore a community") }
            return try await restore(id, by: actor, on: connection)
        }
    }

    /// Operator: restores any community deleted less than 30 days ago, on behalf of `actor`.
    package func restoreAsOperator(_ id: CommunityID, as actor: UserID) async throws -> Community {
        try await runner.asOperator(actor) { connection in try await restore(id, by: actor, on: connection) }
    }

    private func restore(_ id: CommunityID, by actor: UserID, on connection: PostgresConnection) async throws -> Community {
        let current = try await Self.community(id, on: connection)
        guard let deletedAt = current.deletedAt else { throw ServiceError.conflict("Community \(id) is not deleted.") }
        guard runner.now().timeIntervalSince(deletedAt) < Self.restoreWindow else {
            throw ServiceError.conflict("Community \(id) was deleted more than 30 days ago and can no longer be restored.")
        }
        try await connection.query("UPDATE communities SET deleted_at = NULL WHERE id = \(id)")
        try await runner.audit("community.restored", by: actor, community: id, target: ("community", id.uuid), on: connection)
        return try await Self.community(id, on: connection)
    }

    /// Sets the subscription: an operator's work (it records what billing decided; a member
    /// must not be able to grant themselves a paid plan). Audit-logged, and so is a refused
    /// attempt, in the community's log.
    package func setSubscription(_ id: CommunityID, status: SubscriptionStatus, expiresAt: Date?, as actor: UserID) async throws -> Community {
        let isOperator = try await UserService(runner).isOperator(actor)
        guard isOperator else {
            // As for the other audit-logged refusals: a member's attempt is recorded in the
            // community's log; to anyone else the community does not exist.
            let rule = "only operators change a community's subscription"
            let member = try await runner.asUser(actor) { try await runner.membership(actor, in: id, on: $0) }
            guard member != nil else { throw ServiceError.notFound("Community \(id)") }
            do {
                try await runner.asOperator(actor) { connection in
                    try await runner.audit(
                        "subscription.changed.refused", by: actor, community: id, target: ("community", id.uuid), metadata: ["rule": rule],
                        on: connection)
                }
            } catch {
                RequestRunner.logger.error(
                    "could not record a refused action in the audit log",
                    metadata: ["action": "subscription.changed.refused", "user_id": "\(actor)", "error": "\(error)"])
            }
            throw ServiceError.forbidden(rule: rule)
        }
        return try await runner.asOperator(actor) { connection in
            let current = try await Self.community(id, on: connection)
            try await connection.query(
                """
                UPDATE communities SET subscription_status = \(status)::subscription_status, subscription_expires_at = \(expiresAt)
                WHERE id = \(id)
                """
            )
            try await runner.audit(
                "subscription.changed", by: actor, community: id, target: ("community", id.uuid),
                metadata: ["from": current.subscriptionStatus.rawValue, "to": status.rawValue], on: connection
            )
            return try await Self.community(id, on: connection)
        }
    }

    /// The order of audit-log: newest first.
    static let auditOrder = Paging.Keyset.timeAndID("audit-log")

    /// A community's audit log, newest first (admins), `limit` at a time after `cursor`.
    package func auditLog(_ id: CommunityID, limit: Int = 50, cursor: String? = nil, as actor: UserID) async throws -> Page<AuditEntry> {
        try Validate.limit(limit, in: 1...500)
        let after = try Self.auditOrder.decode(cursor)
        return try await runner.asUser(actor) { connection in
            try await runner.requireAdmin(actor, of: id, rule: "only admins can read the audit log", on: connection)
            let rows = try await connection.query(
                """
                SELECT \(unescaped: AuditEntry.columns), \(unescaped: Self.auditOrder.columns) FROM audit_log
                WHERE community_id = \(id)
                  AND \(try Self.auditOrder.after(after))
                ORDER BY \(unescaped: Self.auditOrder.order) LIMIT \(limit + 1)
                """
            )
            return try Self.auditOrder.page(rows, limit: limit, item: AuditEntry.init(row:))
        }
    }
}
