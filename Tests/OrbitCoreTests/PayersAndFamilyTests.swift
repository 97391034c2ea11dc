import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Expenses paid by several people, and shares for family members")
struct PayersAndFamilyTests {
    private func balance(_ services: OrbitServices, _ cast: Cast, _ user: UserID) async throws -> Int64 {
        try await services.settlements.balances(in: cast.community, as: cast.member).first { $0.userID == user }?.balance ?? 0
    }

    @Test("a dinner paid by two: each payer is credited what they paid; shares as usual; wrong payers are refused")
    func severalPayers() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let third = try await services.users.create(email: "t@example.com", displayName: "Third").id
            _ = try await services.members.add(third, to: cast.community, as: cast.admin)
            let people = [cast.admin, cast.member, third]
            let dinner = try await services.expenses.addExpense(
                in: cast.community, description: "Dinner", total: try dollars("100.00"), payers: [cast.admin: 6000, cast.member: 4000],
                split: .equal(people), as: third)
            #expect(dinner.paidBy == cast.admin)  // who paid most
            #expect(
                dinner.payers == [Payer(userID: cast.admin, amount: 6000), Payer(userID: cast.member, amount: 4000)].sorted { $0.userID < $1.userID })
            let share = Dictionary(uniqueKeysWithValues: dinner.splits.map { ($0.userID, $0.amount) })
            #expect(try await balance(services, cast, cast.admin) == 6000 - share[cast.admin]!)
            #expect(try await balance(services, cast, cast.member) == 4000 - share[cast.member]!)
            #expect(try await balance(services, cast, third) == -share[third]!)
            #expect(try await services.expenses.expense(dinner.id, as: third) == dinner)
            let listed = try await services.expenses.expenses(in: cast.community, filter: ExpenseFilter(member: cast.member), as: third)
            #expect(listed.items.map(\.id) == [dinner.id])

            // Refused, with nothing written: amounts that do not add up, a paid_by who did not pay, a non-member.
            await #expect(throws: ServiceError.invalidInput(field: "payers", reason: "add up to 9000 minor units, not the total 10000")) {
                try await services.expenses.addExpense(
                    in: cast.community, description: "X", total: try dollars("100.00"), payers: [cast.admin: 5000, cast.member: 4000],
                    split: .equal(people), as: third)
            }
            await #expect(throws: ServiceError.invalidInput(field: "paid_by", reason: "must be one of the payers")) {
                try await services.expenses.addExpense(
                    in: cast.community, description: "X", total: try dollars("100.00"), paidBy: third,
                    payers: [cast.admin: 5000, cast.member: 5000], split: .equal(people), as: third)
            }
            await #expect(throws: ServiceError.self) {
                try await services.expenses.addExpense(
                    in: cast.community, description: "X", total: try dollars("100.00"), payers: [cast.admin: 5000, cast.outsider: 5000],
                    split: .equal(people), as: third)
            }
            #expect(try await services.expenses.expenses(in: cast.community, as: third).items.count == 1)

            // A new total needs the payers again; new payers replace them; one payer is paid_by alone.
            await #expect(throws: ServiceError.self) {
                try await services.expenses.updateExpense(dinner.id, total: try dollars("120.00"), as: cast.admin)
            }
            let more = try await services.expenses.updateExpense(
                dinner.id, total: try dollars("120.00"), payers: [cast.member: 2000, third: 10000], as: cast.admin)
            #expect(more.paidBy == third && more.payers.map(\.amount).reduce(0, +) == 12000)
            let newShare = Dictionary(uniqueKeysWithValues: more.splits.map { ($0.userID, $0.amount) })
            #expect(try await balance(services, cast, cast.admin) == -newShare[cast.admin]!)
            #expect(try await balance(services, cast, third) == 10000 - newShare[third]!)
            let alone = try await services.expenses.updateExpense(dinner.id, paidBy: cast.member, as: cast.admin)
            #expect(alone.payers == [Payer(userID: cast.member, amount: 12000)])
            #expect(try await balance(services, cast, cast.member) == 12000 - newShare[cast.member]!)
            let all = try await services.settlements.balances(in: cast.community, as: cast.member)
            #expect(all.map(\.balance).reduce(0, +) == 0)
        }
    }

    @Test("a child's share is owed by their parent and shown as theirs; a family member of no member is refused")
    func familyShares() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let tim = try await services.family.add(name: "Tim", as: cast.member)
            let stray = try await services.family.add(name: "Stray", as: cast.outsider)
            let tickets = try await services.expenses.addExpense(
                in: cast.community, description: "Zoo tickets", total: try dollars("30.00"), paidBy: cast.admin,
                split: .equal([.user(cast.admin), .user(cast.member), .familyMember(tim.id)]), as: cast.admin)
            let forTim = try #require(tickets.splits.first { $0.familyMemberID == tim.id })
            #expect(forTim.userID == cast.member && forTim.familyMemberName == "Tim" && forTim.amount == 1000)
            #expect(try await balance(services, cast, cast.member) == -2000)
            #expect(try await services.expenses.expense(tickets.id, as: cast.admin).splits == tickets.splits)

            await #expect(throws: ServiceError.self) {
                try await services.expenses.addExpense(
                    in: cast.community, description: "X", total: try dollars("10.00"), paidBy: cast.admin,
                    split: .equal([.user(cast.admin), .familyMember(stray.id)]), as: cast.admin)
            }
            // Shares by weight count a child like anyone; an edit can start from what was entered.
            let edited = try await services.expenses.updateExpense(
                tickets.id, split: .shares([.user(cast.member): 2, .familyMember(tim.id): 1]), as: cast.admin)
            #expect(edited.splits.map(\.amount).sorted() == [1000, 2000])
            #expect(try await balance(services, cast, cast.member) == -3000)
            // Removing Tim leaves his share with his parent.
            try await services.family.remove(tim.id, as: cast.member)
            #expect(try await services.expenses.expense(tickets.id, as: cast.admin).splits.allSatisfy { $0.familyMemberID == nil })
            #expect(try await balance(services, cast, cast.member) == -3000)
        }
    }

    /// An away game tomorrow: the admin comes with a plus-one (2 heads), the member with Tim (1 + 1,
    /// for Tim), a third member says no.
    static func awayGame(_ services: OrbitServices, _ cast: Cast) async throws -> (third: UserID, tim: FamilyMember, game: Event) {
        let third = try await services.users.create(email: "t@example.com", displayName: "Third").id
        _ = try await services.members.add(third, to: cast.community, as: cast.admin)
        let tim = try await services.family.add(name: "Tim", as: cast.member)
        let game = try await services.events.create(
            in: cast.community, EventDraft(title: "Away game", startsAt: Date().addingTimeInterval(86_400)), as: cast.admin)
        _ = try await services.events.rsvp(game.id, status: .yes, plusOnes: 1, as: cast.admin)  // 2 heads
        _ = try await services.events.rsvp(game.id, status: .yes, as: cast.member)  // 1
        _ = try await services.events.rsvp(game.id, status: .yes, familyMember: tim.id, as: cast.member)  // 1, for Tim
        _ = try await services.events.rsvp(game.id, status: .no, as: third)
        return (third, tim, game)
    }

    @Test("an away game charged to who came: per head, plus-ones and children to their parent, the event linked; weekly practice by occurrence")
    func attendanceFees() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let (third, tim, game) = try await Self.awayGame(services, cast)
            let bus = try await services.expenses.chargeAttendees(of: game.id, total: try dollars("120.00"), as: cast.admin)
            #expect(bus.linkedEventID == game.id && bus.description == "Away game (attendance)" && bus.paidBy == cast.admin)
            let shares = Dictionary(uniqueKeysWithValues: bus.splits.map { ($0.participant, $0.amount) })
            #expect(shares == [.user(cast.admin): 6000, .user(cast.member): 3000, .familyMember(tim.id): 3000])
            #expect(try await balance(services, cast, cast.member) == -6000)
            #expect(try await balance(services, cast, third) == 0)

            // A series is charged by occurrence; an occurrence nobody came to is refused.
            let practice = try await services.events.create(
                in: cast.community,
                EventDraft(title: "Practice", startsAt: Date(timeIntervalSince1970: 1_893_520_800), recurrenceRule: "FREQ=WEEKLY;COUNT=4"),
                as: cast.admin)
            let first = Date(timeIntervalSince1970: 1_893_520_800)
            await #expect(throws: ServiceError.self) {
                try await services.expenses.chargeAttendees(of: practice.id, total: try dollars("10.00"), as: cast.admin)
            }
            await #expect(throws: ServiceError.self) {
                try await services.expenses.chargeAttendees(of: practice.id, occurrence: first, total: try dollars("10.00"), as: cast.admin)
            }
            _ = try await services.events.rsvp(practice.id, occurrence: first, status: .yes, as: third)
            let hall = try await services.expenses.chargeAttendees(
                of: practice.id, occurrence: first, description: "Hall", total: try dollars("10.00"), as: cast.admin)
            #expect(hall.splits.map(\.userID) == [third] && hall.linkedEventID != practice.id)
        }
    }

    @Test("dues per attendee: owed by who came only, per head (plus-ones and children to who answered); payments, edits and notices follow")
    func attendanceDues() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let (third, tim, game) = try await Self.awayGame(services, cast)
            let refused = await serviceError { try await services.dues.chargeAttendees(of: game.id, perHead: try dollars("15.00"), as: cast.member) }
            #expect(refused?.code == .forbidden)

            let dues = try await services.dues.chargeAttendees(of: game.id, perHead: try dollars("15.00"), as: cast.admin)
            #expect(dues.linkedEventID == game.id && dues.name == "Away game (attendance)" && dues.amount == 1500)
            let report = Dictionary(uniqueKeysWithValues: try await services.dues.report(dues.id, as: cast.member).map { ($0.userID, $0.amountDue) })
            #expect(report == [cast.admin: 3000, cast.member: 3000])

            // Who did not come owes nothing; a payment is at most amount × heads less what was paid.
            let notOwed = await serviceError {
                try await services.dues.recordPayment(to: dues.id, by: third, amount: try dollars("15.00"), as: cast.admin)
            }
            #expect(notOwed?.code == .conflict)
            _ = try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("25.00"), as: cast.admin)
            let over = await serviceError {
                try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("5.01"), as: cast.admin)
            }
            #expect(over?.code == .conflict)
            // 25.00 paid for 2 heads: the amount per head cannot go below 12.50.
            let tooLow = await serviceError { try await services.dues.update(dues.id, amount: try dollars("12.49"), as: cast.admin) }
            #expect(tooLow?.code == .conflict)
            _ = try await services.dues.update(dues.id, amount: try dollars("12.50"), as: cast.admin)
            let paid = try await services.dues.report(dues.id, as: cast.admin).first { $0.userID == cast.member }
            #expect(paid?.status == .paid && paid?.amountDue == 2500)

            // Only who owes them is told about them.
            let thirdsNotices = try await services.notifications.list(as: third).items
            #expect(!thirdsNotices.contains { $0.data.contains(dues.id.description) })
            #expect(try await services.notifications.list(as: cast.member).items.contains { $0.data.contains(dues.id.description) })
        }
    }

    @Test("money's history: creating, editing, settling and deleting are recorded with who and before/after, for every member")
    func history() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let lunch = try await services.expenses.addExpense(
                in: cast.community, description: "Lunch", total: try dollars("20.00"), paidBy: cast.admin,
                split: .equal([cast.admin, cast.member]), as: cast.member)
            _ = try await services.expenses.updateExpense(lunch.id, description: "Team lunch", total: try dollars("30.00"), as: cast.admin)
            let split = try #require(try await services.expenses.expense(lunch.id, as: cast.member).splits.first { $0.userID == cast.member })
            try await services.settlements.settleSplit(split.id, via: "cash", as: cast.member)
            try await services.expenses.deleteExpense(lunch.id, as: cast.admin)
            let settlement = try await services.settlements.recordSettlement(
                in: cast.community, from: cast.member, to: cast.admin, amount: try dollars("5.00"), as: cast.member)

            let history = try await services.expenses.history(in: cast.community, as: cast.member).items
            #expect(history.map(\.action) == [.created, .deleted, .settled, .edited, .created])
            #expect(history.map(\.actorID) == [cast.member, cast.admin, cast.member, cast.admin, cast.member])
            #expect(history[0].entity == "settlement" && history[0].entityID == settlement.id.uuid && history[0].before == nil)
            let edit = history[3]
            #expect(edit.before?.description == "Lunch" && edit.before?.totalAmount == 2000)
            #expect(edit.after?.description == "Team lunch" && edit.after?.totalAmount == 3000)
            #expect(edit.after?.splits.map(\.amount) == [1500, 1500])
            #expect(history[2].before?.splits.contains { $0.isSettled } == false && history[2].after?.splits.contains { $0.isSettled } == true)
            #expect(history[1].before?.deleted == false && history[1].after?.deleted == true)
            let one = try await services.expenses.history(in: cast.community, transaction: lunch.id, limit: 2, as: cast.admin)
            #expect(one.items.map(\.action) == [.deleted, .settled] && one.nextCursor != nil)
            await #expect(throws: ServiceError.self) { try await services.expenses.history(in: cast.community, as: cast.outsider) }
        }
    }

    @Test("dues in money's history: created, changed, paid (before and after what each member paid) and deactivated, for every member")
    func duesHistory() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let dues = try await services.dues.create(
                in: cast.community, name: "Season", amount: try dollars("40.00"), dueDate: try CivilDate.parse("2030-03-01", field: "d"),
                as: cast.admin)
            _ = try await services.dues.update(dues.id, amount: try dollars("45.00"), as: cast.admin)
            _ = try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("20.00"), as: cast.admin)
            _ = try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("5.00"), as: cast.admin)
            _ = try await services.dues.deactivate(dues.id, as: cast.admin)

            let history = try await services.expenses.history(in: cast.community, dues: dues.id, as: cast.member).items
            #expect(history.map(\.action) == [.edited, .paid, .paid, .edited, .created])
            #expect(history.allSatisfy { $0.entity == "dues" && $0.entityID == dues.id.uuid && $0.actorID == cast.admin })
            #expect(history[4].before == nil && history[4].after?.description == "Season" && history[4].after?.totalAmount == 4000)
            #expect(history[3].before?.totalAmount == 4000 && history[3].after?.totalAmount == 4500)
            #expect(history[2].before?.payers == [] && history[2].after?.payers == [Payer(userID: cast.member, amount: 2000)])
            #expect(history[1].before?.payers == [Payer(userID: cast.member, amount: 2000)])
            #expect(history[1].after?.payers == [Payer(userID: cast.member, amount: 2500)])
            #expect(history[0].before?.deleted == false && history[0].after?.deleted == true && history[0].after?.paidBy == nil)
            #expect(try await services.expenses.history(in: cast.community, as: cast.member).items.count == 5)
        }
    }
}
