import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    func addNotificationRoutes(to router: RouterGroup<APIContext>) {
        struct NotificationList: Encodable, Sendable {
            var items: [AppNotification]
            var unreadCount: Int
            enum CodingKeys: String, CodingKey { case items, unreadCount = "unread_count" }
        }
        router.get("notifications") { request, context in
            let user = try context.requireUser()
            let limit = try request.queryInt("limit", default: 50, range: 1...200)
            let items = try await services.notifications.list(
                limit: limit, before: try request.queryID("before", as: NotificationID.self), unreadOnly: try request.queryBool("unread_only"),
                as: user
            )
            return JSON(NotificationList(items: items, unreadCount: try await services.notifications.unreadCount(as: user)))
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
