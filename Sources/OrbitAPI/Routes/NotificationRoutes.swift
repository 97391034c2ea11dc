import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    func addNotificationRoutes(to router: RouterGroup<APIContext>) {
        struct NotificationList: Encodable, Sendable {
            var page: Page<AppNotification>
            var unreadCount: Int
            enum CodingKeys: String, CodingKey { case items, nextCursor = "next_cursor", unreadCount = "unread_count" }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(page.items, forKey: .items)
                try container.encode(page.nextCursor, forKey: .nextCursor)
                try container.encode(unreadCount, forKey: .unreadCount)
            }
        }
        router.get("notifications") { request, context in
            let user = try context.requireUser()
            let limit = try request.queryInt("limit", default: 50, range: 1...200)
            let page = try await services.notifications.list(
                limit: limit, cursor: request.query("cursor"), unreadOnly: try request.queryBool("unread_only"), as: user)
            return JSON(NotificationList(page: page, unreadCount: try await services.notifications.unreadCount(as: user)))
        }
        struct MarkRead: Decodable {
            /// One notification; all of the user's when absent.
            var id: NotificationID?
        }
        struct Marked: Encodable, Sendable {
            var marked: Int
        }
        router.post("notifications/read") { request, context in
            let body = try await request.decodeJSON(MarkRead.self, context: context)
            return JSON(Marked(marked: try await services.notifications.markRead(body.id, as: try context.requireUser())))
        }
    }
}
