package import Foundation
import Logging
package import OrbitPostgres

/// What every domain service runs its requests on (docs/architecture.md, "Tenancy and security").
///
/// A request on behalf of a user is one transaction as `orbit_app` with `app.current_user_id`
/// set, so row-level security applies to it exactly as to an app request; the services check
/// the permission matrix first, to fail with a `forbidden` error that names the rule. Operator
/// requests (listing everything, restoring a deleted community, the scheduled jobs) run as
/// `orbit_admin` and still name the acting user for the audit log. Either kind is retried
/// whole after a serialization failure or a deadlock, and the database's refusals come out as
/// `ServiceError`s.
package struct RequestRunner: Sendable {
    package let pool: ConnectionPool
    /// The services' clock (edit windows, expiries, what "today" is); tests set it.
    package var now: @Sendable () -> Date
    /// Where uploads are kept; media operations need it.
    package var storage: (any MediaStorage)?
    /// Makes images' thumbnails at upload (libvips; tests give their own).
    package var thumbnailer: any ThumbnailMaking = Thumbnailer()
    /// Hot standbys for the reads that may be slightly stale (`asUserReading`); nil: all on `pool`.
    package let replicas: ReadReplicas?

    package init(
        pool: ConnectionPool, replicas: ReadReplicas? = nil, storage: (any MediaStorage)? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.pool = pool
        self.replicas = replicas
        self.storage = storage
        self.now = now
    }

    static let logger = Logger(label: "orbit.services")

    /// The IP address of the client the current request came from, for the audit log's
    /// `ip_address`. The HTTP API binds it around each request; the CLI leaves it nil.
    @TaskLocal package static var clientAddress: String?

    /// The `If-Match` of the current request (its update or delete happens only to the version
    /// the client names); bound by the HTTP API around such a request.
    @TaskLocal package static var writePrecondition: WritePrecondition?

    /// A create with the id its client generated (`ClientCreate`); bound by the HTTP API around
    /// such a create.
    @TaskLocal package static var clientCreate: ClientCreate?

    /// Runs `body` as one request of `user`, on the primary. Under a `writePrecondition`, the
    /// transaction checks it first, at REPEATABLE READ (see `WritePrecondition`).
    package func asUser<Result: Sendable>(_ user: UserID, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        var settings = ["role": "orbit_app", "app.current_user_id": user.description]
        settings["app.client_address"] = Self.clientAddress
        Self.clientCreate?.add(to: &settings)
        let result: Result
        if let precondition = Self.writePrecondition {
            result = try await transaction(settings, isolation: .repeatableRead) { connection in
                try await precondition.check(as: user, runner: self, on: connection)
                return try await body(connection)
            }
        } else {
            result = try await transaction(settings, body)
        }
        await rememberWrite(of: user)
        return result
    }

    /// Runs `body` as a read of `user`'s in one snapshot (REPEATABLE READ, read only): every
    /// statement sees the database as the first one did, so what it reads fits together (the
    /// change feed: whether the user is a member, and what they may see, as of one moment).
    package func asUserInOneSnapshot<Result: Sendable>(_ user: UserID, _ body: (PostgresConnection) async throws -> Result) async throws
        -> Result
    {
        var settings = ["role": "orbit_app", "app.current_user_id": user.description]
        settings["app.client_address"] = Self.clientAddress
        return try await mappingErrors {
            try await retryingTransientFailures {
                try await pool.withTransaction(TransactionOptions(isolation: .repeatableRead, readOnly: true, localSettings: settings), body)
            }
        }
    }

    /// `asUserInOneSnapshot` for a user; for a signed-in child, the same read as the child
    /// (row-level security as `asChild` sets it).
    package func inOneSnapshot<Result: Sendable>(as principal: Principal, _ body: (PostgresConnection) async throws -> Result) async throws
        -> Result
    {
        let session: ChildSession
        switch principal {
        case .user(let user): return try await asUserInOneSnapshot(user, body)
        case .child(let child): session = child
        }
        var settings = Self.childSettings(session)
        settings["app.client_address"] = Self.clientAddress
        return try await mappingErrors {
            try await retryingTransientFailures {
                try await pool.withTransaction(TransactionOptions(isolation: .repeatableRead, readOnly: true, localSettings: settings), body)
            }
        }
    }

    static func childSettings(_ session: ChildSession) -> [String: String] {
        ["role": "orbit_app", "app.current_family_member_id": session.child.description, "app.current_child_device_id": session.device.description]
    }

    /// Runs `body` as a signed-in child's request (docs/chores.md, docs/security.md): as
    /// `orbit_app` with `app.current_family_member_id` and `app.current_child_device_id` and no
    /// user, so row-level security shows the child their own chores, completions, redemptions and
    /// points and the rewards of the one community their device was paired for, and nothing else
    /// (nothing at all once the device is revoked).
    package func asChild<Result: Sendable>(_ session: ChildSession, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        var settings = Self.childSettings(session)
        settings["app.client_address"] = Self.clientAddress
        Self.clientCreate?.add(to: &settings)
        return try await transaction(settings, body)
    }

    /// Runs `body` as `orbit_app` on behalf of nobody (a sign-in step before there is a user or
    /// a child): row-level security shows nothing; only functions granted for it do anything.
    package func asNobody<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        var settings = ["role": "orbit_app"]
        settings["app.client_address"] = Self.clientAddress
        return try await transaction(settings, body)
    }

    /// `asUser` or `asChild`.
    package func run<Result: Sendable>(as principal: Principal, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        switch principal {
        case .user(let user): try await asUser(user, body)
        case .child(let session): try await asChild(session, body)
        }
    }

    /// Runs `body` as an operator (`orbit_admin`, which bypasses row-level security); `user`,
    /// when given, is recorded as the acting user.
    package func asOperator<Result: Sendable>(_ user: UserID? = nil, _ body: (PostgresConnection) async throws -> Result) async throws
        -> Result
    {
        var settings = ["role": "orbit_admin"]
        settings["app.current_user_id"] = user?.description
        settings["app.client_address"] = Self.clientAddress
        return try await transaction(settings, body)
    }

    /// `asUserReading` (a read that may come from a replica) when there is an acting user, an
    /// operator request otherwise (reads that the CLI offers both ways).
    func asUserReadingOrOperator<Result: Sendable>(_ user: UserID?, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        if let user { return try await asUserReading(user, body) }
        return try await asOperator(nil, body)
    }

    private func transaction<Result: Sendable>(
        _ settings: [String: String], isolation: TransactionOptions.IsolationLevel? = nil, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await mappingErrors {
            try await retryingTransientFailures {
                try await pool.withTransaction(TransactionOptions(isolation: isolation, localSettings: settings), body)
            }
        }
    }

    /// Runs a whole transaction again when PostgreSQL aborted it for a reason that a retry cures
    /// (`isRetryable`), up to `attempts` times with a short random pause. Safe for
    /// every service operation: each is one transaction whose body only talks to the database
    /// (an upload writes its file to the same new path again), so an aborted attempt leaves
    /// nothing behind.
    func retryingTransientFailures<Result>(attempts: Int = 4, _ transaction: () async throws -> Result) async throws -> Result {
        var attempt = 1
        while true {
            do {
                return try await transaction()
            } catch let error as PostgresError where Self.isRetryable(error) && attempt < attempts {
                attempt += 1
                try await Task.sleep(for: .milliseconds(Int.random(in: 1...(10 << attempt))))
            }
        }
    }

    /// A serialization failure or a deadlock (40001, 40P01), or a prepared statement that was
    /// not on the server connection behind a transaction-mode pooler (26000, 42P05: the client
    /// has switched to unnamed statements by then, so the retry goes through). Also a row that
    /// one statement found and the next did not (`noRow`): at READ COMMITTED each statement sees
    /// the commits made before it, so a row deleted, or a community left or deleted, between a
    /// service's checks and its write leaves the write's `single()` without a row. The run again
    /// starts with the checks, which now see that change and answer it (404, 403); a `noRow`
    /// that persists through every attempt is a bug, and reaches the API as a 500.
    static func isRetryable(_ error: PostgresError) -> Bool {
        error.isSerializationFailure || error.isDeadlock || error.sqlState == "26000" || error.sqlState == "42P05" || error.code == .noRow
    }

    /// Turns the database's refusals into domain errors; the database is the last word on the
    /// rules it holds (row-level security, constraints).
    func mappingErrors<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as PostgresError where error.code == .poolTimeout {
            // Every pooled connection stayed busy for the pool's whole wait: the request never
            // reached the database, so trying again is safe (503 with Retry-After, not a 500).
            throw ServiceError.unavailable("The server is busy: no database connection became free in time; try again shortly.")
        } catch let error as PostgresError where error.code == .encoding {
            // A value that cannot even be sent (a NUL in text): every text field is checked before,
            // so this is a field that was not; still the input's fault, never a 500.
            throw ServiceError(code: .invalidInput, field: nil, message: "A value of the request cannot be stored: \(error.message).")
        } catch let error as PostgresError where error.code == .server {
            switch error.sqlState {
            case "42501":
                throw ServiceError.forbidden(rule: "the database refused it (\(error.message))")
            case "23514" where error.constraint == "points_accounts_balance_not_negative":
                throw ServiceError.conflict("Not enough points for that.")
            case "23505" where error.constraint == "chore_completions_one_per_occurrence":
                throw ServiceError.conflict("That chore is already done for this occurrence.")
            case "23514" where error.constraint == "reward_redemptions_in_stock":
                throw ServiceError.conflict("That reward is out of stock.")
            case "23514" where error.constraint == "reward_redemptions_available":
                throw ServiceError.conflict("That reward is not available.")
            case "23514" where error.constraint == "reward_redemptions_for_family":
                throw ServiceError.conflict("That reward is for another family's children.")
            case "23514" where error.constraint == "reward_redemptions_live_reward":
                throw ServiceError.conflict("That reward is archived.")
            case "23514" where error.constraint == "chore_completions_live_chore":
                throw ServiceError.conflict("That chore is archived.")
            case "23514" where error.constraint == "chore_completions_by_assignee":
                throw ServiceError.conflict(field: "by", reason: "is not assigned this chore")
            case "23514" where error.constraint == "chore_completions_occurrence":
                throw ServiceError.conflict(field: "occurrence", reason: "is not an occurrence of this chore")
            case "23514" where error.constraint == "chores_holder_in_community":
                throw ServiceError.conflict("Chores and points are for the community's active members and their family members.")
            case "23514" where error.constraint == "chore_completions_reviewed_once" || error.constraint == "reward_redemptions_resolved_once":
                throw ServiceError.conflict("That was already decided (\(error.message)).")
            case "23505" where error.constraint == "community_keys_one_per_member_and_version":
                throw ServiceError.conflict(field: "key_version", reason: "was recorded meanwhile by another admin: read the keys again")
            case "23505" where error.constraint == "expense_categories_name_unique":
                throw ServiceError.conflict(field: "name", reason: "is the name of another category here")
            case "23505" where RequestRunner.clientCreate != nil && (error.constraint?.hasSuffix("_pkey") ?? false):
                // A client-generated id (`ClientCreate`) that another entity has, or another create
                // took first.
                throw ServiceError.conflict(field: "id", reason: "is the id of another entity")
            case "23505":
                throw ServiceError.conflict("That already exists (\(error.constraint ?? "unique constraint")).")
            case "23514" where error.constraint == "events_ends_after_start":
                // A request with both times is checked before (400); reaching the table means one
                // of them is the stored one: the event's state refuses it.
                throw ServiceError.conflict(field: "ends_at", reason: "must not be before the event's start")
            case "23503" where error.constraint == "transactions_payer_member" || error.constraint == "recurring_charges_paid_by_fkey":
                // A well-formed id of someone who is not a member: the state refuses it (409).
                throw ServiceError.conflict(field: "paid_by", reason: "must be a member of the community")
            case "23503" where error.constraint == "transactions_category_fkey":
                // A category id that is not one of the community's own.
                throw ServiceError.notFound("Category")
            case "23514" where error.constraint == "community_archived":
                throw ServiceError.conflict("This community is archived: it is read-only until an admin unarchives it.")
            case "23514" where error.constraint == "chore_completions_photo_required":
                throw ServiceError.conflict(field: "photo_media_id", reason: "is required: this chore is marked done with a photo")
            case "23514" where error.constraint == "chore_completions_photo_media":
                // A well-formed id that names no image of this community.
                throw ServiceError.notFound("Photo image")
            case "23514" where error.constraint == "family_members_avatar_media":
                throw ServiceError.conflict(field: "media_id", reason: "is not an image one of the child's guardians (or the child) uploaded")
            case "23514" where error.constraint == "family_guardians_of_record":
                throw ServiceError.conflict("The guardian of record leaves once another guardian is the guardian of record: make them it first.")
            case "23514" where error.constraint == "family_guardians_last":
                throw ServiceError.conflict("The last guardian cannot leave: remove the family member instead.")
            case "23514" where error.constraint == "family_members_guardian_of_record":
                throw ServiceError.conflict(field: "user_id", reason: "is not one of the family member's guardians")
            case "23514" where error.constraint == "family_members_other_guardians":
                throw ServiceError.conflict("The family member has other guardians: they leave first, then the family member can be removed.")
            case "23514" where error.constraint == "family_guardians_contact":
                throw ServiceError.notFound("User (someone you share a community with)")
            case "23514" where error.constraint == "transactions_receipt_media":
                // A well-formed id that names no image of this community.
                throw ServiceError.notFound("Receipt image")
            case "23514" where error.constraint == "transactions_category_archived":
                throw ServiceError.conflict(field: "category_id", reason: "is archived: unarchive it, or choose another category")
            case "23514" where error.constraint?.hasPrefix("e2e_") == true:
                throw Self.encryptionError(error)
            case "23514" where error.constraint == "members_last_admin":
                throw ServiceError.conflict("A community needs at least one admin: make another member an admin first.")
            case "23514", "23503", "23502", "23001", "22001":
                throw ServiceError(code: .invalidInput, field: error.column, message: "The database refused the change: \(error.message).")
            default:
                throw Self.domainError(for: error) ?? error
            }
        }
    }

    /// The refusals of sql/230_encryption.sql (docs/e2e.md): content that does not fit the
    /// community's end-to-end encryption is 409, naming the field to change.
    static func encryptionError(_ error: PostgresError) -> ServiceError {
        switch error.constraint {
        case "e2e_ciphertext_required":
            return .conflict(
                field: "content_encrypted", reason: "is required: end-to-end encryption is on in this community, and plaintext is refused")
        case "e2e_off":
            return .conflict(field: "content_encrypted", reason: "is refused: end-to-end encryption is off in this community")
        case "e2e_no_polls":
            return .conflict(field: "poll_data", reason: "cannot be end-to-end encrypted (the server counts the votes), so polls are refused here")
        case "e2e_no_key":
            return .conflict(
                field: "encryption_version", reason: "has no key yet: an admin records the community's first key (POST /communities/{id}/keys)")
        case "e2e_stays_on":
            return .conflict(field: "settings.endToEndEncryption", reason: "cannot be turned off once on")
        default:
            return .conflict(field: "encryption_version", reason: "is not the community's current key: \(error.firstLine)")
        }
    }

    /// Every other class of SQLSTATE a service can meet, as a domain error (issue 37, item 10):
    /// nil only for what is a bug of ours (a statement the server does not understand, 42xxx
    /// but 42501, or an internal error, XX000), which the API answers 500 and logs.
    package static func domainError(for error: PostgresError) -> ServiceError? {
        guard let state = error.sqlState else { return nil }
        let message = error.firstLine.hasSuffix(".") ? String(error.firstLine.dropLast()) : error.firstLine
        switch state.prefix(2) {
        case "22", "23":
            // A value out of range (22003: an amount or a conversion past its bound), malformed
            // (22P02, 22007, 22008) or refused by a rule: the input's fault.
            // A number out of range without a column is an amount's or a count's computation.
            let field = error.column ?? (state == "22003" ? "amount" : nil)
            return ServiceError(code: .invalidInput, field: field, message: "\(message.prefix(1).uppercased() + message.dropFirst()).")
        case "54":
            return ServiceError(code: .invalidInput, field: error.column, message: "The request is too large for the database: \(message).")
        case "P0":
            return .conflict("\(message.prefix(1).uppercased() + message.dropFirst()).")
        case "08", "25", "40", "53", "55", "57", "58":
            return .unavailable("The database could not do it now (\(message)); try again shortly.")
        default:
            return nil
        }
    }

    /// The configured media storage, or a clear refusal when this server has none.
    func requireStorage() throws -> any MediaStorage {
        guard let storage else { throw ServiceError.conflict("Media storage is not configured on this server.") }
        return storage
    }
}
