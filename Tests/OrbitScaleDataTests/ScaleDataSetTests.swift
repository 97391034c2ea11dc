import Foundation
import OrbitCore
import OrbitPostgres
import OrbitScaleData
import OrbitTestSupport
import Testing

/// The scale data generator (`orbitctl dev seed`), at a size CI can afford.
@Suite("The scale data set (orbitctl dev seed)")
struct ScaleDataSetTests {
    static let small = ScaleDataSet(
        seed: 7, communities: 12, members: 6, posts: 900, reactions: 2500, comments: 400, transactions: 300,
        eventsPerCommunity: 4, rsvpsPerEvent: 2, duesPerCommunity: 2,
        asOf: Date(timeIntervalSince1970: 1_795_392_000)  // 2026-11-23
    )

    /// A digest of every row the generator writes, in id order.
    static func digest(on connection: PostgresConnection) async throws -> String {
        try await connection.query(
            """
            SELECT md5(string_agg(t, '|' ORDER BY t)) FROM (
                SELECT x::text AS t FROM users x UNION ALL SELECT x::text FROM communities x UNION ALL SELECT x::text FROM members x
                UNION ALL SELECT x::text FROM posts x UNION ALL SELECT x::text FROM reactions x UNION ALL SELECT x::text FROM comments x
                UNION ALL SELECT x::text FROM events x UNION ALL SELECT x::text FROM rsvps x UNION ALL SELECT x::text FROM transactions x
                UNION ALL SELECT x::text FROM splits x UNION ALL SELECT x::text FROM dues x UNION ALL SELECT x::text FROM dues_payments x
            ) AS everything
            """
        ).single().decode(0, as: String.self)
    }

    static func load(_ set: ScaleDataSet, into database: TestDatabase) async throws -> ScaleDataSet.Counts {
        try await set.install(into: database.configuration)
    }

    @Test("the same seed loads the same rows and keeps every invariant")
    func theSameSeedLoadsTheSameRowsAndKeepsEveryInvariant() async throws {
        let first = try await withTestDatabase { database in
            let counts = try await Self.load(Self.small, into: database)
            let sizes = Dictionary(uniqueKeysWithValues: counts.rows.map { ($0.table, $0.count) })
            #expect(sizes["users"] == 36 && sizes["communities"] == 12 && sizes["members"] == 72 && sizes["posts"] == 900)
            #expect(sizes["reactions"] == 2500 && sizes["comments"] == 400 && sizes["transactions"] == 300)
            #expect(sizes["events"] == 48 && sizes["rsvps"] == 72 && sizes["dues"] == 24)
            #expect((600...1200).contains(sizes["splits"] ?? 0))
            let violations = try await database.withConnection { try await ScaleDataSet.verify(on: $0) }
            #expect(violations.count == 9)
            for (invariant, count) in violations { #expect(count == 0, "\(invariant)") }
            return try await database.withConnection { try await Self.digest(on: $0) }
        }
        try await withTestDatabase { database in
            _ = try await Self.load(Self.small, into: database)
            #expect(try await database.withConnection { try await Self.digest(on: $0) } == first)

            // Another seed loads beside it; the same seed again is refused and changes nothing.
            var other = Self.small
            other.seed = 8
            _ = try await Self.load(other, into: database)
            let error = await #expect(throws: ServiceError.self) {
                try await database.withConnection { try await Self.small.load(on: $0) }
            }
            #expect(error?.code == .conflict)
            let users = try await database.withConnection { try await $0.query("SELECT count(*) FROM users").single().decode(0, as: Int64.self) }
            #expect(users == 72)
        }
    }

