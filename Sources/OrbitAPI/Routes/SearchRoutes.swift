import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    func addSearchRoutes(to router: RouterGroup<APIContext>) {
        // A community's posts, comments, events, expenses and the reader's chat messages, best
        // match first (docs/search.md); `cursor` is the previous page's next_cursor.
        router.get("communities/:community_id/search") { request, context in
            let limit = try request.queryInt("limit", default: 20, range: 1...50)
            guard let text = request.query("q") else {
                throw APIProblem.validation(field: "q", "q (what to search for) is required.")
            }
            return JSON(
                try await services.search.search(
                    try context.id("community_id"), for: text, limit: limit, cursor: request.query("cursor"), as: try context.requireUser()))
        }
    }
}
