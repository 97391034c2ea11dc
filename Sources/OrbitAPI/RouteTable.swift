import Hummingbird
import Synchronization

/// The router's routes as path templates, to tell "no such path" (404) from "no such method on
/// this path" (405 with `Allow`). Filled in once the router is built.
final class RouteTable: Sendable {
    private let routes = Mutex<[(segments: [Substring], method: String)]>([])

    func load(_ descriptions: [Router<APIContext>.RouteDescription]) {
        routes.withLock { routes in
            routes = descriptions.map { (Self.segments(of: $0.path.description), $0.method.rawValue) }
        }
    }

    /// The methods served on `path`, sorted; empty when no route matches it.
    func methods(for path: String) -> [String] {
        let requested = Self.segments(of: path)
        return routes.withLock { routes in
            routes.filter { route in
                route.segments.count == requested.count
                    && zip(route.segments, requested).allSatisfy { template, segment in template.hasPrefix("{") || template == segment }
            }.map(\.method)
        }.sorted()
    }

    private static func segments(of path: String) -> [Substring] {
        path.split(separator: "?", maxSplits: 1).first.map { $0.split(separator: "/") } ?? []
    }
}
