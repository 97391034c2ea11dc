package import Foundation
package import OrbitCore

/// The JSON body of a push: the alert, the badge and the deep link.
///
///     {"aps": {"alert": {"title": …, "body": …}, "badge": 3, "sound": "default", "thread-id": <community>},
///      "notification_id": …, "type": "new_post", "community_id": …, "post_id": …}
///
/// The keys besides `aps` are the notification's `data` (its deep link: the community and the
/// entity), its id and type. APNs refuses a body over 4 KB; a longer body text is shortened
/// (with "…") until it fits.
package enum APNsPayload {
    /// APNs' limit for alert pushes.
    package static let maximumBytes = 4096

    package static func encode(_ push: Push) throws -> Data {
        let notification = push.notification
        var custom: [String: Any] = [:]
        if let data = notification.data.data(using: .utf8),
            let link = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        {
            custom = link
        }
        custom["aps"] = nil
        custom["notification_id"] = notification.id.description
        custom["type"] = notification.type.rawValue
        if let community = notification.communityID { custom["community_id"] = community.description }

        var body = notification.body
        while true {
            var aps: [String: Any] = [
                "alert": ["title": notification.title, "body": body],
                "badge": push.badge,
                "sound": "default",
            ]
            if let community = notification.communityID { aps["thread-id"] = community.description }
            custom["aps"] = aps
            let encoded = try JSONSerialization.data(withJSONObject: custom, options: [.sortedKeys, .withoutEscapingSlashes])
            if encoded.count <= maximumBytes || body.isEmpty { return encoded }
            // Cut what is over (in UTF-8 bytes, at a character boundary), and room for "…".
            let allowed = body.utf8.count - (encoded.count - maximumBytes) - 4
            var kept = 0
            var cut = body.startIndex
            for index in body.indices {
                let size = body[index].utf8.count
                if kept + size > allowed { break }
                kept += size
                cut = body.index(after: index)
            }
            body = cut == body.startIndex ? "" : String(body[..<cut]) + "…"
        }
    }
}
