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

        // The owner's address, made the first time it is asked for (for all their communities or
        // for one, `community`): shown then, and after that only its date (the server keeps the
        // token's digest, not the token).
        let me = signedIn.group("users/me/calendar")
        me.get { request, context in
            let user = try context.requireUser()
            let community: CommunityID? = try request.queryID("community")
            if let community { _ = try await services.communities.get(community, as: user) }
            // Checked first: a token made without an address to show it in would be lost.
            let base = try linkBase(request)
            let token = try await services.calendarFeeds.token(as: user)
            return JSON(feedLink(token, community: community, base: base))
        }
        // A new address: the old one is 404 from now on.
        me.post("rotate") { request, context in
            let base = try linkBase(request)
            let token = try await services.calendarFeeds.rotate(as: try context.requireUser())
            return JSON(feedLink(token, community: nil, base: base))
        }
        // No address at all until one is asked for again.
        me.delete { _, context in
            try await services.calendarFeeds.revoke(as: try context.requireUser())
            return NoContent()
        }
    }

    /// Where links point: `--public-url`. Only `orbitctl dev` (dev auth, on localhost) builds
    /// them from the address the request came to: elsewhere a forged `Host` header would make
    /// a link to somebody else's server, over plain http.
    private func linkBase(_ request: Request) throws -> String {
        if let url = configuration.publicURL { return url }
        guard configuration.devAuth else {
            throw APIProblem.notConfigured("the server's public address for calendar links (--public-url or ORBIT_PUBLIC_URL)")
        }
        return "http://" + (request.head.authority ?? "localhost")
    }

    private func feedLink(_ token: CalendarFeedToken, community: CommunityID?, base: String) -> CalendarFeedLink {
        guard let secret = token.token else { return CalendarFeedLink(shownBefore: token.createdAt, community: community) }
        return CalendarFeedLink(token: secret, createdAt: token.createdAt, publicURL: base, community: community)
    }
}
