import ArgumentParser
import Foundation
import Logging
import OrbitCore
import OrbitPostgres
import OrbitScaleData
import Synchronization

/// `orbit-bench scale`: the main reads and writes on the `orbitctl dev seed` data set
/// (10,000 communities, 1M posts, 5M reactions, 1M transactions by default), timed through the
/// service layer, with the plan of every statement they run, as orbit_app with RLS on.
///
/// Plans come from auto_explain inside the server (`log_nested_statements`, so SQL in
/// functions and triggers is included), sent to this client as LOG messages: they are the
/// plans of the statements the service layer really ran, not of copies of them.
struct ScaleBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scale",
        abstract: "Seed the large data set, then time the main reads and writes and check that their plans use indexes."
    )

    @OptionGroup var data: ScaleDataOptions
    @Option(help: "Calls to time per operation.") var calls = 200
    @Option(help: "Write the plans (auto_explain JSON) to this file.") var plansFile = "results/scale-plans.txt"

    /// Relations this small may be read whole: a sequential scan of them is not a finding.
    static let smallRelationRows = 10_000

    func validate() throws {
        guard calls >= 1 else { throw ValidationError("--calls must be at least 1.") }
    }

    func run() async throws {
        try await data.withSeeded { configuration, invariants in try await measure(configuration: configuration, invariants: invariants) }
    }

    private func measure(configuration: PostgresConfiguration, invariants: Int) async throws {
        let sizes = try await PostgresConnection.withConnection(configuration) { connection in
            try await connection.query(
                """
                SELECT relname::text AS name, greatest(reltuples, 0)::bigint AS rows, pg_total_relation_size(oid) AS bytes FROM pg_class
                WHERE relkind IN ('r', 'm') AND relnamespace IN ('public'::regnamespace, 'orbit_private'::regnamespace)
                ORDER BY pg_total_relation_size(oid) DESC
                """
            ).map { (try $0.decode("name", as: String.self), try $0.decode("rows", as: Int64.self), try $0.decode("bytes", as: Int64.self)) }
        }
        print(
            "Invariants: all \(invariants) hold (counts, split sums, membership, tenancy, announcements, balances against the ledger, search vectors)."
        )
        print("Largest relations: " + sizes.prefix(8).map { "\($0.0) \($0.1) rows \($0.2 / 1_048_576) MB" }.joined(separator: "; "))
        let rowsByRelation = Dictionary(sizes.map { ($0.0, $0.1) }, uniquingKeysWith: max)

        var cast = try await Cast.pick(configuration, seed: data.seed, communities: data.communities)
        let timingPool = ConnectionPool(configuration: configuration, options: .init(maxConnections: 1))
        let timing = OrbitServices(pool: timingPool)
        // As the scheduled job does: the journal starts empty (a previous run's writes are in it).
        _ = try await timing.settlements.refreshBalancesSnapshot()
        for _ in 1..<50 {
            cast.deepCursor = try await timing.feed.page(of: cast.busiest.id, cursor: cast.deepCursor, as: cast.busiest.admin).nextCursor
        }
        guard cast.deepCursor != nil else {
            throw ValidationError("The busiest community has fewer than 50 feed pages (\(cast.busiest.posts) posts): seed more posts.")
        }
        let collector = LogCollector()
        var explainConfiguration = configuration
        explainConfiguration.parameters.append(
            (
                keyword: "options",
                value: "-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 -c auto_explain.log_format=json "
                    + "-c auto_explain.log_nested_statements=on -c client_min_messages=log"
            )
        )
        var planLogger = Logger(label: "orbit.bench.plans") { _ in collector }
        planLogger.logLevel = .debug
        let explainPool = ConnectionPool(configuration: explainConfiguration, options: .init(maxConnections: 1), logger: planLogger)
        let explaining = OrbitServices(pool: explainPool)

        let fixtures = try await Fixtures.make(cast, timing, configuration: configuration, uses: calls + 21)
        var rows: [ReportRow] = []
        var planText = ""
        for operation in operations(cast, fixtures) {
            // Warm up (and let prepared statements settle on their generic plans), then time.
            for _ in 0..<10 { try await operation.body(timing) }
            let clock = ContinuousClock()
            var samples: [Double] = []
            for _ in 0..<calls {
                let start = clock.now
                try await operation.body(timing)
                samples.append((clock.now - start).seconds * 1000)
            }
            samples.sort()
            // Plans: the call after ten on the explaining connection.
            for _ in 0..<10 { try await operation.body(explaining) }
            collector.reset()
            let roundTripsBefore = explainPool.roundTrips
            try await operation.body(explaining)
            let roundTrips = explainPool.roundTrips - roundTripsBefore
            let plans = collector.take().compactMap(LoggedPlan.init(message:))
            guard !plans.isEmpty else {
                throw ValidationError("No plans arrived for '\(operation.name)': is auto_explain installed, and is the connection a superuser's?")
            }
            let scans = plans.flatMap(\.scans)
            let seqScans = scans.filter { $0.node == "Seq Scan" }
            let bigSeqScans = seqScans.filter { (rowsByRelation[$0.relation ?? ""] ?? 0) > Self.smallRelationRows }
            rows.append(
                ReportRow(
                    name: operation.name, kind: operation.kind, median: samples[samples.count / 2],
                    p99: samples[min(samples.count - 1, samples.count * 99 / 100)],
                    statements: plans.count, roundTrips: roundTrips,
                    indexScans: Set(scans.filter { $0.index != nil }.map { "\($0.relation ?? "?").\($0.index ?? "?")" }).sorted(),
                    smallSeqScans: Set(seqScans.compactMap(\.relation)).subtracting(bigSeqScans.compactMap(\.relation)).sorted(),
                    bigSeqScans: Set(bigSeqScans.compactMap(\.relation)).sorted()
                )
            )
            planText += "### \(operation.name)\n" + plans.map(\.text).joined(separator: "\n") + "\n\n"
        }
        await timingPool.close()
        await explainPool.close()
        try FileManager.default.createDirectory(atPath: (plansFile as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try planText.write(toFile: plansFile, atomically: true, encoding: .utf8)

        print("")
        print(
            "Busiest community: \(cast.busiest.posts) posts; typical community (reads): \(cast.typical.posts) posts; writes go to its neighbour. \(calls) calls each, one connection, as orbit_app."
        )
        print("")
        print(
            "| operation | kind | median ms | p99 ms | statements | round trips | index scans (relation.index) | seq scans of small tables | seq scans of large tables |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for row in rows {
            print(
                "| \(row.name) | \(row.kind) | \(format(row.median, 2)) | \(format(row.p99, 2)) | \(row.statements) | \(row.roundTrips) | \(row.indexScans.joined(separator: ", ")) | \(row.smallSeqScans.joined(separator: ", ")) | \(row.bigSeqScans.isEmpty ? "none" : row.bigSeqScans.joined(separator: ", ")) |"
            )
        }
        print("")
        for row in rows {
            print("RESULT operation=\"\(row.name)\" statements=\(row.statements) round_trips=\(row.roundTrips) median_ms=\(format(row.median, 2))")
        }
        print("")
        print("Plans of every statement: \(plansFile)")
        let findings = rows.filter { !$0.bigSeqScans.isEmpty }
        print(findings.isEmpty ? "RESULT scale=ok (no sequential scan of a table over \(Self.smallRelationRows) rows)" : "RESULT scale=FAILED")
        if !findings.isEmpty { throw ExitCode.failure }
    }

    struct ReportRow {
        var name: String
        var kind: String
        var median: Double
        var p99: Double
        /// Statements the server ran for one call, nested ones (functions, triggers) included.
        var statements: Int
        /// Round trips between the client and the server for one call.
        var roundTrips: Int
        var indexScans: [String]
        var smallSeqScans: [String]
        var bigSeqScans: [String]
    }

    struct Operation {
        var name: String
        var kind: String
        var body: (OrbitServices) async throws -> Void
    }

    /// The communities and people the operations act on: the busiest community (the feed's
    /// worst case), a typical one for the reads, and its neighbour for the writes, so that a
    /// second run on the same database reads what the first one did.
    struct Cast {
        /// A seeded community, with its creator (an admin), a plain member, its first dues, a
        /// member who has not paid them, and its latest one-off event.
        struct Seeded {
            var id: CommunityID
            var admin: UserID
            var member: UserID
            var posts: Int
            var dues: DuesID
            var duesPayer: UserID
            var event: EventID
        }

        var busiest: Seeded
        var typical: Seeded
        var writes: Seeded
        var deepCursor: String?

        static func pick(_ configuration: PostgresConfiguration, seed: Int, communities: Int) async throws -> Cast {
            try await PostgresConnection.withConnection(configuration) { connection in
                func community(_ name: String) async throws -> Seeded {
                    let row = try await connection.query(
                        """
                        SELECT c.id, c.created_by,
                            (SELECT m.user_id FROM members m WHERE m.community_id = c.id AND m.role = 'member' ORDER BY m.joined_at LIMIT 1) AS member,
                            (SELECT count(*) FROM posts p WHERE p.community_id = c.id) AS posts,
                            (SELECT d.id FROM dues d WHERE d.community_id = c.id ORDER BY d.due_date LIMIT 1) AS dues,
                            (SELECT e.id FROM events e WHERE e.community_id = c.id AND e.recurrence_rule IS NULL ORDER BY e.starts_at DESC LIMIT 1)
                                AS event
                        FROM communities c JOIN users u ON u.id = c.created_by
                        WHERE c.name = \(name) AND u.apple_id LIKE \("seed.\(seed).%")
                        """
                    ).single()
                    guard let dues = try row.decode("dues", as: UUID?.self), let event = try row.decode("event", as: UUID?.self) else {
                        throw ValidationError("\(name) has no dues or no one-off event: seed with --dues and --events of at least 1 and 2.")
                    }
                    guard
                        let payer = try await connection.query(
                            """
                            SELECT m.user_id FROM members m
                            WHERE m.community_id = \(try row.decode("id", as: UUID.self))
                              AND NOT EXISTS (SELECT 1 FROM dues_payments p WHERE p.dues_id = \(dues) AND p.user_id = m.user_id)
                            ORDER BY m.joined_at LIMIT 1
                            """
                        ).first?.decode("user_id", as: UUID.self)
                    else { throw ValidationError("Every member of \(name) has paid its dues: seed with more --members.") }
                    return Seeded(
                        id: CommunityID(try row.decode("id", as: UUID.self)), admin: UserID(try row.decode("created_by", as: UUID.self)),
                        member: UserID(try row.decode("member", as: UUID.self)), posts: Int(try row.decode("posts", as: Int64.self)),
                        dues: DuesID(dues), duesPayer: UserID(payer), event: EventID(event)
                    )
                }
                return Cast(
                    busiest: try await community("Club 0"), typical: try await community("Club \(communities / 2)"),
                    writes: try await community("Club \(communities / 2 + 1)"), deepCursor: nil
                )
            }
        }
    }

    /// What the writes act on and use up: a post to react to and comment on, a poll to vote
    /// on, an expense to edit, and one expense to delete and one non-member to add per call.
    struct Fixtures: Sendable {
        var post: PostID
        var poll: PostID
        var expense: TransactionID
        var doomedExpenses: [TransactionID]
        var newcomers: [UserID]
        /// A user in 200 communities of the data set ("my groups").
        var traveller: UserID
        /// A third member of the writes community, and a guest there: an expense among three
        /// members against one among two members and the guest.
        var third: UserID
        var guest: UserID

        static func make(_ cast: Cast, _ services: OrbitServices, configuration: PostgresConfiguration, uses: Int) async throws -> Fixtures {
            let writes = cast.writes
            let post = try await services.feed.createPost(in: writes.id, PostDraft(content: "Scale fixture"), as: writes.admin).id
            let poll = try await services.feed.createPost(
                in: writes.id, PostDraft(type: .poll, poll: Poll(question: "Scale poll?", options: ["yes", "no"])), as: writes.admin
            ).id
            func expense(_ description: String) async throws -> TransactionID {
                try await services.expenses.addExpense(
                    in: writes.id, description: description, total: Money(minorUnits: 1000, currency: .usd), paidBy: writes.admin,
                    split: .equal([writes.admin, writes.member]), as: writes.admin
                ).id
            }
            var doomed: [TransactionID] = []
            for index in 0..<uses { doomed.append(try await expense("Scale doomed \(index)")) }
            let newcomers = try await PostgresConnection.withConnection(configuration) { connection in
                try await connection.query(
                    """
                    SELECT u.id FROM users u
                    WHERE u.deleted_at IS NULL AND NOT EXISTS (SELECT FROM members m WHERE m.community_id = \(writes.id) AND m.user_id = u.id)
                    ORDER BY u.id LIMIT \(uses)
                    """
                ).map { UserID(try $0.decode("id", as: UUID.self)) }
            }
            guard newcomers.count == uses else { throw ValidationError("Fewer than \(uses) users outside \(writes.id): seed more communities.") }
            // The traveller joins 200 communities (not the writes one) as a member: rows written
            // as the seed writes them, so the counters' triggers keep member_count right.
            let traveller = try await services.users.create(
                email: "traveller.\(UUID().uuidString.lowercased())@example.com", displayName: "Traveller"
            ).id
            let (joined, third) = try await PostgresConnection.withConnection(configuration) { connection in
                let joined = try await connection.query(
                    """
                    INSERT INTO members (community_id, user_id)
                    SELECT c.id, \(traveller) FROM communities c
                    WHERE c.deleted_at IS NULL AND c.id <> \(writes.id) ORDER BY c.id LIMIT 200
                    RETURNING community_id
                    """
                ).count
                let third = try await connection.query(
                    """
                    SELECT m.user_id FROM members m
                    WHERE m.community_id = \(writes.id) AND m.left_at IS NULL AND m.user_id NOT IN (\(writes.admin), \(writes.member))
                    ORDER BY m.joined_at, m.id LIMIT 1
                    """
                ).first.map { UserID(try $0.decode("user_id", as: UUID.self)) }
                return (joined, third)
            }
            guard joined == 200 else { throw ValidationError("Fewer than 201 communities in the data set: seed more.") }
            guard let third else { throw ValidationError("The writes community has fewer than three members: seed more.") }
            let guest = try await services.members.addGuest(named: "Scale guest", to: writes.id, as: writes.admin).userID
            return Fixtures(
                post: post, poll: poll, expense: try await expense("Scale edited"), doomedExpenses: doomed, newcomers: newcomers,
                traveller: traveller, third: third, guest: guest)
        }
    }

    private func operations(_ cast: Cast, _ fixtures: Fixtures) -> [Operation] {
        let now = Date()
        let counter = Atomic<Int>(0)
        func next() -> Int { counter.add(1, ordering: .relaxed).newValue }
        let doomed = Atomic<Int>(0)
        let added = Atomic<Int>(0)
        let writes = cast.writes
        return [
            Operation(name: "feed page 1, busiest community", kind: "read") { services in
                _ = try await services.feed.page(of: cast.busiest.id, as: cast.busiest.admin)
            },
            Operation(name: "feed page 50, busiest community", kind: "read") { services in
                _ = try await services.feed.page(of: cast.busiest.id, cursor: cast.deepCursor, as: cast.busiest.admin)
            },
            Operation(name: "feed page 1, typical community", kind: "read") { services in
                _ = try await services.feed.page(of: cast.typical.id, as: cast.typical.member)
            },
            Operation(name: "upcoming events (30 days, series expanded)", kind: "read") { services in
                _ = try await services.events.calendar(
                    of: cast.typical.id, from: now, to: now.addingTimeInterval(30 * 86_400), as: cast.typical.member)
            },
            Operation(name: "my groups (a user in 200 communities)", kind: "read") { services in
                _ = try await services.communities.mine(as: fixtures.traveller)
            },
            Operation(name: "balances", kind: "read") { services in
                _ = try await services.settlements.balances(in: cast.typical.id, as: cast.typical.member)
            },
            Operation(name: "dues report", kind: "read") { services in
                _ = try await services.dues.report(cast.typical.dues, as: cast.typical.admin)
            },
            Operation(name: "member list", kind: "read") { services in
                _ = try await services.members.list(of: cast.typical.id, as: cast.typical.member)
            },
            Operation(name: "expense list (50 newest)", kind: "read") { services in
                _ = try await services.expenses.expenses(in: cast.typical.id, as: cast.typical.member)
            },
            Operation(name: "create post", kind: "write") { services in
                _ = try await services.feed.createPost(in: writes.id, PostDraft(content: "Scale post \(next())"), as: writes.member)
            },
            Operation(name: "react to a post", kind: "write") { services in
                _ = try await services.feed.react(to: fixtures.post, type: [ReactionType.like, .love][next() % 2], as: writes.member)
            },
            Operation(name: "vote in a poll (single choice, changing)", kind: "write") { services in
                _ = try await services.feed.vote(on: fixtures.poll, option: next() % 2, as: writes.member)
            },
            Operation(name: "comment on a post", kind: "write") { services in
                _ = try await services.feed.addComment(to: fixtures.post, content: "Scale comment \(next())", as: writes.member)
            },
            Operation(name: "add expense (equal split of 2)", kind: "write") { services in
                _ = try await services.expenses.addExpense(
                    in: writes.id, description: "Scale expense \(next())", total: Money(minorUnits: 1234, currency: .usd),
                    paidBy: writes.admin,
                    split: .equal([writes.admin, writes.member]), as: writes.admin
                )
            },
            // A guest costs no more than a member (issue 54): the same expense, three ways.
            Operation(name: "add expense (equal split of 3 members)", kind: "write") { services in
                _ = try await services.expenses.addExpense(
                    in: writes.id, description: "Scale expense \(next())", total: Money(minorUnits: 1234, currency: .usd),
                    paidBy: writes.admin, split: .equal([writes.admin, writes.member, fixtures.third]), as: writes.admin
                )
            },
            Operation(name: "add expense (equal split of 2 members and a guest)", kind: "write") { services in
                _ = try await services.expenses.addExpense(
                    in: writes.id, description: "Scale expense \(next())", total: Money(minorUnits: 1234, currency: .usd),
                    paidBy: writes.admin, split: .equal([writes.admin, writes.member, fixtures.guest]), as: writes.admin
                )
            },
            Operation(name: "update expense (new total, split again)", kind: "write") { services in
                _ = try await services.expenses.updateExpense(
                    fixtures.expense, description: "Scale edited \(next())", total: Money(minorUnits: Int64(1000 + next() % 2), currency: .usd),
                    as: writes.admin)
            },
            Operation(name: "delete expense", kind: "write") { services in
                try await services.expenses.deleteExpense(fixtures.doomedExpenses[doomed.add(1, ordering: .relaxed).oldValue], as: writes.admin)
            },
            Operation(name: "record a settlement", kind: "write") { services in
                _ = try await services.settlements.recordSettlement(
                    in: writes.id, from: writes.member, to: writes.admin, amount: Money(minorUnits: 100, currency: .usd), as: writes.member)
            },
            Operation(name: "create dues (notifies every member)", kind: "write") { services in
                _ = try await services.dues.create(
                    in: writes.id, name: "Scale dues \(next())", amount: Money(minorUnits: 5000, currency: .usd),
                    dueDate: CivilDate(containing: now.addingTimeInterval(30 * 86_400), in: .gmt), as: writes.admin)
            },
            Operation(name: "record a dues payment", kind: "write") { services in
                _ = try await services.dues.recordPayment(
                    to: writes.dues, by: writes.duesPayer, amount: Money(minorUnits: 1, currency: .usd), note: "scale \(next())",
                    as: writes.admin)
            },
            Operation(name: "create event (notifies every member)", kind: "write") { services in
                _ = try await services.events.create(
                    in: writes.id, EventDraft(title: "Scale event \(next())", startsAt: now.addingTimeInterval(7 * 86_400)), as: writes.member)
            },
            Operation(name: "RSVP", kind: "write") { services in
                _ = try await services.events.rsvp(writes.event, status: [RSVPStatus.yes, .maybe][next() % 2], as: writes.member)
            },
            Operation(name: "add a member", kind: "write") { services in
                _ = try await services.members.add(fixtures.newcomers[added.add(1, ordering: .relaxed).oldValue], to: writes.id, as: writes.admin)
            },
            Operation(name: "create an invite", kind: "write") { services in
                _ = try await services.invites.create(to: writes.id, maxUses: 5, as: writes.admin)
            },
            Operation(name: "create a community", kind: "write") { services in
                _ = try await services.communities.create(name: "Scale club \(next())", as: writes.member)
            },
            Operation(name: "update community settings", kind: "write") { services in
                _ = try await services.communities.update(
                    writes.id, description: "Scale \(next())", settings: CommunitySettings(defaultReminderHours: 24), as: writes.admin)
            },
        ]
    }
}

/// One statement's plan as auto_explain logged it.
struct LoggedPlan {
    struct Scan {
        var node: String
        var relation: String?
        var index: String?
    }

    var text: String
    var scans: [Scan]

    init?(message: String) {
        guard let brace = message.firstIndex(of: "{"), let data = String(message[brace...]).data(using: .utf8),
            let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let plan = json["Plan"] as? [String: Any]
        else { return nil }
        text = message
        var scans: [Scan] = []
        // A Bitmap Index Scan names no relation: it is its Bitmap Heap Scan's.
        func walk(_ node: [String: Any], parentRelation: String?) {
            let relation = node["Relation Name"] as? String ?? parentRelation
            if let type = node["Node Type"] as? String, type.hasSuffix("Scan") {
                scans.append(Scan(node: type, relation: relation, index: node["Index Name"] as? String))
            }
            for child in node["Plans"] as? [[String: Any]] ?? [] { walk(child, parentRelation: relation) }
        }
        walk(plan, parentRelation: nil)
        self.scans = scans
    }
}
