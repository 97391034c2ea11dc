package import Foundation
import OrbitPostgres

/// An entry of a community's audit log (spec: Audit Log).
package struct AuditEntry: Sendable, Codable, Equatable {
    package var id: AuditEntryID
    package var communityID: CommunityID?
    package var userID: UserID
    package var action: String
    package var targetType: String?
    package var targetID: UUID?
    package var metadata: String
    /// The client's IP address, for actions that came through the HTTP API.
    package var ipAddress: String?
    package var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", userID = "user_id", action, targetType = "target_type", targetID = "target_id"
        case metadata, ipAddress = "ip_address", createdAt = "created_at"
    }

    static let columns =
        "id, community_id, user_id, action, target_type, target_id, metadata::text AS metadata, host(ip_address) AS ip_address, created_at"

    init(row: PostgresRow) throws {
        (id, communityID, userID, action, targetType, targetID, metadata, ipAddress, createdAt) = try row.decode(
            (AuditEntryID, CommunityID?, UserID, String, String?, UUID?, String, String?, Date).self
        )
    }
}
