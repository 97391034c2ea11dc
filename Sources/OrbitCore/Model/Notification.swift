public import Foundation
import OrbitPostgres

public enum NotificationTag {}
public typealias NotificationID = Identifier<NotificationTag>

/// A notification (spec: Notifications); `data` is the deep link (JSON object text).
public struct AppNotification: Sendable, Codable, Equatable {
    public var id: NotificationID
    public var userID: UserID
    public var communityID: CommunityID?
    public var type: String
    public var title: String
    public var body: String
    public var data: String
    public var readAt: Date?
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, userID = "user_id", communityID = "community_id", type, title, body, data, readAt = "read_at", createdAt = "created_at"
    }

    static let columns = "id, user_id, community_id, type::text AS type, title, body, data::text AS data, read_at, created_at"

    init(row: PostgresRow) throws {
        (id, userID, communityID, type, title, body, data, readAt, createdAt) = try row.decode(
            (NotificationID, UserID, CommunityID?, String, String, String, String, Date?, Date).self
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(userID, forKey: .userID)
        try container.encode(communityID, forKey: .communityID)
        try container.encode(type, forKey: .type)
        try container.encode(title, forKey: .title)
        try container.encode(body, forKey: .body)
        try container.encode(data, forKey: .data)
        try container.encode(readAt, forKey: .readAt)
        try container.encode(createdAt, forKey: .createdAt)
    }
}

/// Sends notifications to devices. APNs comes later behind this protocol.
public protocol NotificationDelivery: Sendable {
    func deliver(_ notification: AppNotification) async throws
}

/// Delivery that only writes a line per notification (development and tests).
public struct LoggingDelivery: NotificationDelivery {
    public init() {}

    public func deliver(_ notification: AppNotification) async throws {
        print("notify \(notification.userID) [\(notification.type)] \(notification.title)")
    }
}
