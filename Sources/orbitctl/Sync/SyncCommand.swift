import ArgumentParser
import OrbitAPI
import OrbitCore

/// `orbitctl sync …`: the change feed, as the app pulls it.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "A community's change feed, as the app syncs it (docs/sync.md).", subcommands: [Pull.self])

    struct Pull: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "One page of a community's changes, or of the user's own (--own): without --cursor the current state first, then every change after it."
        )
        @Option(help: "Community id.") var community: CommunityID?
        @Flag(help: "The user's own feed instead: their account, devices, family members and notifications of no community.")
        var own = false
        @Option(help: "next_cursor of the previous page.") var cursor: String?
        @Option(help: "Changes per page (1 to 1000).") var limit = 500
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            guard (community == nil) == own else { throw ValidationError("Give either --community or --own.") }
        }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> ChangePage {
            let user = actor
            if let community {
                return try await services.sync.changes(of: community, cursor: cursor, limit: limit, as: user).taggingUpserts()
            }
            return try await services.sync.ownChanges(cursor: cursor, limit: limit, as: user).taggingUpserts()
        }

        func tell(_ page: ChangePage) {
            printTable(["ENTITY", "ID", "OP"], page.changes.map { [$0.entity.rawValue, "\(Identifier<SyncEntity>($0.id))", $0.op.rawValue] })
            print("\(page.hasMore ? "More now" : "Up to date"): --cursor \(page.nextCursor)")
        }
    }
}
