import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    func addSyncRoutes(to router: RouterGroup<APIContext>) {
        // The change feed (docs/sync.md): the current state, then every change, resumable; a
        // child's device syncs its chores, points and rewards with its own token.
        router.get("communities/:community_id/changes") { request, context in
            let limit = try request.queryInt("limit", default: 500, range: 1...1000)
            return JSON(
                try await services.sync.changes(
                    of: try context.id("community_id"), cursor: request.query("cursor"), limit: limit, as: try context.requirePrincipal()
                ).taggingUpserts())
        }
        // The user's own feed: their account, devices, family members and notifications of no
        // community (what belongs to no community's feed).
        router.get("users/me/changes") { request, context in
            let limit = try request.queryInt("limit", default: 500, range: 1...1000)
            return JSON(
                try await services.sync.ownChanges(cursor: request.query("cursor"), limit: limit, as: try context.requireUser()).taggingUpserts())
        }
        // Live updates are a WebSocket (`liveUpgrade`); a plain GET lands here.
        router.get("live") { _, context -> Response in
            _ = try context.requireUser()
            throw APIProblem(
                "upgrade-required", title: "Upgrade required", status: .init(code: 426, reasonPhrase: "Upgrade Required"),
                detail: "GET /live is a WebSocket: send Connection: Upgrade and Upgrade: websocket with the access token.")
        }
    }
}
