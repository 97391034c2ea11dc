public import Foundation
import Logging
public import OrbitPostgres

/// The core service layer: every operation of the product, used by `orbitctl` and the HTTP
/// API alike (DESIGN.md, "Shape").
///
/// An operation on behalf of a user is one transaction as `orbit_app` with
/// `app.current_user_id` set, so row-level security applies to it exactly as to an app request;
/// the permission matrix is checked here first, to fail with a `forbidden` error that names the
/// rule. Operator operations (listing everything, restoring a deleted community) run as
/// `orbit_admin` and still name the acting user for the audit log.
public struct OrbitServices: Sendable {
    public let pool: ConnectionPool
    /// The service's clock (time-limited rules such as the 24-hour edit window); tests set it.
    public var now: @Sendable () -> Date
    /// Where uploads are kept; media operations need it.
    public var storage: (any MediaStorage)?

    public init(pool: ConnectionPool, storage: (any MediaStorage)? = nil, now: @escaping @Sendable () -> Date = { Date() }) {
        self.pool = pool
        self.storage = storage
        self.now = now
    }

    /// Runs `body` as one request of `user`.
    func asUser<Result: Sendable>(_ user: UserID, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        var settings = ["role": "orbit_app", "app.current_user_id": user.description]
        settings["app.client_address"] = Self.clientAddress
        return try await mappingErrors {
            try await retryingTransientFailures {
                try await pool.withTransaction(TransactionOptions(localSettings: settings), body)
            }
        }
    }

    /// Runs `body` as an operator (`orbit_admin`, which bypasses row-level security); `user`,
    /// when given, is recorded as the acting user.
    func asOperator<Result: Sendable>(_ user: UserID? = nil, _ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        var settings = ["role": "orbit_admin"]
        settings["app.current_user_id"] = user?.description
        settings["app.client_address"] = Self.clientAddress
        return try await mappingErrors {
            try await retryingTransientFailures {
                try await pool.withTransaction(TransactionOptions(localSettings: settings), body)
            }
        }
    }

    /// Runs a whole transaction again when PostgreSQL aborted it for a serialization failure or
    /// a deadlock (40001, 40P01), up to `attempts` times with a short random pause. Safe for
    /// every service operation: each is one transaction whose body only talks to the database
    /// (an upload writes its file to the same new path again), so an aborted attempt leaves
    /// nothing behind.
    func retryingTransientFailures<Result>(attempts: Int = 4, _ transaction: () async throws -> Result) async throws -> Result {
        var attempt = 1
        while true {
            do {
                return try await transaction()
            } catch let error as PostgresError where (error.isSerializationFailure || error.isDeadlock) && attempt < attempts {
                attempt += 1
                try await Task.sleep(for: .milliseconds(Int.random(in: 1...(10 << attempt))))
            }
        }
    }

    /// Turns the database's refusals into domain errors; the database is the last word on the
    /// rules it holds (row-level security, constraints).
    private func mappingErrors<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as PostgresError where error.code == .server {
            switch error.sqlState {
            case "42501":
                throw ServiceError.forbidden(rule: "the database refused it (\(error.message))")
            case "23505":
                throw ServiceError.conflict("That already exists (\(error.constraint ?? "unique constraint")).")
            case "23514" where error.constraint == "members_last_admin":
                throw ServiceError.conflict("A community needs at least one admin: make another member an admin first.")
            case "23514", "23503", "23502", "23001", "22001":
                throw ServiceError(code: .invalidInput, field: error.column, message: "The database refused the change: \(error.message).")
            default:
                throw error
            }
        }
    }
}

extension OrbitServices {
    /// The acting user's active membership of `community`, or nil (RLS hides other communities).
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

    /// An audit-logged admin action whose refusal is logged too (issue 11).
    /// A refusal of the permission matrix on its way out of `asUser(_:auditingRefusal:_:)`.
    private struct MatrixRefusal: Error {
        let error: ServiceError
    }

    struct RefusalAudit {
        var action: String
        var community: CommunityID
        var target: (type: String, id: UUID)?
    }

