package import Foundation
import OrbitCore
package import OrbitPostgres

/// A large, realistic and deterministic data set (`orbitctl dev seed`, `orbit-bench scale`): communities
/// with overlapping members (every user belongs to about two), a skewed feed (the first
/// communities are the busiest, as in real life), reactions and comments from members,
/// events with a weekly series and RSVPs, expenses with splits, and dues with payments.
///
/// The same seed, sizes and `asOf` day give the same rows, ids included: every id is
/// `md5(seed/kind/index)` and every choice a hash of (seed, stream, index), so two runs
/// produce byte-identical tables and a plan or a bug seen on one can be reproduced on another.
///
/// Loading is set-based SQL with the triggers off (`session_replication_role = replica`,
/// which needs a superuser): the generator writes the denormalized counts itself, and
/// `verify` then checks them, the split sums, the foreign keys the triggers would have
/// checked and the balances against a recount. It runs in one transaction, so a failed load
/// leaves nothing behind.
package struct ScaleDataSet: Sendable, Hashable {
    package var seed: Int
    package var communities: Int
    /// Members per community.
    package var members: Int
    package var posts: Int
    package var reactions: Int
    package var comments: Int
    package var transactions: Int
    /// Events per community: one weekly series and one-off events around `asOf`.
    package var eventsPerCommunity: Int
    package var rsvpsPerEvent: Int
    package var duesPerCommunity: Int
    /// The day the data is "now" for (posts go back a year from it, events go either side).
    package var asOf: Date

    package init(
        seed: Int = 1, communities: Int = 10_000, members: Int = 20, posts: Int = 1_000_000, reactions: Int = 5_000_000,
        comments: Int = 500_000, transactions: Int = 1_000_000, eventsPerCommunity: Int = 10, rsvpsPerEvent: Int = 3,
        duesPerCommunity: Int = 2, asOf: Date
    ) {
        self.seed = seed
        self.communities = communities
        self.members = members
        self.posts = posts
        self.reactions = reactions
        self.comments = comments
        self.transactions = transactions
        self.eventsPerCommunity = eventsPerCommunity
        self.rsvpsPerEvent = rsvpsPerEvent
        self.duesPerCommunity = duesPerCommunity
        self.asOf = asOf
    }

    /// Users: every community shares half its members with the next one.
    package var users: Int { max(communities * max(1, members / 2), members) }

    /// Refuses sizes the generator cannot honour (each rule names the option it is about).
    package func validate() throws {
        func require(_ condition: Bool, _ field: String, _ reason: String) throws {
            if !condition { throw ServiceError.invalidInput(field: field, reason: reason) }
        }
        try require(seed >= 0 && seed < 1 << 40, "seed", "must be between 0 and 2^40")
        try require((1...10_000_000).contains(communities), "communities", "must be between 1 and 10,000,000")
        try require((2...1000).contains(members), "members", "must be between 2 and 1000")
        try require((0...100_000_000).contains(posts), "posts", "must be between 0 and 100,000,000")
        try require(
            reactions >= 0 && reactions <= posts * min(members, 50), "reactions", "must be at most posts × min(members, 50): one per member and post")
        try require(comments >= 0 && comments <= posts * 50, "comments", "must be at most 50 per post")
        try require((0...100_000_000).contains(transactions), "transactions", "must be between 0 and 100,000,000")
        try require((0...1000).contains(eventsPerCommunity), "events", "must be between 0 and 1000 per community")
        try require(rsvpsPerEvent >= 0 && rsvpsPerEvent <= members, "rsvps", "must be at most one per member and event")
        try require((0...100).contains(duesPerCommunity), "dues", "must be between 0 and 100 per community")
    }

    /// What `load` inserted, table by table.
    package struct Counts: Sendable, Equatable, CustomStringConvertible {
        package var rows: [(table: String, count: Int)]
        package static func == (lhs: Counts, rhs: Counts) -> Bool { lhs.rows.elementsEqual(rhs.rows) { $0 == $1 } }
        package var description: String { rows.map { "\($0.count) \($0.table)" }.joined(separator: ", ") }
    }

    /// Loads the data set into the database of `configuration` (a superuser's) and makes it
    /// ready to read as the service layer would find it: the balances snapshot refreshed, and
    /// `VACUUM ANALYZE` run. Check it with `verify` afterwards.
    package func install(into configuration: PostgresConfiguration, progress: (String) -> Void = { _ in }) async throws -> Counts {
        let counts = try await PostgresConnection.withConnection(configuration) { try await load(on: $0, progress: progress) }
        let pool = ConnectionPool(configuration: configuration, options: .init(maxConnections: 1))
        let refresh: Duration?
        do {
            refresh = try await OrbitServices(pool: pool).settlements.refreshBalancesSnapshot()
            await pool.close()
        } catch {
            await pool.close()
            throw error
        }
        guard let refresh else {
            throw ServiceError.conflict("Another balances refresh was running; the snapshot of the data set was not refreshed.")
        }
        progress("balances snapshot refreshed in \(Self.seconds(refresh))")
        try await PostgresConnection.withConnection(configuration) { connection in
            let start = ContinuousClock.now
            try await connection.executeScript("VACUUM (ANALYZE)")
            progress("VACUUM ANALYZE in \(Self.seconds(start.duration(to: .now)))")
        }
        return counts
    }

    /// Loads the data set in one transaction on `connection`, which must be a superuser's
    /// (triggers are switched off for the load). Refuses to load the same seed twice.
    package func load(on connection: PostgresConnection, progress: (String) -> Void = { _ in }) async throws -> Counts {
        try validate()
        let superuser = try await connection.query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").single()
            .decode(0, as: Bool.self)
        guard superuser else {
            throw ServiceError.forbidden(rule: "loading the data set switches triggers off, which needs a superuser connection")
        }
        let marker = "seed.\(seed).0"
        if try await connection.query("SELECT 1 FROM users WHERE apple_id = \(marker)").count > 0 {
            throw ServiceError.conflict("The data set of seed \(seed) is already loaded (user \(marker) exists).")
        }
        // UTC: the dates and hours derived from timestamps must not depend on the server's zone.
        let settings = ["session_replication_role": "replica", "synchronous_commit": "off", "TimeZone": "UTC"]
        return try await connection.withTransaction(TransactionOptions(localSettings: settings)) { connection in
            try await connection.executeScript(Self.functions)
            var counts: [(String, Int)] = []
            for (table, statement) in statements {
                let start = ContinuousClock.now
                let inserted = try await connection.query(statement).affectedRows ?? 0
                counts.append((table, inserted))
                progress("\(table): \(inserted) rows in \(Self.seconds(start.duration(to: .now)))")
            }
            try await connection.executeScript(Self.dropFunctions)
            return Counts(rows: counts)
        }
    }

    /// "12.3 s": a duration for a progress line.
    package static func seconds(_ duration: Duration) -> String {
        let tenths = duration.components.seconds * 10 + duration.components.attoseconds / 100_000_000_000_000_000
        return "\(tenths / 10).\(tenths % 10) s"
    }

    /// The words of posts, comments and expenses (docs/search.md's benchmark): a club's and a
    /// family's, some with accents. `seed_words` draws them skewed, the first ones most often (the
    /// first is in about half the posts, the 11th in 11%, the 50th in 5%, the last in 3%), as words
    /// are in real text, so a two-word search finds a realistic share of a community's posts.
    package static let vocabulary: [String] = [
        "practice", "game", "today", "team", "tomorrow", "saturday", "field", "kids", "bring", "time", "match", "coach", "parents",
        "training", "sunday", "water", "please", "week", "school", "thanks", "bus", "snacks", "home", "away", "kit", "shirts",
        "goal", "season", "photos", "tournament", "friday", "weekend", "lunch", "dinner", "party", "birthday", "cake", "pizza",
        "referee", "pitch", "boots", "socks", "jersey", "rain", "sun", "cold", "warm", "early", "late", "pickup", "carpool",
        "meeting", "club", "fees", "dues", "money", "receipt", "tickets", "trip", "hotel", "café", "zürich", "münchen", "crèche",
        "équipe", "naïve", "fiancée", "piñata", "smörgåsbord", "jalapeño", "garage", "garden", "dishes", "laundry", "homework",
        "piano", "swimming", "pool", "gym", "stadium", "trophy", "medal", "winner", "final", "semifinal", "league", "cup", "derby",
        "volunteer", "schedule", "changed", "cancelled", "moved", "indoor", "outdoor", "north", "south", "east", "west", "park",
        "library", "museum", "beach", "mountain", "camping", "tent", "sleeping", "bags", "flashlight", "sunscreen", "hats",
        "jackets", "umbrella", "orange", "slices", "bananas", "apples", "sandwiches", "juice", "coffee", "tea", "milk", "bread",
        "cheese", "grandma", "grandpa", "aunt", "uncle", "cousins", "baby", "puppy", "kitten", "vet", "dentist", "doctor",
        "appointment", "reminder", "deadline", "form", "signature", "permission", "uniform", "helmet", "bike", "scooter",
        "skates", "ice", "hockey", "soccer", "football", "basketball", "volleyball", "tennis", "golf", "chess", "drama",
        "choir", "concert", "recital", "rehearsal", "costume", "makeup", "lights", "stage", "curtain", "applause", "encore",
    ]

    /// `vocabulary` as a PostgreSQL array literal (words of letters only: nothing to escape).
    static var vocabularyLiteral: String { "{" + vocabulary.joined(separator: ",") + "}" }

    // The generator's vocabulary, as session-local SQL functions of (seed, index): a stream of
    // hashes per choice, ids, the community a post or transaction belongs to (skewed: community
    // c gets a share ∝ 1/√c), and the user in a community's member slot.
    static let functions = """
        CREATE OR REPLACE FUNCTION pg_temp.seed_hash(seed bigint, stream int, i bigint) RETURNS bigint
        LANGUAGE sql IMMUTABLE AS $$ SELECT hashint8extended(i, seed * 64 + stream) & 9223372036854775807 $$;
        CREATE OR REPLACE FUNCTION pg_temp.seed_unit(seed bigint, stream int, i bigint) RETURNS float8
        LANGUAGE sql IMMUTABLE AS $$ SELECT (pg_temp.seed_hash(seed, stream, i) % 1000000007) / 1000000007.0 $$;
        CREATE OR REPLACE FUNCTION pg_temp.seed_id(seed bigint, kind text, i bigint) RETURNS uuid
        LANGUAGE sql IMMUTABLE AS $$ SELECT md5(seed::text || '/' || kind || '/' || i::text)::uuid $$;
        CREATE OR REPLACE FUNCTION pg_temp.seed_skewed(seed bigint, stream int, i bigint, n bigint) RETURNS bigint
        LANGUAGE sql IMMUTABLE AS $$ SELECT least(n - 1, floor(n * pg_temp.seed_unit(seed, stream, i) ^ 2)::bigint) $$;
        CREATE OR REPLACE FUNCTION pg_temp.seed_user(seed bigint, community bigint, slot bigint, members bigint, users bigint)
        RETURNS uuid LANGUAGE sql IMMUTABLE
        AS $$ SELECT pg_temp.seed_id(seed, 'user', (community * greatest(1, members / 2) + slot) % users) $$;
        CREATE OR REPLACE FUNCTION pg_temp.seed_share(total bigint, parts bigint, i bigint) RETURNS bigint
        LANGUAGE sql IMMUTABLE AS $$ SELECT total / nullif(parts, 0) + CASE WHEN i < total % nullif(parts, 0) THEN 1 ELSE 0 END $$;
        CREATE OR REPLACE FUNCTION pg_temp.seed_words(seed bigint, stream int, i bigint, n bigint) RETURNS text
        LANGUAGE sql IMMUTABLE AS $$
            SELECT string_agg(w.vocabulary[1 + pg_temp.seed_skewed(seed, stream, i * 16 + k, array_length(w.vocabulary, 1))], ' ' ORDER BY k)
            FROM (SELECT '\(vocabularyLiteral)'::text[] AS vocabulary) AS w, generate_series(0, n - 1) AS k
        $$;
        """

    static let dropFunctions = """
        DROP FUNCTION pg_temp.seed_words(bigint, int, bigint, bigint);
        DROP FUNCTION pg_temp.seed_share(bigint, bigint, bigint);
        DROP FUNCTION pg_temp.seed_user(bigint, bigint, bigint, bigint, bigint);
        DROP FUNCTION pg_temp.seed_skewed(bigint, int, bigint, bigint);
        DROP FUNCTION pg_temp.seed_id(bigint, text, bigint);
        DROP FUNCTION pg_temp.seed_unit(bigint, int, bigint);
        DROP FUNCTION pg_temp.seed_hash(bigint, int, bigint);
        """

    /// The INSERT of each table; every value comes in as a parameter.
    var statements: [(String, PostgresQuery)] {
        let seed = Int64(seed), n = Int64(communities), m = Int64(members), u = Int64(users)
        let p = Int64(posts), r = Int64(reactions), c = Int64(comments), t = Int64(transactions)
        let e = Int64(eventsPerCommunity), v = Int64(rsvpsPerEvent), d = Int64(duesPerCommunity)
        let asOf = asOf
        return [
            (
                "users",
                """
                INSERT INTO users (id, apple_id, email, display_name, created_at, updated_at)
                SELECT pg_temp.seed_id(\(seed), 'user', i), 'seed.' || \(seed)::text || '.' || i, 'user' || i || '@seed.example.com',
                    'Member ' || i, \(asOf)::timestamptz - interval '400 days', \(asOf)::timestamptz - interval '400 days'
                FROM generate_series(0, \(u) - 1) AS i
                """
            ),
            (
                "communities",
                """
                INSERT INTO communities (id, name, created_by, member_count, settings, created_at, updated_at)
                SELECT pg_temp.seed_id(\(seed), 'community', i), 'Club ' || i, pg_temp.seed_user(\(seed), i, 0, \(m), \(u)), \(m),
                    jsonb_build_object('timezone', 'UTC'), \(asOf)::timestamptz - interval '400 days', \(asOf)::timestamptz - interval '400 days'
                FROM generate_series(0, \(n) - 1) AS i
                """
            ),
            (
                "members",
                """
                INSERT INTO members (id, community_id, user_id, role, joined_at, invited_by)
                SELECT pg_temp.seed_id(\(seed), 'member', i * \(m) + s), pg_temp.seed_id(\(seed), 'community', i),
                    pg_temp.seed_user(\(seed), i, s, \(m), \(u)), CASE WHEN s < 2 THEN 'admin' ELSE 'member' END::member_role,
                    \(asOf)::timestamptz - interval '400 days' + s * interval '1 day',
                    CASE WHEN s > 0 THEN pg_temp.seed_user(\(seed), i, 0, \(m), \(u)) END
                FROM generate_series(0, \(n) - 1) AS i, generate_series(0, \(m) - 1) AS s
                """
            ),
            (
                "posts",
                """
                INSERT INTO posts (id, community_id, author_id, type, content, search_vector, is_announcement, editable_until,
                    reaction_counts, comment_count, created_at, updated_at)
                SELECT pg_temp.seed_id(\(seed), 'post', i), pg_temp.seed_id(\(seed), 'community', community),
                    pg_temp.seed_user(\(seed), community, pg_temp.seed_hash(\(seed), 2, i) % CASE WHEN announcement THEN 2 ELSE \(m) END, \(m), \(u)),
                    CASE WHEN announcement THEN 'announcement' ELSE 'text' END::post_type,
                    written.content,
                    orbit.scope_vector(pg_temp.seed_id(\(seed), 'community', community), orbit.search_document('orbit.simple', NULL, written.content)),
                    announcement, created + interval '24 hours',
                    coalesce((
                        SELECT jsonb_object_agg(type, n)
                        FROM (
                            SELECT (enum_range(NULL::reaction_type))[(1 + pg_temp.seed_hash(\(seed), 5, i * 64 + k) % 4)::int] AS type, count(*) AS n
                            FROM generate_series(0, pg_temp.seed_share(\(r), \(p), i) - 1) AS k GROUP BY 1
                        ) AS counted
                    ), '{}'),
                    pg_temp.seed_share(\(c), \(p), i), created, created
                FROM generate_series(0, \(p) - 1) AS i,
                    LATERAL (SELECT pg_temp.seed_skewed(\(seed), 1, i, \(n)) AS community,
                        \(asOf)::timestamptz - pg_temp.seed_unit(\(seed), 4, i) * interval '365 days' AS created,
                        pg_temp.seed_hash(\(seed), 6, i) % 50 = 0 AS announcement) AS chosen,
                    LATERAL (SELECT 'Post ' || i || ': ' || pg_temp.seed_words(\(seed), 24, i, 4 + pg_temp.seed_hash(\(seed), 3, i) % 12) AS content)
                        AS written
                """
            ),
            (
                "reactions",
                """
                INSERT INTO reactions (id, post_id, user_id, type, created_at, community_id)
                SELECT pg_temp.seed_id(\(seed), 'reaction', i * 64 + k), pg_temp.seed_id(\(seed), 'post', i),
                    pg_temp.seed_user(\(seed), community, (pg_temp.seed_hash(\(seed), 7, i) + k) % \(m), \(m), \(u)),
                    (enum_range(NULL::reaction_type))[(1 + pg_temp.seed_hash(\(seed), 5, i * 64 + k) % 4)::int],
                    \(asOf)::timestamptz - pg_temp.seed_unit(\(seed), 4, i) * interval '365 days' + (k + 1) * interval '1 minute',
                    pg_temp.seed_id(\(seed), 'community', community)
                FROM generate_series(0, \(p) - 1) AS i,
                    LATERAL (SELECT pg_temp.seed_skewed(\(seed), 1, i, \(n)) AS community) AS chosen,
                    LATERAL generate_series(0, pg_temp.seed_share(\(r), \(p), i) - 1) AS k
                """
            ),
            (
                "comments",
                """
                INSERT INTO comments (id, post_id, author_id, content, search_vector, created_at, updated_at, community_id)
                SELECT pg_temp.seed_id(\(seed), 'comment', i * 64 + k), pg_temp.seed_id(\(seed), 'post', i),
                    pg_temp.seed_user(\(seed), community, (pg_temp.seed_hash(\(seed), 8, i) + k) % \(m), \(m), \(u)),
                    written.content,
                    orbit.scope_vector(pg_temp.seed_id(\(seed), 'community', community), orbit.search_document('orbit.simple', NULL, written.content)),
                    created, created,
                    pg_temp.seed_id(\(seed), 'community', community)
                FROM generate_series(0, \(p) - 1) AS i,
                    LATERAL (SELECT pg_temp.seed_skewed(\(seed), 1, i, \(n)) AS community) AS chosen,
                    LATERAL generate_series(0, pg_temp.seed_share(\(c), \(p), i) - 1) AS k,
                    LATERAL (SELECT \(asOf)::timestamptz - pg_temp.seed_unit(\(seed), 4, i) * interval '365 days'
                        + (k + 1) * interval '5 minutes' AS created) AS at,
                    LATERAL (SELECT pg_temp.seed_words(\(seed), 22, i * 64 + k, 2 + pg_temp.seed_hash(\(seed), 22, i * 64 + k) % 8) AS content)
                        AS written
                """
            ),
            (
                "events",
                """
                INSERT INTO events (id, community_id, created_by, title, starts_at, ends_at, category, recurrence_rule,
                    recurrence_timezone, location_name, search_vector, created_at, updated_at)
                SELECT pg_temp.seed_id(\(seed), 'event', i * \(e) + k), pg_temp.seed_id(\(seed), 'community', i),
                    pg_temp.seed_user(\(seed), i, 0, \(m), \(u)),
                    CASE WHEN k = 0 THEN 'Weekly practice' ELSE 'Event ' || k END, starts, starts + interval '90 minutes',
                    (enum_range(NULL::event_category))[(1 + pg_temp.seed_hash(\(seed), 9, i * \(e) + k) % 5)::int],
                    CASE WHEN k = 0 THEN 'FREQ=WEEKLY' END, CASE WHEN k = 0 THEN 'UTC' END, 'Field ' || (k % 3),
                    orbit.scope_vector(
                        pg_temp.seed_id(\(seed), 'community', i),
                        orbit.search_document('orbit.simple', CASE WHEN k = 0 THEN 'Weekly practice' ELSE 'Event ' || k END, 'Field ' || (k % 3))),
                    \(asOf)::timestamptz - interval '120 days', \(asOf)::timestamptz - interval '120 days'
                FROM generate_series(0, \(n) - 1) AS i, generate_series(0, \(e) - 1) AS k,
                    LATERAL (SELECT date_trunc('hour', CASE WHEN k = 0 THEN \(asOf)::timestamptz - interval '90 days' + interval '18 hours'
                        ELSE \(asOf)::timestamptz + (pg_temp.seed_unit(\(seed), 10, i * \(e) + k) - 0.5) * interval '180 days' END) AS starts) AS at
                """
            ),
            (
                "rsvps",
                """
                INSERT INTO rsvps (id, event_id, user_id, status, plus_ones, responded_at, updated_at, community_id)
                SELECT pg_temp.seed_id(\(seed), 'rsvp', (i * \(e) + k) * \(v) + s), pg_temp.seed_id(\(seed), 'event', i * \(e) + k),
                    pg_temp.seed_user(\(seed), i, (pg_temp.seed_hash(\(seed), 11, i * \(e) + k) + s) % \(m), \(m), \(u)),
                    (enum_range(NULL::rsvp_status))[(1 + pg_temp.seed_hash(\(seed), 12, (i * \(e) + k) * \(v) + s) % 3)::int],
                    (pg_temp.seed_hash(\(seed), 13, (i * \(e) + k) * \(v) + s) % 3)::int,
                    \(asOf)::timestamptz - interval '7 days', \(asOf)::timestamptz - interval '7 days', pg_temp.seed_id(\(seed), 'community', i)
                FROM generate_series(0, \(n) - 1) AS i, generate_series(1, \(e) - 1) AS k, generate_series(0, \(v) - 1) AS s
                """
            ),
            (
                "transactions",
                """
                INSERT INTO transactions (id, community_id, created_by, paid_by, type, description, search_vector, total_amount, currency,
                    category, transaction_date, created_at, updated_at)
                SELECT pg_temp.seed_id(\(seed), 'transaction', i), pg_temp.seed_id(\(seed), 'community', community),
                    pg_temp.seed_user(\(seed), community, payer, \(m), \(u)), pg_temp.seed_user(\(seed), community, payer, \(m), \(u)),
                    'expense', written.description,
                    orbit.scope_vector(pg_temp.seed_id(\(seed), 'community', community), orbit.search_document('orbit.simple', written.description, NULL)),
                    total, 'USD',
                    (enum_range(NULL::expense_category))[(1 + pg_temp.seed_hash(\(seed), 16, i) % 5)::int],
                    created::date, created, created
                FROM generate_series(0, \(t) - 1) AS i,
                    LATERAL (SELECT pg_temp.seed_skewed(\(seed), 14, i, \(n)) AS community, pg_temp.seed_hash(\(seed), 15, i) % \(m) AS payer,
                        (2 + pg_temp.seed_hash(\(seed), 17, i) % 3) * 100 + pg_temp.seed_hash(\(seed), 18, i) % 20000 AS total,
                        \(asOf)::timestamptz - pg_temp.seed_unit(\(seed), 19, i) * interval '365 days' AS created) AS chosen,
                    LATERAL (SELECT 'Expense ' || i || ': ' || pg_temp.seed_words(\(seed), 23, i, 3) AS description) AS written
                """
            ),
            (
                "splits",
                """
                INSERT INTO splits (id, transaction_id, user_id, amount, is_settled, settled_at, settled_via, community_id, updated_at)
                SELECT pg_temp.seed_id(\(seed), 'split', i * 8 + k), pg_temp.seed_id(\(seed), 'transaction', i),
                    pg_temp.seed_user(\(seed), community, (payer + k) % \(m), \(m), \(u)),
                    pg_temp.seed_share(total, parts, k), settled, CASE WHEN settled THEN created + interval '7 days' END,
                    CASE WHEN settled THEN 'cash' END, pg_temp.seed_id(\(seed), 'community', community), created
                FROM generate_series(0, \(t) - 1) AS i,
                    LATERAL (SELECT pg_temp.seed_skewed(\(seed), 14, i, \(n)) AS community, pg_temp.seed_hash(\(seed), 15, i) % \(m) AS payer,
                        least(\(m), 2 + pg_temp.seed_hash(\(seed), 17, i) % 3) AS parts,
                        (2 + pg_temp.seed_hash(\(seed), 17, i) % 3) * 100 + pg_temp.seed_hash(\(seed), 18, i) % 20000 AS total,
                        pg_temp.seed_unit(\(seed), 19, i) > 0.5 AND pg_temp.seed_hash(\(seed), 20, i) % 2 = 0 AS settled,
                        \(asOf)::timestamptz - pg_temp.seed_unit(\(seed), 19, i) * interval '365 days' AS created) AS chosen,
                    LATERAL generate_series(0, parts - 1) AS k
                """
            ),
            (
                "dues",
                """
                INSERT INTO dues (id, community_id, name, amount, due_date, created_by, created_at, currency)
                SELECT pg_temp.seed_id(\(seed), 'dues', i * \(d) + k), pg_temp.seed_id(\(seed), 'community', i), 'Season fee ' || (k + 1),
                    2500 * (k + 1), (\(asOf)::timestamptz + (k * 90 - 30) * interval '1 day')::date, pg_temp.seed_user(\(seed), i, 0, \(m), \(u)),
                    \(asOf)::timestamptz - interval '120 days', 'USD'
                FROM generate_series(0, \(n) - 1) AS i, generate_series(0, \(d) - 1) AS k
                """
            ),
            (
                "dues_payments",
                """
                INSERT INTO dues_payments (id, dues_id, user_id, amount_paid, paid_at, recorded_by, payment_method, community_id)
                SELECT pg_temp.seed_id(\(seed), 'dues_payment', (i * \(d) + k) * \(m) + s), pg_temp.seed_id(\(seed), 'dues', i * \(d) + k),
                    pg_temp.seed_user(\(seed), i, s, \(m), \(u)), CASE WHEN s % 5 = 4 THEN 1000 ELSE 2500 * (k + 1) END,
                    \(asOf)::timestamptz - interval '20 days', pg_temp.seed_user(\(seed), i, 0, \(m), \(u)), 'cash',
                    pg_temp.seed_id(\(seed), 'community', i)
                FROM generate_series(0, \(n) - 1) AS i, generate_series(0, \(d) - 1) AS k, generate_series(0, \(m) - 1) AS s
                WHERE pg_temp.seed_hash(\(seed), 21, (i * \(d) + k) * \(m) + s) % 3 <> 0
                """
            ),
        ]
    }

    /// Checks what the switched-off triggers and foreign keys would have guaranteed; each entry
    /// is a named invariant and the number of rows breaking it (all 0 for a good load). Call it
    /// after `SettlementService.refreshBalancesSnapshot()`: the load writes no balance journal.
    package static func verify(on connection: PostgresConnection) async throws -> [(invariant: String, violations: Int)] {
        let checks: [(String, PostgresQuery)] = [
            (
                "search vectors are what the triggers write",
                """
                SELECT (SELECT count(*) FROM posts r WHERE r.search_vector IS DISTINCT FROM orbit.search_vector(r))
                    + (SELECT count(*) FROM comments r WHERE r.search_vector IS DISTINCT FROM orbit.search_vector(r))
                    + (SELECT count(*) FROM events r WHERE r.search_vector IS DISTINCT FROM orbit.search_vector(r))
                    + (SELECT count(*) FROM transactions r WHERE r.search_vector IS DISTINCT FROM orbit.search_vector(r))
                """
            ),
            (
                "member counts equal a recount",
                """
                SELECT count(*) FROM communities c
                WHERE c.member_count <> (SELECT count(*) FROM members m WHERE m.community_id = c.id AND m.left_at IS NULL)
                """
            ),
            (
                "reaction counts equal a recount",
                """
                SELECT count(*) FROM posts p
                LEFT JOIN (SELECT post_id, jsonb_object_agg(type, n) AS counts
                    FROM (SELECT post_id, type, count(*) AS n FROM reactions GROUP BY 1, 2) AS per_type GROUP BY 1) AS r ON r.post_id = p.id
                WHERE p.reaction_counts <> coalesce(r.counts, '{}')
                """
            ),
            (
                "comment counts equal a recount",
                """
                SELECT count(*) FROM posts p
                LEFT JOIN (SELECT post_id, count(*) AS n FROM comments WHERE deleted_at IS NULL GROUP BY 1) AS c ON c.post_id = p.id
                WHERE p.comment_count <> coalesce(c.n, 0)
                """
            ),
            (
                "splits sum to their transaction's total",
                """
                SELECT count(*) FROM transactions t
                LEFT JOIN (SELECT transaction_id, sum(amount) AS total FROM splits GROUP BY 1) AS s ON s.transaction_id = t.id
                WHERE t.total_amount <> coalesce(s.total, 0)
                """
            ),
            (
                "authors, reacting users, payers and split users are members",
                """
                SELECT (SELECT count(*) FROM posts x WHERE NOT EXISTS
                        (SELECT 1 FROM members m WHERE m.community_id = x.community_id AND m.user_id = x.author_id))
                    + (SELECT count(*) FROM reactions x WHERE NOT EXISTS
                        (SELECT 1 FROM members m WHERE m.community_id = x.community_id AND m.user_id = x.user_id))
                    + (SELECT count(*) FROM transactions x WHERE NOT EXISTS
                        (SELECT 1 FROM members m WHERE m.community_id = x.community_id AND m.user_id = x.paid_by))
                    + (SELECT count(*) FROM splits x WHERE NOT EXISTS
                        (SELECT 1 FROM members m WHERE m.community_id = x.community_id AND m.user_id = x.user_id))
                """
            ),
            (
                "children are in their parent's community",
                """
                SELECT (SELECT count(*) FROM reactions x LEFT JOIN posts p ON p.id = x.post_id AND p.community_id = x.community_id WHERE p.id IS NULL)
                    + (SELECT count(*) FROM comments x LEFT JOIN posts p ON p.id = x.post_id AND p.community_id = x.community_id WHERE p.id IS NULL)
                    + (SELECT count(*) FROM splits x LEFT JOIN transactions t ON t.id = x.transaction_id AND t.community_id = x.community_id
                        WHERE t.id IS NULL)
                    + (SELECT count(*) FROM rsvps x LEFT JOIN events e ON e.id = x.event_id AND e.community_id = x.community_id WHERE e.id IS NULL)
                    + (SELECT count(*) FROM dues_payments x LEFT JOIN dues d ON d.id = x.dues_id AND d.community_id = x.community_id
                        WHERE d.id IS NULL)
                """
            ),
            (
                "announcements are by admins",
                """
                SELECT count(*) FROM posts p WHERE p.is_announcement AND NOT EXISTS
                    (SELECT 1 FROM members m WHERE m.community_id = p.community_id AND m.user_id = p.author_id AND m.role = 'admin')
                """
            ),
            (
                // (Run after SettlementService.refreshBalancesSnapshot: the load writes no journal.)
                "balances equal a recount of the ledger",
                """
                SELECT count(*) FROM balances b
                FULL JOIN (SELECT community_id, user_id, currency, sum(amount) AS balance FROM orbit.balance_entries GROUP BY 1, 2, 3) AS r
                    USING (community_id, user_id, currency)
                WHERE coalesce(b.balance, 0) <> coalesce(r.balance, 0)
                """
            ),
        ]
        var results: [(String, Int)] = []
        for (name, query) in checks {
            results.append((name, Int(try await connection.query(query).single().decode(0, as: Int64.self))))
        }
        return results
    }
}
