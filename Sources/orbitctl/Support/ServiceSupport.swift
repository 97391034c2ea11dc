import ArgumentParser
import Foundation
import OrbitCore
import OrbitPostgres

/// What a command that acts as a user needs: the database and `--as <user id or email>`.
struct ActingOptions: ParsableArguments {
    @OptionGroup var database: DatabaseOptions
    @Option(name: .customLong("as"), help: ArgumentHelp("The acting user: a user id or email.", valueName: "user"))
    var actor: String

    /// Runs `body` with the services and the acting user (`withServices`).
    func run<Result>(_ body: (OrbitServices, UserID) async throws -> Result) async throws -> Result {
        try await withServices(database) { services in
            try await body(services, try await services.users.resolve(actor, acting: true))
        }
    }
}

/// What a read that may act as a user needs: the database and an optional `--as`; without it,
/// an operator read (orbit_admin).
struct ReadingOptions: ParsableArguments {
    @OptionGroup var database: DatabaseOptions
    @Option(
        name: .customLong("as"),
        help: ArgumentHelp("Read as this user (id or email), through row-level security; default: as an operator.", valueName: "user")
    )
    var actor: String?

    /// Runs `body` with the services and the acting user, nil for an operator.
    func run<Result>(_ body: (OrbitServices, UserID?) async throws -> Result) async throws -> Result {
        try await withServices(database) { services in
            try await body(services, try await actor.asyncMap { try await services.users.resolve($0, acting: true) })
        }
    }
}

/// A command that acts as a user (`--as`) and tells what it did: `act` does the work, `tell`
/// prints its outcome for people, and the shared `run()` resolves the user, acts, and prints
/// JSON instead with `--json`.
protocol ActingCommand: AsyncParsableCommand {
    associatedtype Outcome: Encodable
    associatedtype Output: CommandOutput
    var acting: ActingOptions { get }
    /// `@OptionGroup var output: JSONOption`; `TextOutput` for the few commands without `--json`.
    var output: Output { get }
    func act(_ services: OrbitServices, as actor: UserID) async throws -> Outcome
    func tell(_ outcome: Outcome)
}

extension ActingCommand {
    func run() async throws {
        let outcome = try await acting.run { services, actor in try await act(services, as: actor) }
        if output.json { return try printJSON(outcome) }
        tell(outcome)
    }
}

/// Whether a command prints JSON: `JSONOption` (`--json`), or `TextOutput`.
protocol CommandOutput {
    var json: Bool { get }
}

extension JSONOption: CommandOutput {}

/// The output of a command that has no `--json` and prints text alone (`chat delete`, `export`,
/// `calendar feed`, …): `var output: TextOutput { TextOutput() }`, computed, so no option.
struct TextOutput: CommandOutput {
    var json: Bool { false }
}

/// The output of a command whose outcome is JSON whatever it is asked (`user export`).
struct JSONOutput: CommandOutput {
    var json: Bool { true }
}

/// A decision on something waiting for one (`chore approve|reject`, `reward fulfil|cancel`):
/// one command, `Decide`, with the decision as its parameter.
protocol Decision {
    associatedtype ID: ExpressibleByArgument
    associatedtype Outcome: Encodable
    /// The command's name.
    static var name: String { get }
    static var abstract: String { get }
    /// What the argument is (`completion`, `redemption`) and its help.
    static var subject: (name: String, help: String) { get }
    static func decide(_ id: ID, _ services: OrbitServices, as actor: UserID) async throws -> Outcome
    /// What was decided, for people.
    static func describe(_ outcome: Outcome) -> String
}

struct Decide<Choice: Decision>: ActingCommand {
    static var configuration: CommandConfiguration { CommandConfiguration(commandName: Choice.name, abstract: Choice.abstract) }
    @Argument(help: ArgumentHelp(Choice.subject.help, valueName: Choice.subject.name)) var id: Choice.ID
    @OptionGroup var acting: ActingOptions
    @OptionGroup var output: JSONOption

    func act(_ services: OrbitServices, as actor: UserID) async throws -> Choice.Outcome {
        try await Choice.decide(id, services, as: actor)
    }

    func tell(_ outcome: Choice.Outcome) { print(Choice.describe(outcome)) }
}

