import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Round trips of the writes, and of the feed page")
struct RoundTripTests {
    /// The services on a pool of one connection, so that every call after the first finds its
    /// statements already prepared there.
    private func withOneConnection(_ body: (OrbitServices) async throws -> Void) async throws {
        try await withTestDatabase { database in
            let pool = database.makePool(maxConnections: 1)
            do {
                try await body(OrbitServices(pool: pool))
                await pool.close()
            } catch {
                await pool.close()
                throw error
            }
        }
    }

    /// The round trips `body` costs on `services`' pool.
    private func roundTrips(of services: OrbitServices, _ body: () async throws -> some Any) async throws -> Int {
        let before = services.pool.roundTrips
        _ = try await body()
        return services.pool.roundTrips - before
    }

    @Test("adding an expense takes two round trips (the checked write with its splits, COMMIT), whatever the number of splits")
    func addExpense() async throws {
        try await withOneConnection { services in
            let cast = try await Cast.make(services)
            var people = [cast.admin, cast.member]
            for index in 1...4 {
                let user = try await services.users.create(email: "p\(index)@example.com", displayName: "Person \(index)").id
                _ = try await services.members.add(user, to: cast.community, as: cast.admin)
                people.append(user)
            }
            func add(splitAmong split: [UserID]) async throws -> Expense {
                try await services.finances.addExpense(
                    in: cast.community, description: "Kit", total: try dollars("60.00"), paidBy: cast.admin, split: .equal(split),
                    as: cast.member)
            }
            _ = try await add(splitAmong: people)  // prepares the statements
            let two = try await roundTrips(of: services) { try await add(splitAmong: Array(people.prefix(2))) }
            let six = try await roundTrips(of: services) { try await add(splitAmong: people) }
            #expect(two == 2)
            #expect(six == 2)
        }
    }

    @Test("settling a split takes two round trips: the checked update with the expense read back, COMMIT")
    func settleSplit() async throws {
        try await withOneConnection { services in
            let cast = try await Cast.make(services)
            let expense = try await services.finances.addExpense(
                in: cast.community, description: "Bus", total: try dollars("10.00"), paidBy: cast.admin, split: .equal([cast.admin, cast.member]),
                as: cast.admin)
            let splits = expense.splits.filter { $0.userID == cast.member }.map(\.id) + expense.splits.filter { $0.userID == cast.admin }.map(\.id)
            try #require(splits.count == 2)
            _ = try await services.finances.settleSplit(splits[0], via: "cash", as: cast.member)  // prepares the statements
            let cost = try await roundTrips(of: services) { try await services.finances.settleSplit(splits[1], via: "cash", as: cast.admin) }
            #expect(cost == 2)
        }
    }

    @Test(
        "a feed page (first or later), the balances and the member list take two round trips: the membership check and the read with the transaction's start, COMMIT"
    )
    func membersReads() async throws {
        try await withOneConnection { services in
            let cast = try await Cast.make(services)
            for index in 0..<3 {
                _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Post \(index)"), as: cast.member)
            }
            let first = try await services.feed.page(of: cast.community, limit: 2, as: cast.admin)  // prepares the statements
            let cursor = try #require(first.nextCursor)
            _ = try await services.feed.page(of: cast.community, limit: 2, cursor: cursor, as: cast.admin)
            #expect(try await roundTrips(of: services) { try await services.feed.page(of: cast.community, limit: 2, as: cast.admin) } == 2)
            #expect(
                try await roundTrips(of: services) { try await services.feed.page(of: cast.community, limit: 2, cursor: cursor, as: cast.admin) } == 2
            )
        }
    }
}
