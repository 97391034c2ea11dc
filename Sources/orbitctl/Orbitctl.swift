import ArgumentParser

/// `orbitctl`: the OrbitCove server's command line.
@main
struct Orbitctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "orbitctl",
        abstract: "Run and administer the OrbitCove backend.",
        discussion: """
            With no database configured, `orbitctl dev` starts a local PostgreSQL cluster under ./.orbit/.
            Otherwise the database comes from --database-url, DATABASE_URL, or libpq's PG* variables.
            """,
        version: OrbitVersion.current,
        subcommands: [
            Migrate.self, Dev.self, Serve.self, UserCommand.self, CommunityCommand.self, InviteCommand.self, FamilyCommand.self, EventCommand.self,
            PostCommand.self, MediaCommand.self, ExpenseCommand.self, SettleCommand.self, BalancesCommand.self, DuesCommand.self,
            RecurringCommand.self, RatesCommand.self,
            RetentionCommand.self, JobsCommand.self, AccountCommand.self, DeviceCommand.self, NotificationsCommand.self, SyncCommand.self,
            ChatCommand.self, ChoreCommand.self, RewardCommand.self, PointsCommand.self, ExportCommand.self,
        ]
    )
}

enum OrbitVersion {
    static let current = "0.1.0"
}
