package import Foundation
import OrbitPostgres

/// What a retention run removed (or, in a dry run, would remove), per table.
package struct RetentionReport: Sendable, Codable, Equatable {
    package var counts: [String: Int]
    package var dryRun: Bool
    /// False when another run held the lock and this one did nothing.
    package var ran: Bool

    enum CodingKeys: String, CodingKey { case counts, dryRun = "dry_run", ran }
}

/// The data lifecycle (spec: "Data Lifecycle"): retention (hard deletes of what is past
/// keeping) and account deletion after a grace period.
package struct LifecycleService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    static let retentionLockKey: Int64 = 0x6F72_6269_7472_6574

    /// One retention rule: rows of `table` older than their keep period, and the children that
    /// go with them (counted before the delete, for the report).
    struct RetentionRule: Sendable {
        var table: String
        var keep: TimeInterval
        /// `SELECT id FROM … WHERE <condition on $1 = cutoff> ORDER BY … LIMIT $2`: the next batch
        /// to delete, or (with no batch size, `LIMIT NULL`) every row that is due.
        var select: @Sendable (_ cutoff: Date, _ batch: Int?) -> PostgresQuery
        var children: [(table: String, count: @Sendable ([UUID]) -> PostgresQuery)]
    }

    static let day: TimeInterval = 86_400

    static var retentionRules: [RetentionRule] {
        [
            RetentionRule(
                table: "posts", keep: 30 * day,
                select: { cutoff, batch in "SELECT id FROM posts WHERE deleted_at < \(cutoff) ORDER BY deleted_at, id LIMIT \(batch)" },
                children: [
                    ("comments", { ids in "SELECT count(*) FROM comments WHERE post_id = ANY(\(ids))" }),
                    ("reactions", { ids in "SELECT count(*) FROM reactions WHERE post_id = ANY(\(ids))" }),
                    ("poll_votes", { ids in "SELECT count(*) FROM poll_votes WHERE post_id = ANY(\(ids))" }),
                ]
            ),
            RetentionRule(
                table: "notifications", keep: 90 * day,
                select: { cutoff, batch in "SELECT id FROM notifications WHERE created_at < \(cutoff) ORDER BY created_at, id LIMIT \(batch)" },
                children: []
            ),
            RetentionRule(
                table: "invites", keep: 7 * day,
                select: { cutoff, batch in "SELECT id FROM invites WHERE expires_at < \(cutoff) ORDER BY expires_at, id LIMIT \(batch)" },
                children: []
            ),
            RetentionRule(
                table: "refresh_tokens", keep: 30 * day,
                select: { cutoff, batch in
                    "SELECT id FROM refresh_tokens WHERE revoked_at < \(cutoff) OR expires_at < \(cutoff) ORDER BY expires_at, id LIMIT \(batch)"
                },
                children: []
            ),
            RetentionRule(
                table: "audit_log", keep: 730 * day,
                select: { cutoff, batch in "SELECT id FROM audit_log WHERE created_at < \(cutoff) ORDER BY created_at, id LIMIT \(batch)" },
                children: []
            ),
            // One community per transaction: its rows go with it (ON DELETE CASCADE).
            RetentionRule(
                table: "communities", keep: 30 * day,
                select: { cutoff, batch in
                    "SELECT id FROM communities WHERE deleted_at < \(cutoff) ORDER BY deleted_at, id LIMIT \(batch.map { _ in 1 })"
                },
                children: [
                    ("members", { ids in "SELECT count(*) FROM members WHERE community_id = ANY(\(ids))" }),
                    ("events", { ids in "SELECT count(*) FROM events WHERE community_id = ANY(\(ids))" }),
                    ("posts", { ids in "SELECT count(*) FROM posts WHERE community_id = ANY(\(ids))" }),
                    ("transactions", { ids in "SELECT count(*) FROM transactions WHERE community_id = ANY(\(ids))" }),
                ]
            ),
        ]
    }

    /// Hard-deletes what the retention policies say is past keeping, in batches of `batchSize`
    /// rows per transaction (so a large purge never holds long locks), as an operator.
    ///
    /// Safe on several servers at once: each batch's transaction first takes a transaction-level
    /// try-lock, so two runs never delete side by side; a run that finds the lock taken before
    /// it deleted anything reports `ran: false` and stops, one that finds it taken later stops
    /// where it is (the other run carries on). Nothing is held between transactions, which keeps
    /// it correct behind a transaction-mode pooler. Idempotent.
    /// - Parameter dryRun: count only.
    package func runRetention(dryRun: Bool = false, batchSize: Int = 1000) async throws -> RetentionReport {
        guard (1...100_000).contains(batchSize) else { throw ServiceError.invalidInput(field: "batch_size", reason: "must be between 1 and 100000") }
        let now = runner.now()
        // Every table appears in the report, with 0 when nothing was due.
        var counts: [String: Int] = [:]
        for rule in Self.retentionRules {
            counts[rule.table] = 0
            for child in rule.children { counts[child.table] = 0 }
        }
        counts["changes"] = 0
        let changesCutoff = now.addingTimeInterval(-Double(SyncService.retentionDays) * Self.day)
        if dryRun {
            let due: [String: Int] = try await runner.asOperator { connection in
                var due: [String: Int] = [:]
                for rule in Self.retentionRules {
                    let ids = try await connection.query(rule.select(now.addingTimeInterval(-rule.keep), nil)).map {
                        try $0.decode("id", as: UUID.self)
                    }
                    due[rule.table, default: 0] += ids.count
                    for child in rule.children where !ids.isEmpty {
                        due[child.table, default: 0] += Int(try await connection.query(child.count(ids)).single().decode(0, as: Int64.self))
                    }
                }
                due["changes"] = Int(
                    try await connection.query("SELECT count(*) FROM changes WHERE created_at < \(changesCutoff)").single().decode(0, as: Int64.self))
                return due
            }
            return RetentionReport(counts: counts.merging(due, uniquingKeysWith: +), dryRun: true, ran: true)
        }
        var batches = 0
        for rule in Self.retentionRules {
            let cutoff = now.addingTimeInterval(-rule.keep)
            while true {
                // What one batch removed, per table; nil when another run holds the lock. (Counted
                // in the transaction's result, so a retried transaction does not count twice.)
                let batch: [String: Int]? = try await runner.asOperator { connection in
                    let locked: Bool = try await connection.query("SELECT pg_try_advisory_xact_lock(\(Self.retentionLockKey)) AS locked")
                        .single().decode("locked")
                    guard locked else { return nil }
                    let ids = try await connection.query(rule.select(cutoff, batchSize)).map { try $0.decode("id", as: UUID.self) }
                    guard !ids.isEmpty else { return [:] }
                    var removed: [String: Int] = [:]
                    for child in rule.children {
                        removed[child.table] = Int(try await connection.query(child.count(ids)).single().decode(0, as: Int64.self))
                    }
                    removed[rule.table] = try await connection.query("DELETE FROM \(unescaped: rule.table) WHERE id = ANY(\(ids))").affectedRows ?? 0
                    return removed
                }
                guard let batch else {
                    return RetentionReport(counts: batches == 0 ? [:] : counts, dryRun: false, ran: batches > 0)
                }
                batches += 1
                counts.merge(batch, uniquingKeysWith: +)
                if batch.isEmpty { break }
            }
        }
        // The sync feed's log: the horizon records the newest transaction whose changes went, in
        // the same statement as the deletes, so a cursor that may lack one of them is refused
        // (410) from the moment it is gone (SyncService.requireKept).
        while true {
            let removed: Int? = try await runner.asOperator { connection -> Int? in
                let locked: Bool = try await connection.query("SELECT pg_try_advisory_xact_lock(\(Self.retentionLockKey)) AS locked")
                    .single().decode("locked")
                guard locked else { return nil }
                return Int(
                    try await connection.query(
                        """
                        WITH gone AS (
                            DELETE FROM changes WHERE seq IN (
                                SELECT seq FROM changes WHERE created_at < \(changesCutoff) ORDER BY seq LIMIT \(batchSize))
                            RETURNING xid)
                        UPDATE orbit_private.change_horizon
                        SET cutoff = greatest(cutoff, \(changesCutoff)),
                            compacted_through = greatest(compacted_through, coalesce((SELECT max(xid) FROM gone), compacted_through))
                        RETURNING (SELECT count(*) FROM gone) AS removed
                        """
                    ).single().decode("removed", as: Int64.self))
            }
            guard let removed else { break }
            counts["changes", default: 0] += removed
            if removed == 0 { break }
        }
        return RetentionReport(counts: counts, dryRun: false, ran: true)
    }

    // MARK: - Account deletion

    /// Starts the 7-day grace period before the acting user's account is deleted. Refused while
    /// they are the last admin of a community that has other members.
    package func requestAccountDeletion(as actor: UserID) async throws -> Date {
        try await runner.asUser(actor) { connection in
            if let community = try await lastAdminCommunity(of: actor, on: connection) {
                throw ServiceError.conflict(
                    "You are the last admin of community \(community), which has other members: make someone else an admin first."
                )
            }
            let requested = runner.now()
            try await connection.query("UPDATE users SET deletion_requested_at = \(requested) WHERE id = \(actor) AND deleted_at IS NULL")
            try await runner.audit("account.deletion_requested", by: actor, community: nil, target: ("user", actor.uuid), on: connection)
            return requested.addingTimeInterval(7 * Self.day)
        }
    }

    /// Cancels a pending deletion during the grace period.
    package func cancelAccountDeletion(as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            let changed = try await connection.query(
                "UPDATE users SET deletion_requested_at = NULL WHERE id = \(actor) AND deletion_requested_at IS NOT NULL AND deleted_at IS NULL"
            ).affectedRows
            guard changed == 1 else { throw ServiceError.conflict("No account deletion is pending.") }
            try await runner.audit("account.deletion_cancelled", by: actor, community: nil, target: ("user", actor.uuid), on: connection)
        }
    }

    /// A community (other than one where they are alone) where `user` is the only active admin.
    func lastAdminCommunity(of user: UserID, on connection: PostgresConnection) async throws -> CommunityID? {
        try await connection.query(
            """
            SELECT m.community_id FROM members m
            WHERE m.user_id = \(user) AND m.left_at IS NULL AND m.role = 'admin'
              AND NOT EXISTS (SELECT FROM members o WHERE o.community_id = m.community_id AND o.role = 'admin' AND o.left_at IS NULL AND o.user_id <> \(user))
              AND EXISTS (SELECT FROM members o WHERE o.community_id = m.community_id AND o.left_at IS NULL AND o.user_id <> \(user))
            LIMIT 1
            """
        ).first?.decode("community_id", as: CommunityID.self)
    }

    /// Operator job: deletes the accounts whose grace period is over. Personal data is
    /// anonymized ("[Deleted User]"), family members removed, memberships ended, sessions
    /// revoked; content stays. An account that became the last admin of a community with other
    /// members in the meantime is skipped (and reported). Returns (deleted, skipped).
    package func deleteDueAccounts() async throws -> (deleted: Int, skipped: Int) {
        enum Outcome {
            case none, deleted, skipped(UserID)
        }
        let cutoff = runner.now().addingTimeInterval(-7 * Self.day)
        var deleted = 0
        var skipped: [UUID] = []
        // One account per transaction. The account is chosen and locked by the statement that
        // checks it is due, so a cancellation that commits first takes it out of the running,
        // one that comes later waits and then finds the account deleted, and another server
        // running this job at the same moment skips it (SKIP LOCKED) instead of deleting it twice.
        while true {
            let outcome: Outcome = try await runner.asOperator { connection in
                guard
                    let row = try await connection.query(
                        """
                        SELECT id FROM users
                        WHERE deletion_requested_at < \(cutoff) AND deleted_at IS NULL AND id <> ALL(\(skipped))
                        ORDER BY deletion_requested_at, id LIMIT 1
                        FOR UPDATE SKIP LOCKED
                        """
                    ).first
                else { return .none }
                let user = try row.decode("id", as: UserID.self)
                // The audit log and triggers see the account as the acting user.
                try await connection.query("SELECT set_config('app.current_user_id', \(user.description), true)")
                if try await lastAdminCommunity(of: user, on: connection) != nil { return .skipped(user) }
                try await anonymize(user, on: connection)
                return .deleted
            }
            switch outcome {
            case .none: return (deleted, skipped.count)
            case .deleted: deleted += 1
            case .skipped(let user): skipped.append(user.uuid)
            }
        }
    }

    /// Personal data anonymized, family members removed, memberships ended, sessions revoked;
    /// content stays. A community the user is alone in goes with them (soft delete; retention
    /// purges it after 30 days), and their membership there stays as it was.
    private func anonymize(_ user: UserID, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE communities c SET deleted_at = now()
            WHERE c.deleted_at IS NULL AND EXISTS (SELECT FROM members m WHERE m.community_id = c.id AND m.user_id = \(user) AND m.left_at IS NULL)
              AND NOT EXISTS (SELECT FROM members o WHERE o.community_id = c.id AND o.left_at IS NULL AND o.user_id <> \(user))
            """
        )
        try await connection.query(
            """
            UPDATE members SET left_at = now()
            WHERE user_id = \(user) AND left_at IS NULL AND community_id IN (SELECT id FROM communities WHERE deleted_at IS NULL)
            """
        )
        // A child with another guardian stays theirs: the longest-standing other guardian becomes
        // the guardian of record; the account's guardianships and invitations go; a child with
        // no other guardian goes.
        try await connection.query(
            """
            UPDATE family_members f SET user_id = (
                SELECT g.user_id FROM family_guardians g
                WHERE g.family_member_id = f.id AND g.user_id <> \(user) AND g.accepted_at IS NOT NULL
                ORDER BY g.accepted_at, g.user_id LIMIT 1
            )
            WHERE f.user_id = \(user)
              AND EXISTS (SELECT FROM family_guardians g WHERE g.family_member_id = f.id AND g.user_id <> \(user) AND g.accepted_at IS NOT NULL)
            """
        )
        try await connection.query(
            "DELETE FROM family_guardians g WHERE g.user_id = \(user) AND NOT EXISTS (SELECT FROM family_members f WHERE f.id = g.family_member_id AND f.user_id = \(user))"
        )
        try await connection.query("DELETE FROM family_guardians WHERE invited_by = \(user) AND accepted_at IS NULL")
        try await connection.query("DELETE FROM family_members WHERE user_id = \(user)")
        try await connection.query("DELETE FROM payment_handles WHERE user_id = \(user)")
        try await DeviceService.removeAll(of: user, on: connection)
        try await connection.query("UPDATE refresh_tokens SET revoked_at = now() WHERE user_id = \(user) AND revoked_at IS NULL")
        try await connection.query(
            """
            UPDATE users SET display_name = '[Deleted User]', email = \("deleted-\(user)@deleted.invalid"), apple_id = \("deleted:\(user)"),
                avatar_url = NULL, deleted_at = now()
            WHERE id = \(user) AND deleted_at IS NULL
            """
        )
        try await runner.audit("account.deleted", by: user, community: nil, target: ("user", user.uuid), on: connection)
    }
}
