import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl search …`
struct SearchCommand: ActingCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search a community's posts, comments, events, expenses and one's chat messages, best match first.",
        discussion: """
            Web search syntax: every word must match; "a phrase" in quotes; `or` between \
            alternatives; -word must not match. Accents and case do not matter; words are stemmed \
            by the community's `language` setting. Only what the acting user may read is found. \
            Matched words are shown between asterisks.
            """
    )

    @Argument(help: "What to search for.") var query: String
    @Option(help: "Community id.") var community: CommunityID
    @Option(help: "Results per page (1 to 50).") var limit = 20
    @Option(help: "next_cursor of the previous page.") var cursor: String?
    @OptionGroup var acting: ActingOptions
    @OptionGroup var output: JSONOption

    func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<SearchHit> {
        try await services.search.search(community, for: query, limit: limit, cursor: cursor, as: actor)
    }

    func tell(_ page: Page<SearchHit>) {
        if page.items.isEmpty { return print("Nothing found.") }
        printTable(
            ["KIND", "ID", "OPEN", "RANK", "SNIPPET"],
            page.items.map { hit in
                [
                    hit.kind.rawValue, hit.id.uuidString.lowercased(), hit.linkID.uuidString.lowercased(), String(format: "%.3f", hit.rank),
                    Self.marked(hit),
                ]
            }
        )
        if let next = page.nextCursor { print("More: --cursor \(next)") }
    }

    /// The snippet with each highlight between asterisks.
    static func marked(_ hit: SearchHit) -> String {
        var units = Array(hit.snippet.utf16)
        for highlight in hit.highlights.sorted(by: { $0.start > $1.start }) {
            let star = UInt16(UInt8(ascii: "*"))
            units.insert(star, at: highlight.start + highlight.length)
            units.insert(star, at: highlight.start)
        }
        return String(decoding: units, as: UTF16.self)
    }
}
