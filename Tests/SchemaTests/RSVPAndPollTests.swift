import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("RSVPs and poll votes obey their uniqueness rules")
struct RSVPAndPollTests {
    @Test("one RSVP per person per event, also when family_member_id is NULL")
    func oneRSVPPerPerson() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let parent = try await seed.user("parent")
                let community = try await seed.community("Team", creator: parent)
                let event = try await seed.event(community, by: parent)
                let child = try await seed.id("INSERT INTO family_members (user_id, name) VALUES (\(parent), 'Tommy') RETURNING id")
                func rsvp(_ familyMember: UUID?) async throws {
                    try await connection.query(
                        "INSERT INTO rsvps (event_id, user_id, family_member_id, status) VALUES (\(event), \(parent), \(familyMember), 'yes')"
                    )
                }
                try await rsvp(nil)
                try await rsvp(child)
                let duplicateSelf = await #expect(throws: PostgresError.self) { try await rsvp(nil) }
                #expect(duplicateSelf?.isUniqueViolation == true)
                let duplicateChild = await #expect(throws: PostgresError.self) { try await rsvp(child) }
                #expect(duplicateChild?.isUniqueViolation == true)
            }
        }
    }

    @Test("an RSVP's family member belongs to the responding user")
    func familyMemberOfResponder() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let parent = try await seed.user("parent")
                let stranger = try await seed.user("stranger")
                let community = try await seed.community("Team", creator: parent)
                try await seed.member(community, stranger)
                let event = try await seed.event(community, by: parent)
                let child = try await seed.id("INSERT INTO family_members (user_id, name) VALUES (\(parent), 'Tommy') RETURNING id")
                let error = await #expect(throws: PostgresError.self) {
                    try await connection.query(
                        "INSERT INTO rsvps (event_id, user_id, family_member_id, status) VALUES (\(event), \(stranger), \(child), 'no')"
                    )
                }
                #expect(error?.isForeignKeyViolation == true)
            }
        }
    }

    @Test("plus_ones cannot be negative")
    func plusOnes() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let user = try await seed.user("u")
                let community = try await seed.community("Team", creator: user)
                let event = try await seed.event(community, by: user)
                let error = await #expect(throws: PostgresError.self) {
                    try await connection.query("INSERT INTO rsvps (event_id, user_id, status, plus_ones) VALUES (\(event), \(user), 'yes', -1)")
                }
                #expect(error?.isCheckViolation == true)
            }
        }
    }

    private func vote(_ post: UUID, _ user: UUID, _ option: Int, _ connection: PostgresConnection) async throws {
        try await connection.query("INSERT INTO poll_votes (post_id, user_id, option_index) VALUES (\(post), \(user), \(option))")
    }

    @Test("votes only on poll posts and only for options the poll has")
    func votesOnPolls() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let user = try await seed.user("u")
                let community = try await seed.community("Club", creator: user)
                let text = try await seed.post(community, by: user)
                let poll = try await seed.poll(community, by: user, options: ["A", "B"])
                await #expect(throws: PostgresError.self) { try await vote(text, user, 0, connection) }
                await #expect(throws: PostgresError.self) { try await vote(poll, user, 2, connection) }
                await #expect(throws: PostgresError.self) { try await vote(poll, user, -1, connection) }
                try await vote(poll, user, 1, connection)
            }
        }
    }

    @Test("single-choice polls take one vote per user; multiple-choice polls never the same option twice")
    func oneVoteUnlessMultiple() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let user = try await seed.user("u")
                let community = try await seed.community("Club", creator: user)
                let single = try await seed.poll(community, by: user, allowMultiple: false)
                let multiple = try await seed.poll(community, by: user, allowMultiple: true)

                try await vote(single, user, 0, connection)
                let second = await #expect(throws: PostgresError.self) { try await vote(single, user, 1, connection) }
                #expect(second?.isUniqueViolation == true)

                try await vote(multiple, user, 0, connection)
                try await vote(multiple, user, 2, connection)
                let again = await #expect(throws: PostgresError.self) { try await vote(multiple, user, 0, connection) }
                #expect(again?.isUniqueViolation == true)
            }
        }
    }

    @Test("two simultaneous votes of one user on a single-choice poll: exactly one is kept")
    func concurrentSingleChoiceVotes() async throws {
        try await withTestDatabase { database in
            let (user, poll) = try await database.seeding { seed, _ in
                let user = try await seed.user("u")
                let community = try await seed.community("Club", creator: user)
                return (user, try await seed.poll(community, by: user))
            }
            let pool = database.makePool(maxConnections: 3)
            // nil: the vote was kept; otherwise the SQLSTATE it was refused with.
            let outcomes = await withTaskGroup(of: String?.self) { group in
                for option in 0..<3 {
                    group.addTask {
                        do {
                            try await pool.query("INSERT INTO poll_votes (post_id, user_id, option_index) VALUES (\(poll), \(user), \(option))")
                            return nil
                        } catch let error as PostgresError {
                            return error.sqlState ?? "\(error.code)"
                        } catch {
                            return "\(error)"
                        }
                    }
                }
                return await group.reduce(into: [String?]()) { $0.append($1) }
            }
            await pool.close()
            #expect(outcomes.filter { $0 == nil }.count == 1)
            // The others hit the single-choice unique index (23505), not a timeout or another error.
            #expect(outcomes.compactMap { $0 } == ["23505", "23505"], "\(outcomes)")
        }
    }
}
