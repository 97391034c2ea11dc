import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OrbitCore

extension OrbitAPI {
    /// Calendar feeds (docs/calendar-feeds.md): the feed a phone's calendar subscribes to (on
    /// `open`, the routes without sign-in), and its owner's address, rotation and revocation (on
    /// `signedIn`).
    func addCalendarFeedRoutes(open router: RouterGroup<APIContext>, signedIn: RouterGroup<APIContext>) {
        // The feed: no Authorization (a calendar app sends none), the token in the path is the
        // credential. An unknown or revoked token is 404, like any address that is not there.
        router.get("calendar/{token}.ics") { request, context in
            let token = context.parameters.get("token") ?? ""
            let text = try await services.calendarFeeds.feed(token, community: try request.queryID("community"))
            let bytes = Array(text.utf8)
            let etag = EntityTags.tag(of: bytes)
            // Calendar apps poll: a feed that has not changed is 304, without its body.
            var headers: HTTPFields = [.eTag: etag, .cacheControl: "private, no-cache"]
            if let header = request.headers[EntityTags.ifNoneMatch],
                (EntityTags.list(header) ?? []).contains(where: { $0 == "*" || $0 == etag || $0 == "W/" + etag })
            {
                return Response(status: .notModified, headers: headers)
            }
            headers[.contentType] = "text/calendar; charset=utf-8"
            headers[.contentDisposition] = "inline; filename=\"orbitcove.ics\""
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }

        // The owner's address (made the first time it is asked for), for all their communities or
        // for one (`community`).
        let me = signedIn.group("users/me/calendar")
        me.get { request, context in
            let user = try context.requireUser()
            let community: CommunityID? = try request.queryID("community")
            if let community { _ = try await services.communities.get(community, as: user) }
            let token = try await services.calendarFeeds.token(as: user)
            return JSON(feedLink(token, community: community, request: request))
        }
        // A new address: the old one is 404 from now on.
        me.post("rotate") { request, context in
            let token = try await services.calendarFeeds.rotate(as: try context.requireUser())
            return JSON(feedLink(token, community: nil, request: request))
        }
        // No address at all until one is asked for again.
        me.delete { _, context in
            try await services.calendarFeeds.revoke(as: try context.requireUser())
            return NoContent()
        }
    }

    /// The link on this server: `--public-url`, else the address the request came to.
    private func feedLink(_ token: CalendarFeedToken, community: CommunityID?, request: Request) -> CalendarFeedLink {
        let base = configuration.publicURL ?? "http://" + (request.head.authority ?? "localhost")
        return CalendarFeedLink(token: token.token, createdAt: token.createdAt, publicURL: base, community: community)
    }
}
