import Foundation
import OrbitPostgres

/// The audit log (spec: Audit Log): admin actions are recorded in the transaction that makes
/// them, and the permission matrix's refusals of them in a transaction of their own.
extension RequestRunner {
    /// What to record when the permission matrix refuses an audit-logged admin action.
    struct RefusalAudit {
        var action: String
        var community: CommunityID
        var target: (type: String, id: UUID)?
    }

    /// A refusal of the permission matrix on its way out of `asUser(_:auditingRefusal:_:)`.
    private struct MatrixRefusal: Error {
        let error: ServiceError
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

    /// Appends to the audit log in the caller's transaction, with the client's address when
    /// the request came through the API (`app.client_address`, which `asUser` and `asOperator`
    /// set; the invite SQL function reads the same setting).
    func audit(
        _ action: String, by user: UserID, community: CommunityID?, target: (type: String, id: UUID)?,
        metadata: [String: String] = [:], on connection: PostgresConnection
    ) async throws {
        try await connection.query(auditStatement(action, by: user, community: community, target: target, metadata: metadata))
    }

    /// `audit`'s statement, to send in a pipeline; with `ifWritten`, it writes the entry only
    /// if that row exists (an earlier statement of the pipeline wrote it, unless it was refused).
    func auditStatement(
        _ action: String, by user: UserID, community: CommunityID?, target: (type: String, id: UUID)?,
        metadata: [String: String] = [:], ifWritten row: WrittenRow? = nil
    ) throws -> PostgresQuery {
        let json = try PostgresJSON(encoding: metadata)
        guard let row else {
            return """
                INSERT INTO audit_log (community_id, user_id, action, target_type, target_id, metadata, ip_address)
                VALUES (\(community), \(user), \(action), \(target?.type), \(target?.id), \(json),
                    nullif(current_setting('app.client_address', true), '')::inet)
                """
        }
        return """
            INSERT INTO audit_log (community_id, user_id, action, target_type, target_id, metadata, ip_address)
            SELECT \(community), \(user), \(action), \(target?.type), \(target?.id), \(json),
                nullif(current_setting('app.client_address', true), '')::inet
            WHERE EXISTS (SELECT FROM \(unescaped: row.table.rawValue) WHERE id = \(row.id))
            """
    }
}

/// A row that an earlier statement of a pipeline wrote, or did not because a check folded into
/// it failed: the statements that follow from it (its audit entry, its notifications) run
/// `WHERE EXISTS` that row, so a refused write leaves nothing else behind either.
struct WrittenRow {
    /// The tables such rows are in (their names are spliced into the SQL: only these).
    enum Table: String {
        case dues, duesPayments = "dues_payments", invites, events, members, communities, posts, comments
    }

    var table: Table
    var id: UUID

    init(_ table: Table, _ id: UUID) {
        self.table = table
        self.id = id
    }
}