    /// `asUser`, for an audit-logged admin action: when the permission matrix refuses it,
    /// records `<action>.refused` with the rule and rethrows. The refused transaction rolls
    /// back, so the record is written in a transaction of its own, as the actor: the
    /// community's admins see who tried what. Only the service's own refusals count (the
    /// matrix, thrown by `body`), not a database refusal mapped to `forbidden`; and refusals
    /// that say "not found" (a community the actor is not in) are not recorded: that
    /// community's log is not the actor's to write to. If the record cannot be written, the
    /// refusal still reaches the caller and the failure is logged.
    func asUser<Result: Sendable>(
        _ user: UserID, auditingRefusal refusal: RefusalAudit, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        do {
            return try await asUser(user) { connection in
                do {
                    return try await body(connection)
                } catch let error as ServiceError where error.code == .forbidden {
                    throw MatrixRefusal(error: error)
                }
            }
        } catch let matrix as MatrixRefusal {
            do {
                try await asUser(user) { connection in
                    try await audit(
                        "\(refusal.action).refused", by: user, community: refusal.community, target: refusal.target,
                        metadata: ["rule": matrix.error.rule ?? ""], on: connection
                    )
                }
            } catch {
                Self.logger.error(
                    "could not record a refused action in the audit log",
                    metadata: ["action": "\(refusal.action).refused", "user_id": "\(user)", "error": "\(error)"]
                )
            }
            throw matrix.error
        }
    }

    static let logger = Logger(label: "orbit.services")

    /// The IP address of the client the current request came from, for the audit log's
    /// `ip_address`. The HTTP API binds it around each request; the CLI leaves it nil.
    @TaskLocal public static var clientAddress: String?

    /// Appends to the audit log in the caller's transaction, with the client's address when
    /// the request came through the API (`app.client_address`, which `asUser` and `asOperator`
    /// set; the invite SQL function reads the same setting).
    func audit(
        _ action: String, by user: UserID, community: CommunityID?, target: (type: String, id: UUID)?,
        metadata: [String: String] = [:], on connection: PostgresConnection
    ) async throws {
        let json = try PostgresJSON(encoding: metadata)
        try await connection.query(
            """
            INSERT INTO audit_log (community_id, user_id, action, target_type, target_id, metadata, ip_address)
            VALUES (\(community), \(user), \(action), \(target?.type), \(target?.id), \(json), nullif(current_setting('app.client_address', true), '')::inet)
            """
        )
    }
}

/// Validation of text fields against the spec's column limits.
enum Validate {
    /// Trims surrounding whitespace; refuses empty text, text over `limit` characters, and
    /// control characters (newlines included unless `multiline`).
    static func text(_ value: String, field: String, limit: Int, multiline: Bool = false) throws -> String {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw ServiceError.invalidInput(field: field, reason: "must not be empty") }
        guard trimmed.count <= limit else {
            throw ServiceError.invalidInput(field: field, reason: "must be at most \(limit) characters")
        }
        let allowed: (Unicode.Scalar) -> Bool = { scalar in
            if multiline && (scalar == "\n" || scalar == "\t") { return true }
            return scalar.properties.generalCategory != .control
        }
        guard trimmed.unicodeScalars.allSatisfy(allowed) else {
            throw ServiceError.invalidInput(field: field, reason: "must not contain control characters")
        }
        return trimmed
    }

    static func email(_ value: String) throws -> String {
        let email = try text(value, field: "email", limit: 255)
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
            !email.contains(where: \.isWhitespace)
        else {
            throw ServiceError.invalidInput(field: "email", reason: "is not an email address")
        }
        return email
    }

    static func url(_ value: String?, field: String) throws -> String? {
        guard let value else { return nil }
        let url = try text(value, field: field, limit: 500)
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "https" || scheme == "http",
            parsed.host != nil
        else {
            throw ServiceError.invalidInput(field: field, reason: "must be an http(s) URL")
        }
        return url
    }
}
