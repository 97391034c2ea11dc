import ArgumentParser

/// `orbit-bench`: reproducible performance measurements. Run with `-c release`.
@main
struct OrbitBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "orbit-bench",
        abstract: "OrbitCove benchmarks (build with -c release).",
        subcommands: [
            ClientBenchmark.self, SchemaBenchmark.self, EventsBenchmark.self, FeedBenchmark.self, MoneyBenchmark.self, HTTPBenchmark.self,
            FaultBenchmark.self, ScaleBenchmark.self, ReplicaBenchmark.self, SyncBenchmark.self, LiveBenchmark.self, ChatBenchmark.self,
            SearchBenchmark.self, SummaryBenchmark.self,
        ]
    )
}
