import ArgumentParser
import Foundation
import OrbitCore
import OrbitPostgres
import OrbitScaleData

/// The data set of `orbitctl dev seed` that `orbit-bench scale` and `orbit-bench search` measure
/// on: where it is, its sizes, and whether to load it. One set of options, one way to load and
/// check it.
struct ScaleDataOptions: ParsableArguments {
    @Option(help: "Server to use (a superuser), already seeded with --seed unless --load. Default: a throwaway local cluster.")
    var databaseURL: String?
    @Option(help: "Seed of the data set.") var seed = 1
    @Option(help: "Communities.") var communities = 10_000
    @Option(help: "Members per community.") var members = 20
    @Option(help: "Posts.") var posts = 1_000_000
    @Option(help: "Reactions.") var reactions = 5_000_000
    @Option(help: "Comments.") var comments = 500_000
    @Option(help: "Transactions.") var transactions = 1_000_000
    @Flag(help: "With --database-url: the database is already seeded; only measure.") var skipLoad = false

    /// Runs `body` on the seeded server: `--database-url`'s (loaded first unless `--skip-load`) or
    /// a throwaway cluster's, loaded. The invariants are checked first, so a measurement never
    /// runs on a broken load; they are returned for the report.
    func withSeeded(_ body: (PostgresConfiguration, _ invariants: Int) async throws -> Void) async throws {
        if let databaseURL {
            try await seeded(try PostgresConfiguration(connectionString: databaseURL), load: !skipLoad, body)
        } else {
            try await BenchmarkServer.withMigrated(databaseURL: nil) { server in
                try await seeded(server.configuration, load: true, body)
            }
        }
    }

    private func seeded(
        _ configuration: PostgresConfiguration, load: Bool, _ body: (PostgresConfiguration, _ invariants: Int) async throws -> Void
    ) async throws {
        let asOf = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 86_400).rounded(.down) * 86_400)
        let set = ScaleDataSet(
            seed: seed, communities: communities, members: members, posts: posts, reactions: reactions, comments: comments,
            transactions: transactions, asOf: asOf
        )
        try set.validate()
        if load {
            let start = ContinuousClock.now
            print(
                "Loading seed \(seed): \(communities) communities × \(members) members, \(posts) posts, \(reactions) reactions, \(comments) comments, \(transactions) expenses …"
            )
            let counts = try await set.install(into: configuration) { line in
                print("  \(line)")
                fflush(nil)
            }
            print("Loaded \(counts) in \(ScaleDataSet.seconds(start.duration(to: .now))).")
        }
        let verified = try await PostgresConnection.withConnection(configuration) { try await ScaleDataSet.verify(on: $0) }
        for (invariant, violations) in verified where violations > 0 {
            throw ValidationError("The data set breaks '\(invariant)' (\(violations) rows).")
        }
        try await body(configuration, verified.count)
    }
}
