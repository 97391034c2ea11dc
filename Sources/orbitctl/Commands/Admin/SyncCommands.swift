import ArgumentParser
import OrbitAPI
import OrbitCore

/// `orbitctl sync …`: the change feed, as the app pulls it.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "A community's change feed, as the app syncs it (docs/sync.md).", subcommands: [Pull.self])

    struct Pull: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "One page of a community's changes: without --cursor the current state first, then every change after it.")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "next_cursor of the previous page.") var cursor: String?
        @Option(help: "Changes per page (1 to 1000).") var limit = 500
        @OptionGroup var actor: ActorOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let page = try await withServices(database) { services in
                try await services.sync.changes(of: community, cursor: cursor, limit: limit, as: try await services.users.resolve(actor.actor))
                    .taggingUpserts()
            }
            if output.json { return try printJSON(page) }
            printTable(["ENTITY", "ID", "OP"], page.changes.map { [$0.entity.rawValue, "\(Identifier<SyncEntity>($0.id))", $0.op.rawValue] })
            print("\(page.hasMore ? "More now" : "Up to date"): --cursor \(page.nextCursor)")
        }
    }
}
