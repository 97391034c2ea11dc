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
        try await withServices(connections: 1) { services, _ in try await body(services) }
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
                try await services.expenses.addExpense(
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
            let expense = try await services.expenses.addExpense(
                in: cast.community, description: "Bus", total: try dollars("10.00"), paidBy: cast.admin, split: .equal([cast.admin, cast.member]),
                as: cast.admin)
            let splits = expense.splits.filter { $0.userID == cast.member }.map(\.id) + expense.splits.filter { $0.userID == cast.admin }.map(\.id)
            try #require(splits.count == 2)
            _ = try await services.settlements.settleSplit(splits[0], via: "cash", as: cast.member)  // prepares the statements
            let cost = try await roundTrips(of: services) { try await services.settlements.settleSplit(splits[1], via: "cash", as: cast.admin) }
            #expect(cost == 2)
        }
    }

    @Test("reads that check membership take two round trips: the check and the reads with the transaction's start, COMMIT")
    func membersReads() async throws {
        try await withOneConnection { services in
            let cast = try await Cast.make(services)
            for index in 0..<3 {
                _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Post \(index)"), as: cast.member)
            }
            // A weekly series with one occurrence moved: the calendar's three reads and the check.
            let start = Date(timeIntervalSince1970: 1_796_144_400)  // 2026-12-01T17:00:00Z
            let series = try await services.events.create(
                in: cast.community, EventDraft(title: "Practice", startsAt: start, recurrenceRule: "FREQ=WEEKLY;COUNT=4"), as: cast.admin)
            _ = try await services.events.update(
                series.id, occurrence: start.addingTimeInterval(7 * 86_400), EventDraft(title: "Practice (gym)"), as: cast.admin)
            let dues = try await services.dues.create(
                in: cast.community, name: "Season", amount: try dollars("50.00"), dueDate: try day("2030-01-31"), as: cast.admin)
            _ = try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("10.00"), as: cast.admin)
            let cursor = try #require(try await services.feed.page(of: cast.community, limit: 2, as: cast.admin).nextCursor)
            let reads: [(name: String, read: () async throws -> Void)] = [
                ("feed page", { _ = try await services.feed.page(of: cast.community, limit: 2, as: cast.admin) }),
                ("next feed page", { _ = try await services.feed.page(of: cast.community, limit: 2, cursor: cursor, as: cast.admin) }),
                ("balances", { _ = try await services.settlements.balances(in: cast.community, as: cast.member) }),
                ("member list", { _ = try await services.members.list(of: cast.community, as: cast.member) }),
                (
                    "dues report",
                    {
                        let report = try await services.dues.report(dues.id, as: cast.member)
                        #expect(report.first { $0.userID == cast.member }?.amountPaid == 1_000)
                    }
                ),
                (
                    "calendar",
                    {
                        let december = try await services.events.calendar(
                            of: cast.community, from: start, to: start.addingTimeInterval(30 * 86_400), as: cast.member)
                        #expect(december.map(\.title) == ["Practice", "Practice (gym)", "Practice", "Practice"])
                    }
                ),
            ]
            for (name, read) in reads {
                try await read()  // prepares the statements
                let trips = try await roundTrips(of: services, read)
                #expect(trips == 2, "\(name): \(trips) round trips")
            }
        }
    }
}
