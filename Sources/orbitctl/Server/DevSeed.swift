import ArgumentParser
import Foundation
import OrbitCore
import OrbitPostgres
import OrbitScaleData

/// `orbitctl dev seed`: the deterministic scale data set (`ScaleDataSet`) in the dev database.
struct DevSeed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed",
        abstract: "Load a large deterministic data set (10,000 communities, 1M posts, 5M reactions, 1M transactions by default).",
        discussion: """
            The same --seed, sizes and --as-of give the same rows, ids included. Posts are skewed towards the first
            communities (community 0 is the busiest); every user belongs to about two communities.
            Loads in one transaction with triggers off (it needs a superuser, as `orbitctl dev` clusters give), then
            refreshes the balances snapshot, runs VACUUM ANALYZE and checks every invariant the triggers keep
            (counts, split sums, membership, announcements by admins, balances against a recount of the ledger). Uses the running `orbitctl dev` cluster
            unless --database-url or DATABASE_URL names another database. Try small first:
              orbitctl dev seed --communities 100 --posts 10000 --reactions 50000 --transactions 10000
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    @Option(help: "Seed of the generator; different seeds can be loaded side by side.") var seed = 1
    @Option(help: "Communities.") var communities = 10_000
    @Option(help: "Members per community.") var members = 20
    @Option(help: "Posts, over all communities.") var posts = 1_000_000
    @Option(help: "Reactions, over all posts (at most one per member and post).") var reactions = 5_000_000
    @Option(help: "Comments, over all posts.") var comments = 500_000
    @Option(help: "Expenses, over all communities (2 to 4 splits each).") var transactions = 1_000_000
    @Option(help: "Events per community (the first is a weekly series).") var events = 10
    @Option(help: "RSVPs per one-off event.") var rsvps = 3
    @Option(help: "Dues per community (about two thirds of the members have paid).") var dues = 2
    @Option(help: "The day the data treats as today, YYYY-MM-DD (default: today, UTC).") var asOf: String?

    func validate() throws {
        _ = try dataSet()
    }

    func dataSet() throws -> ScaleDataSet {
        var day = CivilDate(dayNumber: Int((Date().timeIntervalSince1970 / 86_400).rounded(.down)))
        if let asOf {
            guard let parsed = LocalDateTime(parsing: "\(asOf)T00:00") else {
                throw ValidationError("--as-of must be a date, YYYY-MM-DD.")
            }
            day = parsed.date
        }
        let set = ScaleDataSet(
            seed: seed, communities: communities, members: members, posts: posts, reactions: reactions, comments: comments,
            transactions: transactions, eventsPerCommunity: events, rsvpsPerEvent: rsvps, duesPerCommunity: dues,
            asOf: Date(timeIntervalSince1970: TimeInterval(day.dayNumber) * 86_400)
        )
        do {
            try set.validate()
        } catch let error as ServiceError {
            throw ValidationError("--\(error.message)")
        }
        return set
    }

    func run() async throws {
        output.bootstrapLogging()
        let set = try dataSet()
        let configuration = try database.configuration()
        print("Loading seed \(set.seed) as of \(CivilDate(dayNumber: Int(set.asOf.timeIntervalSince1970 / 86_400))) into \(configuration) …")
        let start = ContinuousClock.now
        let counts = try await set.install(into: configuration) { line in
            print("  \(line)")
            fflush(nil)
        }
        let verified = try await PostgresConnection.withConnection(configuration) { try await ScaleDataSet.verify(on: $0) }
        print("Loaded \(counts) in \(ScaleDataSet.seconds(start.duration(to: .now))).")
        for (invariant, violations) in verified {
            print("  \(violations == 0 ? "ok" : "BROKEN (\(violations) rows)")  \(invariant)")
        }
        if verified.contains(where: { $0.violations > 0 }) {
            throw CommandFailure("The loaded data breaks an invariant (above).")
        }
    }

}
