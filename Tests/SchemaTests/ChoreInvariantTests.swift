import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

/// A family: a parent (the community's admin), their child `kid` (a family member) and a second
/// adult member; a 10-point chore assigned to the kid and the adult.
private struct Household {
    var parent: UUID
    var adult: UUID
    var kid: UUID
    var community: UUID
    var chore: UUID

    static func make(_ seed: Seed) async throws -> Household {
        let parent = try await seed.user("parent")
        let adult = try await seed.user("adult")
        let community = try await seed.community("Home", creator: parent)
        _ = try await seed.member(community, adult)
        let kid = try await seed.id("INSERT INTO family_members (user_id, name) VALUES (\(parent), 'Kid') RETURNING id")
        let chore = try await seed.id(
            "INSERT INTO chores (community_id, title, points, created_by) VALUES (\(community), 'Dishes', 10, \(parent)) RETURNING id")
        try await seed.connection.query("INSERT INTO chore_assignees (chore_id, family_member_id) VALUES (\(chore), \(kid))")
        try await seed.connection.query("INSERT INTO chore_assignees (chore_id, user_id) VALUES (\(chore), \(adult))")
        return Household(parent: parent, adult: adult, kid: kid, community: community, chore: chore)
    }

    /// Gives the kid `points` by an adjustment.
    func give(_ points: Int, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            INSERT INTO points_ledger (community_id, family_member_id, delta, kind, reason, created_by)
            VALUES (\(community), \(kid), \(points), 'adjustment', 'Pocket money', \(parent))
            """)
    }

    func reward(cost: Int, stock: Int? = nil, on connection: PostgresConnection) async throws -> UUID {
        try await connection.value(
            "INSERT INTO rewards (community_id, title, points_cost, stock, created_by) VALUES (\(community), 'Ice cream', \(cost), \(stock), \(parent)) RETURNING id"
        )
    }

    /// The kid's (balance, lifetime earned), and what the ledger sums to.
    func account(on connection: PostgresConnection) async throws -> Points {
        let row = try await connection.query(
            """
            SELECT coalesce((SELECT balance FROM points_accounts WHERE holder_id = \(kid)), 0) AS balance,
                   coalesce((SELECT lifetime_earned FROM points_accounts WHERE holder_id = \(kid)), 0) AS earned,
                   coalesce((SELECT sum(delta) FROM points_ledger WHERE holder_id = \(kid)), 0)::bigint AS ledger
            """
        ).single()
        let (balance, earned, ledger) = try row.decode((Int32, Int32, Int64).self)
        return Points(Int64(balance), Int64(earned), ledger)
    }

    func complete(on connection: PostgresConnection) async throws -> UUID {
        try await connection.value(
            "INSERT INTO chore_completions (chore_id, occurrence_at, family_member_id) SELECT id, created_at, \(kid) FROM chores WHERE id = \(chore) RETURNING id"
        )
    }
}

/// A holder's balance and lifetime earned (from points_accounts) and the sum of their ledger.
private struct Points: Equatable {
    var balance: Int64
    var earned: Int64
    var ledger: Int64

    init(_ balance: Int64, _ earned: Int64, _ ledger: Int64) {
        (self.balance, self.earned, self.ledger) = (balance, earned, ledger)
    }
}

private func checkViolation(_ constraint: String, _ body: () async throws -> Void) async {
    let error = await #expect(throws: PostgresError.self) { try await body() }
    #expect(error?.constraint == constraint, "\(String(describing: error))")
}

@Suite("Chores and points: the database's invariants")
struct ChoreInvariantTests {
    @Test("a child with 100 points and 5 concurrent redemptions of a 30-point reward gets exactly 3")
    func concurrentRedemptions() async throws {
        try await withTestDatabase { database in
            let (home, reward) = try await database.seeding { seed, connection in
                let home = try await Household.make(seed)
                try await home.give(100, on: connection)
                return (home, try await home.reward(cost: 30, on: connection))
            }
            let pool = database.makePool(maxConnections: 5)
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<5 {
                    group.addTask {
                        do {
                            try await pool.query(
                                "INSERT INTO reward_redemptions (reward_id, family_member_id, requested_by) VALUES (\(reward), \(home.kid), \(home.parent))"
                            )
                            return true
                        } catch let error as PostgresError where error.constraint == "points_accounts_balance_not_negative" {
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            await pool.close()
            #expect(outcomes.filter { $0 }.count == 3)
            try await database.withConnection { connection in
                let account = try await home.account(on: connection)
                #expect(account == Points(10, 100, 10))
                let redeemed: Int64 = try await connection.value("SELECT count(*) FROM reward_redemptions WHERE reward_id = \(reward)")
                #expect(redeemed == 3)
            }
        }
    }

    @Test("approving twice credits once; a review is final; a chore credit is unique even written by hand")
    func approvalCreditsOnce() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let home = try await Household.make(seed)
                let completion = try await home.complete(on: connection)
                #expect(try await home.account(on: connection).balance == 0)
                for _ in 0..<2 {
                    try await connection.query(
                        "UPDATE chore_completions SET status = 'approved', reviewed_by = \(home.parent) WHERE id = \(completion)")
                }
                #expect(try await home.account(on: connection) == Points(10, 10, 10))
                await checkViolation("chore_completions_reviewed_once") {
                    try await connection.query("UPDATE chore_completions SET status = 'rejected' WHERE id = \(completion)")
                }
                await checkViolation("chore_completions_reviewed_once") {
                    try await connection.query("UPDATE chore_completions SET status = 'pending' WHERE id = \(completion)")
                }
                await checkViolation("chore_completions_fixed") {
                    try await connection.query("UPDATE chore_completions SET points = 1000 WHERE id = \(completion)")
                }
                let duplicate = await #expect(throws: PostgresError.self) {
                    try await connection.query(
                        """
                        INSERT INTO points_ledger (community_id, family_member_id, delta, kind, completion_id)
                        VALUES (\(home.community), \(home.kid), 10, 'chore', \(completion))
                        """)
                }
                #expect(duplicate?.constraint == "points_ledger_one_credit")
                #expect(try await home.account(on: connection) == Points(10, 10, 10))
            }
        }
    }

    @Test("two parents approving the same completion at once credit it once")
    func concurrentApprovals() async throws {
        try await withTestDatabase { database in
            let (home, completion) = try await database.seeding { seed, connection in
                let home = try await Household.make(seed)
                return (home, try await home.complete(on: connection))
            }
            let pool = database.makePool(maxConnections: 4)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await pool.query(
                            "UPDATE chore_completions SET status = 'approved', reviewed_by = \(home.parent) WHERE id = \(completion)")
                    }
                }
                try await group.waitForAll()
            }
            await pool.close()
            let points = try await database.withConnection { connection in try await home.account(on: connection) }
            #expect(points == Points(10, 10, 10))
        }
    }

    @Test("one completion per occurrence: the second is refused, also when both come at once; a rejection frees it")
    func oneCompletionPerOccurrence() async throws {
        try await withTestDatabase { database in
            let home = try await database.seeding { seed, _ in try await Household.make(seed) }
            let pool = database.makePool(maxConnections: 2)
            let stored = try await withThrowingTaskGroup(of: Bool.self) { group in
                for (user, child) in [(home.adult as UUID?, nil as UUID?), (nil, home.kid)] {
                    group.addTask {
                        do {
                            try await pool.query(
                                """
                                INSERT INTO chore_completions (chore_id, occurrence_at, user_id, family_member_id)
                                SELECT id, created_at, \(user), \(child) FROM chores WHERE id = \(home.chore)
                                """)
                            return true
                        } catch let error as PostgresError where error.constraint == "chore_completions_one_per_occurrence" {
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            await pool.close()
            #expect(stored.filter { $0 }.count == 1)
            try await database.withConnection { connection in
                try await connection.query("UPDATE chore_completions SET status = 'rejected' WHERE chore_id = \(home.chore)")
                _ = try await home.complete(on: connection)
                let count: Int64 = try await connection.value("SELECT count(*) FROM chore_completions WHERE chore_id = \(home.chore)")
                #expect(count == 2)
            }
        }
    }

    @Test("a completion is an assignee's, of an occurrence of a live chore; it takes the chore's points")
    func completionRules() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let home = try await Household.make(seed)
                await checkViolation("chore_completions_by_assignee") {
                    try await connection.query(
                        "INSERT INTO chore_completions (chore_id, occurrence_at, user_id) SELECT id, created_at, \(home.parent) FROM chores WHERE id = \(home.chore)"
                    )
                }
                await checkViolation("chore_completions_occurrence") {
                    try await connection.query(
                        "INSERT INTO chore_completions (chore_id, occurrence_at, family_member_id) VALUES (\(home.chore), now() + interval '1 day', \(home.kid))"
                    )
                }
                try await connection.query("UPDATE chores SET archived_at = now() WHERE id = \(home.chore)")
                await checkViolation("chore_completions_live_chore") { _ = try await home.complete(on: connection) }
                try await connection.query("UPDATE chores SET archived_at = NULL, requires_approval = false, points = 7 WHERE id = \(home.chore)")
                let completion = try await home.complete(on: connection)
                let status: String = try await connection.value("SELECT status FROM chore_completions WHERE id = \(completion)")
                #expect(status == "approved")
                #expect(try await home.account(on: connection) == Points(7, 7, 7))
            }
        }
    }

    @Test(
        "a chore that needs a photo refuses a completion without one, whoever writes; a photo is an image of the chore's community; it never changes")
    func photoProof() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let home = try await Household.make(seed)
                let elsewhere = try await seed.community("Club", creator: home.parent)
                func media(in community: UUID, type: String) async throws -> UUID {
                    try await seed.id(
                        """
                        INSERT INTO media (id, community_id, uploaded_by, type, filename, mime_type, size_bytes, storage_path)
                        SELECT id, \(community), \(home.parent), \(type)::media_type, 'a', 'image/jpeg', 10, \(community)::text || '/' || id || '/a'
                        FROM (SELECT gen_random_uuid() AS id) AS new RETURNING id
                        """)
                }
                let photo = try await media(in: home.community, type: "image")
                let foreign = try await media(in: elsewhere, type: "image")
                let video = try await media(in: home.community, type: "video")
                try await connection.query("UPDATE chores SET requires_photo = true WHERE id = \(home.chore)")
                await checkViolation("chore_completions_photo_required") { _ = try await home.complete(on: connection) }
                func complete(with photo: UUID) async throws -> UUID {
                    try await connection.value(
                        """
                        INSERT INTO chore_completions (chore_id, occurrence_at, family_member_id, photo_media_id)
                        SELECT id, created_at, \(home.kid), \(photo) FROM chores WHERE id = \(home.chore) RETURNING id
                        """)
                }
                await checkViolation("chore_completions_photo_media") { _ = try await complete(with: foreign) }
                await checkViolation("chore_completions_photo_media") { _ = try await complete(with: video) }
                let completion = try await complete(with: photo)
                await checkViolation("chore_completions_fixed") {
                    try await connection.query("UPDATE chore_completions SET photo_media_id = NULL WHERE id = \(completion)")
                }
            }
        }
    }

    @Test("no free points from the past: an occurrence older than the chore's window of when it is recorded is refused, whoever writes")
    func completionWindow() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let home = try await Household.make(seed)
                // A daily chore set 60 days ago, marked done within a window of 7 days.
                try await connection.query(
                    "UPDATE chores SET due_at = now() - interval '60 days', recurrence_rule = 'FREQ=DAILY', completion_window_days = 7 WHERE id = \(home.chore)"
                )
                func complete(daysAgo: Int) async throws {
                    try await connection.query(
                        """
                        INSERT INTO chore_completions (chore_id, occurrence_at, family_member_id)
                        SELECT id, due_at + make_interval(days => 60 - \(Int32(daysAgo))::int), \(home.kid) FROM chores WHERE id = \(home.chore)
                        """)
                }
                try await complete(daysAgo: 0)
                try await complete(daysAgo: 7)
                await checkViolation("chore_completions_within_window") { try await complete(daysAgo: 30) }
                await checkViolation("chore_completions_within_window") { try await complete(daysAgo: 59) }
                // As the app's role, too.
                await checkViolation("chore_completions_within_window") {
                    try await connection.asApp(home.parent) { connection in
                        _ = try await connection.query(
                            """
                            INSERT INTO chore_completions (chore_id, occurrence_at, family_member_id, recorded_by)
                            SELECT id, due_at + interval '1 day', \(home.kid), \(home.parent) FROM chores WHERE id = \(home.chore)
                            """)
                    }
                }
                await checkViolation("chores_completion_window") {
                    try await connection.query("UPDATE chores SET completion_window_days = 32 WHERE id = \(home.chore)")
                }
            }
        }
    }

    @Test("a balance never goes below zero; lifetime earned never decreases; the ledger never changes")
    func balanceAndLifetime() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let home = try await Household.make(seed)
                try await home.give(20, on: connection)
                await checkViolation("points_accounts_balance_not_negative") { try await home.give(-21, on: connection) }
                try await home.give(-5, on: connection)
                #expect(try await home.account(on: connection) == Points(15, 20, 15))
                await checkViolation("points_accounts_lifetime_never_decreases") {
                    try await connection.query("UPDATE points_accounts SET lifetime_earned = 0 WHERE holder_id = \(home.kid)")
                }
                await checkViolation("points_ledger_append_only") {
                    try await connection.query("UPDATE points_ledger SET delta = 1000 WHERE holder_id = \(home.kid)")
                }
                await checkViolation("points_ledger_cause") {
                    try await connection.query(
                        "INSERT INTO points_ledger (community_id, family_member_id, delta, kind) VALUES (\(home.community), \(home.kid), 5, 'adjustment')"
                    )
                }
                #expect(try await home.account(on: connection) == Points(15, 20, 15))
            }
        }
    }

    @Test("points are for the community's members and their children: not for an outsider's child")
    func holdersBelong() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let home = try await Household.make(seed)
                let outsider = try await seed.user("outsider")
                let stranger = try await seed.id("INSERT INTO family_members (user_id, name) VALUES (\(outsider), 'Other') RETURNING id")
                await checkViolation("chores_holder_in_community") {
                    try await connection.query("INSERT INTO chore_assignees (chore_id, family_member_id) VALUES (\(home.chore), \(stranger))")
                }
                await checkViolation("chores_holder_in_community") {
                    try await connection.query(
                        """
                        INSERT INTO points_ledger (community_id, family_member_id, delta, kind, reason)
                        VALUES (\(home.community), \(stranger), 5, 'adjustment', 'x')
                        """)
                }
                let reward = try await home.reward(cost: 1, on: connection)
                await checkViolation("chores_holder_in_community") {
                    try await connection.query("INSERT INTO reward_redemptions (reward_id, family_member_id) VALUES (\(reward), \(stranger))")
                }
            }
        }
    }

    @Test("stock never goes below zero; a cancellation refunds once and gives the stock back; a fulfilled one stays")
    func stockAndRefunds() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let home = try await Household.make(seed)
                try await home.give(50, on: connection)
                let reward = try await home.reward(cost: 10, stock: 1, on: connection)
                let first: UUID = try await connection.value(
                    "INSERT INTO reward_redemptions (reward_id, family_member_id) VALUES (\(reward), \(home.kid)) RETURNING id")
                await checkViolation("reward_redemptions_in_stock") {
                    try await connection.query("INSERT INTO reward_redemptions (reward_id, family_member_id) VALUES (\(reward), \(home.kid))")
                }
                #expect(try await home.account(on: connection) == Points(40, 50, 40))
                try await connection.query("UPDATE reward_redemptions SET status = 'cancelled' WHERE id = \(first)")
                await checkViolation("reward_redemptions_resolved_once") {
                    try await connection.query("UPDATE reward_redemptions SET status = 'requested' WHERE id = \(first)")
                }
                #expect(try await home.account(on: connection) == Points(50, 50, 50))
                let stock: Int32 = try await connection.value("SELECT stock FROM rewards WHERE id = \(reward)")
                #expect(stock == 1)
                let second: UUID = try await connection.value(
                    "INSERT INTO reward_redemptions (reward_id, family_member_id) VALUES (\(reward), \(home.kid)) RETURNING id")
                try await connection.query("UPDATE reward_redemptions SET status = 'fulfilled' WHERE id = \(second)")
                await checkViolation("reward_redemptions_resolved_once") {
                    try await connection.query("UPDATE reward_redemptions SET status = 'cancelled' WHERE id = \(second)")
                }
                #expect(try await home.account(on: connection) == Points(40, 50, 40))
                try await connection.query("UPDATE rewards SET available = false WHERE id = \(reward)")
                await checkViolation("reward_redemptions_available") {
                    try await connection.query("INSERT INTO reward_redemptions (reward_id, family_member_id) VALUES (\(reward), \(home.kid))")
                }
            }
        }
    }
}
