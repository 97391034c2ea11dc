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

    /// The methods served on `path`, sorted; empty when no route matches it. Where templates
    /// overlap (`members/me` and `members/{user_id}`), the router takes the one with a literal
    /// segment where the other has a parameter, first from the left, and so does this.
    func methods(for path: String) -> [String] {
        let requested = Self.segments(of: path)
        let matches = routes.withLock { routes in
            routes.filter { route in
                route.segments.count == requested.count
                    && zip(route.segments, requested).allSatisfy { template, segment in template.hasPrefix("{") || template == segment }
            }
        }
        // Literal segments as 1s: the most specific template has the greatest sequence.
        let specificity = { (segments: [Substring]) in segments.map { $0.hasPrefix("{") ? 0 : 1 } }
        guard let best = matches.map({ specificity($0.segments) }).max(by: { $0.lexicographicallyPrecedes($1) }) else { return [] }
        return matches.filter { specificity($0.segments) == best }.map(\.method).sorted()
    }

    private static func segments(of path: String) -> [Substring] {
        path.split(separator: "?", maxSplits: 1).first.map { $0.split(separator: "/") } ?? []
    }
}
