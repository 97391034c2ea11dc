import ArgumentParser
import OrbitCore
import OrbitPostgres

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
            Migrate.self, Dev.self, Serve.self, UserCommand.self, CommunityCommand.self, InviteCommand.self, GuestCommand.self, CategoryCommand.self,
            NudgeCommand.self, HandlesCommand.self, ProvidersCommand.self,
            FamilyCommand.self,
            EventCommand.self,
            CalendarCommand.self,
            PostCommand.self, MediaCommand.self, ExpenseCommand.self, SettleCommand.self, BalancesCommand.self, DuesCommand.self,
            RecurringCommand.self, RatesCommand.self,
            RetentionCommand.self, JobsCommand.self, AccountCommand.self, DeviceCommand.self, NotificationsCommand.self, SyncCommand.self,
            ChatCommand.self, ChoreCommand.self, RewardCommand.self, PointsCommand.self, ExportCommand.self, SearchCommand.self, KeysCommand.self,
            WebhooksCommand.self,
        ]
    )

    /// Runs the command; a database error no service turned into a domain error still ends as
    /// one sentence (issue 37, item 10): never `PostgresError(…)` on a user's screen.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as PostgresError {
            exit(withError: CommandFailure(Self.sentence(for: error)))
        } catch {
            exit(withError: error)
        }
    }

    /// One sentence for a database error: the domain's, when it is one; else the server's first
    /// line and its SQLSTATE (for support; never a bound value).
    static func sentence(for error: PostgresError) -> String {
        if let domain = RequestRunner.domainError(for: error) { return domain.message }
        if error.isConnectionFailure { return error.firstLine.hasSuffix(".") ? error.firstLine : error.firstLine + "." }
        let line = error.firstLine.hasSuffix(".") ? String(error.firstLine.dropLast()) : error.firstLine
        return "The database refused it: \(line) (SQLSTATE \(error.sqlState ?? "unknown"))."
    }
}

enum OrbitVersion {
    static let current = "0.1.0"
}