/// An outcome whose `--json` is one part of it, `value`; `aside` is for `tell`'s text only (whether
/// a conversation is new, the unread count beside a page).
struct JSONPart<Value: Encodable, Aside>: Encodable {
    let value: Value
    let aside: Aside

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

struct JSONOption: ParsableArguments {
    @Flag(help: "Print JSON (snake_case keys, ids as strings, amounts in minor units).")
    var json = false
}

extension Identifier: ExpressibleByArgument {
    package init?(argument: String) {
        self.init(argument)
    }
}

extension MemberRole: ExpressibleByArgument {}
extension APNsEnvironment: ExpressibleByArgument {}
extension PostType: ExpressibleByArgument {}
extension RecurringCharge.Kind: ExpressibleByArgument {}
extension ReactionType: ExpressibleByArgument {}
extension RSVPStatus: ExpressibleByArgument {}
extension EventCategory: ExpressibleByArgument {}
extension ExpenseCategory: ExpressibleByArgument {}
extension SubscriptionStatus: ExpressibleByArgument {}

extension Currency: ExpressibleByArgument {
    package init?(argument: String) {
        self.init(argument)
    }
}

/// An RFC 3339 timestamp argument (`2026-12-31T18:00:00Z`).
struct Timestamp: ExpressibleByArgument {
    let date: Date

    init?(argument: String) {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: argument) {
            self.date = date
            return
        }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = formatter.date(from: argument) else { return nil }
        self.date = date
    }
}

/// Runs `body` with the service layer on a small pool, turning connection failures into one
/// sentence.
func withServices<Result>(_ database: DatabaseOptions, _ body: (OrbitServices) async throws -> Result) async throws -> Result {
    let pool = ConnectionPool(configuration: try database.configuration(), options: .init(maxConnections: 2, acquireTimeout: .seconds(15)))
    let replicas = try database.makeReplicas(maxConnections: 2)
    do {
        let result = try await body(OrbitServices(pool: pool, replicas: replicas))
        await pool.close()
        await replicas?.close()
        return result
    } catch let error as PostgresError where error.isConnectionFailure {
        await pool.close()
        await replicas?.close()
        throw CommandFailure(error.firstLine.hasSuffix(".") ? error.firstLine : error.firstLine + ".")
    } catch {
        await pool.close()
        await replicas?.close()
        throw error
    }
}

/// A plain text table for people.
func printTable(_ headers: [String], _ rows: [[String]]) {
    let widths = headers.indices.map { column in
        max(headers[column].count, rows.map { $0[column].count }.max() ?? 0)
    }
    func line(_ cells: [String]) -> String {
        zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
            .trimmingCharacters(in: .whitespaces)
    }
    print(line(headers))
    for row in rows { print(line(row)) }
    if rows.isEmpty { print("(none)") }
}

func show(_ date: Date?) -> String {
    date.map { $0.formatted(.iso8601) } ?? ""
}

/// `--json` for commands that change something and have no row to show.
struct DoneOutput: OmitsNilMembers {
    var id: String?
    var communityId: String?
    var userId: String?
    var deleted: Bool?
    var removed: Bool?
    var left: Bool?
    var revoked: Bool?

    enum CodingKeys: String, CodingKey {
        case id, communityId = "community_id", userId = "user_id", deleted, removed, left, revoked
    }
}

/// `--limit` and `--cursor` of a list that pages like the API's.
struct PageOptions: ParsableArguments {
    @Option(help: "At most this many per page.") var limit = 50
    @Option(help: "next_cursor of the previous page (--json prints it).") var cursor: String?
}

/// A page for people: the table, then how to get the next page.
func printPage<Item>(_ page: Page<Item>, _ headers: [String], _ row: (Item) -> [String]) {
    printTable(headers, page.items.map(row))
    if let next = page.nextCursor { print("More: --cursor \(next)") }
}

/// The bounds of money in the CLI's help: what the database's columns hold (docs/money.md, "Bounds").
enum MoneyHelp {
    static let amounts = "at most 2147483647 minor units: 21474836.47 in a currency of 2 decimals"
    static let rates = "from 0.0000000001 to 99999999999999.9999999999 (14 digits before the point, 10 after)"
}