    @Test("verify counts what breaks an invariant, row by row")
    func verifyCountsWhatBreaksAnInvariant() async throws {
        try await withTestDatabase { database in
            _ = try await Self.load(Self.small, into: database)
            // One row breaks each invariant (triggers off, as during a load).
            let broken = try await database.withConnection { connection in
                try await connection.executeScript(
                    """
                    INSERT INTO users (apple_id, email, display_name) VALUES ('outsider', 'outsider@example.com', 'Outsider');
                    SET session_replication_role = replica;
                    UPDATE posts SET comment_count = comment_count + 1 WHERE id = (SELECT min(id::text)::uuid FROM posts);
                    UPDATE posts SET reaction_counts = '{"like": 99}' WHERE id = (SELECT max(id::text)::uuid FROM posts);
                    UPDATE splits SET amount = amount + 1 WHERE id = (SELECT min(id::text)::uuid FROM splits);
                    UPDATE communities SET member_count = 0 WHERE id = (SELECT min(id::text)::uuid FROM communities);
                    UPDATE posts SET is_announcement = TRUE, author_id = (SELECT m.user_id FROM members m
                        WHERE m.community_id = posts.community_id AND m.role = 'member' LIMIT 1)
                        WHERE id = (SELECT min(id::text)::uuid FROM posts WHERE NOT is_announcement AND comment_count = 0);
                    UPDATE transactions SET paid_by = (SELECT id FROM users WHERE apple_id = 'outsider')
                        WHERE id = (SELECT max(id::text)::uuid FROM transactions);
                    UPDATE comments SET community_id = (SELECT max(id::text)::uuid FROM communities)
                        WHERE id = (SELECT min(id::text)::uuid FROM comments WHERE community_id <> (SELECT max(id::text)::uuid FROM communities));
                    RESET session_replication_role;
                    """
                )
                return try await ScaleDataSet.verify(on: connection)
            }
            let found = Dictionary(uniqueKeysWithValues: broken.map { ($0.invariant, $0.violations) })
            #expect(found["comment counts equal a recount"] == 1)
            #expect(found["reaction counts equal a recount"] == 1)
            #expect(found["splits sum to their transaction's total"] == 1)
            #expect(found["member counts equal a recount"] == 1)
            #expect(found["announcements are by admins"] == 1)
            #expect(found["authors, reacting users, payers and split users are members"] == 1)
            #expect(found["children are in their parent's community"] == 1)
            // The split changed without a journal entry, and the payer moved: the ledger disagrees.
            #expect((found["balances equal a recount of the ledger"] ?? 0) > 0)
        }
    }

    @Test(arguments: [
        ScaleDataSet(
            seed: 3, communities: 1, members: 2, posts: 0, reactions: 0, comments: 0, transactions: 0, eventsPerCommunity: 0,
            rsvpsPerEvent: 0, duesPerCommunity: 0, asOf: Date(timeIntervalSince1970: 1_795_392_000)),
        ScaleDataSet(
            seed: 4, communities: 3, members: 3, posts: 5, reactions: 15, comments: 250, transactions: 4, eventsPerCommunity: 1,
            rsvpsPerEvent: 3, duesPerCommunity: 1, asOf: Date(timeIntervalSince1970: 1_795_392_000)),
    ])
    func edgeSizesLoadAndKeepEveryInvariant(set: ScaleDataSet) async throws {
        try await withTestDatabase { database in
            _ = try await Self.load(set, into: database)
            let violations = try await database.withConnection { try await ScaleDataSet.verify(on: $0) }
            for (invariant, count) in violations { #expect(count == 0, "\(invariant)") }
        }
    }

    /// The service layer reads the seeded rows as orbit_app, as it reads its own.
    @Test("the service layer reads the seeded communities as orbit_app")
    func theServiceLayerReadsTheSeededCommunities() async throws {
        try await withTestDatabase { database in
            _ = try await Self.load(Self.small, into: database)
            let pool = database.makePool(maxConnections: 2)
            do {
                let services = OrbitServices(pool: pool)
                let (community, admin) = try await database.withConnection { connection in
                    let row = try await connection.query("SELECT id, created_by FROM communities WHERE name = 'Club 0'").single()
                    return (CommunityID(try row.decode("id", as: UUID.self)), UserID(try row.decode("created_by", as: UUID.self)))
                }
                let page = try await services.feed.page(of: community, as: admin)
                #expect(page.items.count == 20)
                #expect((try await services.members.list(of: community, as: admin)).items.count == 6)
                let balances = try await services.settlements.balances(in: community, as: admin)
                #expect(!balances.isEmpty && balances.reduce(0) { $0 + $1.balance } == 0)
                let dues = (try await services.dues.list(in: community, as: admin)).items
                #expect(dues.count == 2)
                #expect(try await services.dues.report(dues[0].id, as: admin).count == 6)
                let now = Self.small.asOf
                let upcoming = try await services.events.calendar(of: community, from: now, to: now.addingTimeInterval(90 * 86_400), as: admin)
                #expect(upcoming.contains { $0.seriesID != nil })
                await pool.close()
            } catch {
                await pool.close()
                throw error
            }
        }
    }
}
