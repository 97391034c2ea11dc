import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Real concurrency against the invariants money and memberships rely on. Each race
/// runs several rounds; every round checks the invariant.
@Suite("Races against the invariants of money and memberships")
struct RaceTests {
    static let rounds = 5

    /// Runs `body` for each index concurrently and collects what each returned or threw.
    func race<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) async throws -> T) async -> [Result<T, any Error>] {
        await withTaskGroup(of: Result<T, any Error>.self) { group in
            for index in 0..<count {
                group.addTask {
                    do { return .success(try await body(index)) } catch { return .failure(error) }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    func count(_ sql: PostgresQuery, _ database: TestDatabase) async throws -> Int {
        Int(try await database.withConnection { try await $0.query(sql).single().decode(0, as: Int64.self) })
    }

    @Test("an invite with 3 uses redeemed by 10 people at once admits exactly 3")
    func anInviteWith3UsesRedeemedBy() async throws {
        try await withServices { services, database in
            let admin = try await services.users.create(email: "admin@example.com", displayName: "Admin").id
            var people: [UserID] = []
            for index in 0..<10 { people.append(try await services.users.create(email: "p\(index)@example.com", displayName: "P\(index)").id) }
            let joiners = people
            for round in 0..<Self.rounds {
                let community = try await services.communities.create(name: "Club \(round)", as: admin).id
                let invite = try await services.invites.create(to: community, maxUses: 3, as: admin)
                let results = await race(10) { try await services.invites.redeem(try InviteCode.parse(invite.code), as: joiners[$0]) }
                let admitted = results.filter { if case .success = $0 { true } else { false } }.count
                #expect(admitted == 3)
                for case .failure(let error) in results { #expect(error is ServiceError, "\(error)") }
                let members = try await services.communities.get(community, as: admin).memberCount
                #expect(members == 4)
                let active = try await count("SELECT count(*) FROM members WHERE community_id = \(community) AND left_at IS NULL", database)
                #expect(active == 4)
            }
        }
    }

    @Test("dues payments that together would overpay: the total paid never exceeds what is due")
    func duesPaymentsThatTogetherWouldOverpayThe() async throws {
        try await withServices { services, database in
            let admin = try await services.users.create(email: "admin@example.com", displayName: "Admin").id
            let payer = try await services.users.create(email: "payer@example.com", displayName: "Payer").id
            let community = try await services.communities.create(name: "Club", as: admin).id
            _ = try await services.members.add(payer, to: community, as: admin)
            for round in 0..<Self.rounds {
                let dues = try await services.dues.create(
                    in: community, name: "Season \(round)", amount: try dollars("50.00"), dueDate: try day("2030-01-31"), as: admin)
                let results = await race(5) { _ in
                    try await services.dues.recordPayment(to: dues.id, by: payer, amount: try dollars("20.00"), as: admin)
                }
                let accepted = results.filter { if case .success = $0 { true } else { false } }.count
                #expect(accepted == 2)
                for case .failure(let error) in results { #expect((error as? ServiceError)?.code == .conflict, "\(error)") }
                let paid = try await count("SELECT coalesce(sum(amount_paid), 0) FROM dues_payments WHERE dues_id = \(dues.id)", database)
                #expect(paid == 4000)
            }
        }
    }

    @Test("an event removed between an edit's checks and its write: the edit runs again and answers 404, never a 500")
    func eventRemovedDuringAnEdit() async throws {
        try await withServices { services, database in
            let admin = try await services.users.create(email: "admin@example.com", displayName: "Admin").id
            let community = try await services.communities.create(name: "Club", as: admin).id
            let event = try await services.events.create(
                in: community, EventDraft(title: "Game", startsAt: Date().addingTimeInterval(86_400)), as: admin
            ).id
            // Another transaction holds the event's row: the edit's checks read it (a read does not
            // wait), its UPDATE waits; the row is then removed (as purging a deleted community does).
            let holder = try await database.connect()
            try await holder.executeScript("BEGIN")
            try await holder.query("SELECT id FROM events WHERE id = \(event) FOR UPDATE")
            let edit = Task { try await services.events.update(event, EventDraft(title: "Renamed"), as: admin) }
            try await database.withConnection { observer in
                while try await observer.query(
                    "SELECT FROM pg_stat_activity WHERE datname = current_database() AND \(holder.backendPID) = ANY(pg_blocking_pids(pid))"
                ).count == 0 {
                    await Task.yield()
                }
            }
            try await holder.query("DELETE FROM events WHERE id = \(event)")
            try await holder.executeScript("COMMIT")
            await holder.close()
            let error = await #expect(throws: ServiceError.self) { try await edit.value }
            #expect(error?.code == .notFound, "\(String(describing: error))")
        }
    }

    @Test("ten RSVPs of one person at once leave one answer")
    func tenRSVPsOfOnePersonAtOnce() async throws {
        try await withServices { services, database in
            let admin = try await services.users.create(email: "admin@example.com", displayName: "Admin").id
            let community = try await services.communities.create(name: "Club", as: admin).id
            for round in 0..<Self.rounds {
                let event = try await services.events.create(
                    in: community, EventDraft(title: "Game \(round)", startsAt: Date().addingTimeInterval(86_400)), as: admin
                ).id
                let statuses: [RSVPStatus] = [.yes, .no, .maybe]
                let results = await race(10) { try await services.events.rsvp(event, status: statuses[$0 % 3], as: admin) }
                for case .failure(let error) in results { Issue.record(error, "an RSVP failed") }
                let rows = try await count("SELECT count(*) FROM rsvps WHERE event_id = \(event)", database)
                #expect(rows == 1)
            }
        }
    }

    @Test("two admins demoting each other at once leave an admin")
    func twoAdminsDemotingEachOtherAtOnce() async throws {
        try await withServices { services, database in
            let first = try await services.users.create(email: "first@example.com", displayName: "First").id
            let second = try await services.users.create(email: "second@example.com", displayName: "Second").id
            for round in 0..<Self.rounds {
                let community = try await services.communities.create(name: "Club \(round)", as: first).id
                _ = try await services.members.add(second, to: community, role: .admin, as: first)
                let results = await race(2) { index in
                    index == 0
                        ? try await services.members.setRole(.member, of: second, in: community, as: first)
                        : try await services.members.setRole(.member, of: first, in: community, as: second)
                }
                for case .failure(let error) in results {
                    #expect([.conflict, .forbidden].contains((error as? ServiceError)?.code), "\(error)")
                }
                let admins = try await count(
                    "SELECT count(*) FROM members WHERE community_id = \(community) AND role = 'admin' AND left_at IS NULL", database
                )
                #expect(admins == 1)
            }
        }
    }

    @Test("concurrent edits of one expense: both apply in some order and the splits add up to the total")
    func concurrentEditsOfOneExpenseBothApply() async throws {
        try await withServices { services, database in
            let admin = try await services.users.create(email: "admin@example.com", displayName: "Admin").id
            let member = try await services.users.create(email: "member@example.com", displayName: "Member").id
            let community = try await services.communities.create(name: "Club", as: admin).id
            _ = try await services.members.add(member, to: community, as: admin)
            for round in 0..<Self.rounds {
                let expense = try await services.expenses.addExpense(
                    in: community, description: "Balls \(round)", total: try dollars("30.00"), paidBy: admin, split: .equal([admin, member]),
                    as: admin
                ).id
                let results = await race(4) { index in
                    switch index {
                    case 0: try await services.expenses.updateExpense(expense, total: try dollars("40.00"), as: admin)
                    case 1: try await services.expenses.updateExpense(expense, category: .food, as: admin)
                    case 2: try await services.expenses.updateExpense(expense, description: "Balls and pumps", as: admin)
                    default: try await services.expenses.updateExpense(expense, split: .shares([admin: 1, member: 2]), as: admin)
                    }
                }
                for case .failure(let error) in results { Issue.record(error, "an edit failed") }
                let final = try await services.expenses.expense(expense, as: admin)
                #expect(final.splits.map(\.amount).reduce(0, +) == final.totalAmount)
                #expect(final.category == .food)
                #expect(final.description == "Balls and pumps")
                #expect(final.totalAmount == 4000)
                let sums = try await count(
                    "SELECT count(*) FROM transactions t WHERE t.id = \(expense) AND t.total_amount = (SELECT sum(amount) FROM splits WHERE transaction_id = t.id)",
                    database
                )
                #expect(sums == 1)
            }
        }
    }
}
