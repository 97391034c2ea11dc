import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Expenses: splits and edits, several payers, charges to who came, money's history, dates")
struct ExpenseTests: MoneyScenarios {
    @Test("exact, percent and share splits; editing replaces splits; deleting drops the expense from balances")
    func splitTypesAndEdits() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let exact = try await services.expenses.addExpense(
                in: cast.community, description: "Balls", total: try dollars("30.00"), paidBy: cast.member,
                split: .exact([cast.admin: 1000, cast.member: 2000]), as: cast.member
            )
            #expect(exact.splits.map(\.amount).sorted() == [1000, 2000])
            let percent = try await services.expenses.addExpense(
                in: cast.community, description: "Bus", total: try dollars("10.00"), paidBy: cast.admin,
                split: .percent([cast.admin: 3333, cast.member: 6667]),
                as: cast.admin
            )
            #expect(percent.splits.map(\.amount).reduce(0, +) == 1000)
            let shares = try await services.expenses.addExpense(
                in: cast.community, description: "Kit", total: try dollars("10.00"), paidBy: cast.admin,
                split: .shares([cast.admin: 1, cast.member: 3]),
                as: cast.admin
            )
            #expect(shares.splits.map(\.amount).sorted() == [250, 750])
            let wrong = await serviceError {
                try await services.expenses.addExpense(
                    in: cast.community, description: "X", total: try dollars("10.00"), paidBy: cast.admin, split: .exact([cast.admin: 500]),
                    as: cast.admin
                )
            }
            #expect(wrong?.code == .invalidInput)
            let outsider = await serviceError {
                try await services.expenses.addExpense(
                    in: cast.community, description: "X", total: try dollars("1.00"), paidBy: cast.outsider, split: .equal([cast.outsider]),
                    as: cast.outsider
                )
            }
            #expect(outsider?.code == .notFound)
            let strangerInSplit = await serviceError {
                try await services.expenses.addExpense(
                    in: cast.community, description: "X", total: try dollars("1.00"), paidBy: cast.admin, split: .equal([cast.admin, cast.outsider]),
                    as: cast.admin
                )
            }
            // Well-formed, refused by the community's state: 409, naming the field.
            #expect(strangerInSplit?.code == .conflict && strangerInSplit?.field == "user")

            let edited = try await services.expenses.updateExpense(
                exact.id, total: try dollars("31.00"), split: .equal([cast.admin, cast.member]), as: cast.member)
            #expect(edited.totalAmount == 3100 && edited.splits.map(\.amount) == [1550, 1550])
            let notYours = await serviceError { try await services.expenses.updateExpense(percent.id, description: "mine", as: cast.member) }
            #expect(notYours?.code == .forbidden)
            try await services.expenses.deleteExpense(exact.id, as: cast.admin)
            let balances = try await services.settlements.balances(in: cast.community, as: cast.admin)
            #expect(balances.map(\.balance).reduce(0, +) == 0)
            let adminBalance = balances.first(where: { $0.userID == cast.admin })?.balance
            #expect(adminBalance == Int64((1000 - 333) + (1000 - 250)))
        }
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

    @Test("undo: a deleted expense or settlement is restored as it was by its creator or an admin for 30 days, and money's history says who")
    func restore() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            let expense = try await services.expenses.addExpense(
                in: cast.community, description: "Pizza", total: try dollars("20.00"), paidBy: cast.member, split: .equal([cast.admin, cast.member]),
                as: cast.member)
            let before = try await services.settlements.balances(in: cast.community, as: cast.member)
            try await services.expenses.deleteExpense(expense.id, as: cast.member)
            #expect(try await services.settlements.balances(in: cast.community, as: cast.member).isEmpty)
            #expect(await serviceError { try await services.expenses.restoreExpense(expense.id, as: cast.outsider) }?.code == .notFound)

            let restored = try await services.expenses.restoreExpense(expense.id, as: cast.member)
            #expect(restored.id == expense.id && restored.splits == expense.splits && restored.totalAmount == expense.totalAmount)
            #expect(try await services.settlements.balances(in: cast.community, as: cast.member) == before)
            #expect(await serviceError { try await services.expenses.restoreExpense(expense.id, as: cast.member) }?.code == .conflict)
            let history = try await services.expenses.history(in: cast.community, transaction: expense.id, as: cast.admin).items
            #expect(history.map(\.action) == [.restored, .deleted, .created])
            #expect(history.first?.actorID == cast.member && history.first?.before?.deleted == true && history.first?.after?.deleted == false)

            // Someone else's: an admin may, a plain member may not.
            let settlement = try await services.settlements.recordSettlement(
                in: cast.community, from: cast.admin, to: cast.member, amount: try dollars("10.00"), as: cast.admin)
            try await services.expenses.deleteExpense(settlement.id, as: cast.admin)
            #expect(await serviceError { try await services.expenses.restoreExpense(settlement.id, as: cast.member) }?.code == .forbidden)
            #expect(try await services.expenses.restoreExpense(settlement.id, as: cast.admin).type == .settlement)
            #expect(try await services.settlements.balances(in: cast.community, as: cast.member).isEmpty)

            // After 30 days it is gone for good.
            try await services.expenses.deleteExpense(expense.id, as: cast.admin)
            try await database.withConnection { connection in
                try await connection.query("UPDATE transactions SET deleted_at = now() - interval '31 days' WHERE id = \(expense.id)")
            }
            let tooLate = await serviceError { try await services.expenses.restoreExpense(expense.id, as: cast.admin) }
            #expect(tooLate?.code == .conflict && tooLate?.message.contains("more than 30 days ago") == true)
        }
    }

    @Test("corrections: an expense's day, its linked event (or none) and its currency while no share is settled; a settlement's day is not ahead")
    func corrections() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let expense = try await services.expenses.addExpense(
                in: cast.community, description: "Pizza", total: try dollars("30.00"), paidBy: cast.member, split: .equal([cast.admin, cast.member]),
                as: cast.member)
            let day = try CivilDate.parse("2026-01-02", field: "date")
            #expect(try await services.expenses.updateExpense(expense.id, date: day, as: cast.member).transactionDate == day)
            let game = try await services.events.create(
                in: cast.community, EventDraft(title: "Game", startsAt: Date().addingTimeInterval(86_400)), as: cast.admin)
            #expect(try await services.expenses.updateExpense(expense.id, linkedEvent: game.id, as: cast.member).linkedEventID == game.id)
            #expect(try await services.expenses.updateExpense(expense.id, linkedEvent: .some(nil), as: cast.member).linkedEventID == nil)
            #expect(
                await serviceError { try await services.expenses.updateExpense(expense.id, linkedEvent: EventID.random(), as: cast.member) }?.code
                    == .notFound)

            // Another currency: the same expense counted anew, in yen, while nothing is settled.
            let yen = try Currency.parse("JPY")
            let inYen = try await services.expenses.updateExpense(expense.id, total: Money(minorUnits: 4000, currency: yen), as: cast.member)
            #expect(inYen.currency == "JPY" && inYen.splits.map(\.amount) == [2000, 2000] && inYen.transactionDate == day)
            let balances = try await services.settlements.balances(in: cast.community, as: cast.admin).filter { $0.balance != 0 }
            #expect(Set(balances.map(\.currency)) == ["JPY"] && balances.map(\.balance).sorted() == [-2000, 2000])
            let share = try #require(inYen.splits.first { $0.userID == cast.admin })
            _ = try await services.settlements.settleSplit(share.id, via: "cash", as: cast.member)
            let settled = await serviceError {
                try await services.expenses.updateExpense(expense.id, total: try dollars("30.00"), as: cast.member)
            }
            #expect(settled?.code == .conflict && settled?.field == "currency")

            let settlement = try await services.settlements.recordSettlement(
                in: cast.community, from: cast.admin, to: cast.member, amount: try dollars("5.00"), as: cast.admin)
            let ahead = await serviceError {
                try await services.expenses.updateExpense(
                    settlement.id, date: CivilDate(containing: Date().addingTimeInterval(3 * 86_400)), as: cast.admin)
            }
            #expect(ahead?.field == "transaction_date")
        }
    }

    @Test("income: money one member received for the group; the receiver owes each share, in balances, pairs, settle-up, history and search")
    func income() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            // Max got the 60.00 deposit back for the two of them: he owes Ada her 30.00.
            let refund = try await services.expenses.addExpense(
                in: cast.community, description: "Deposit refund", total: try dollars("60.00"), paidBy: cast.member,
                split: .equal([cast.admin, cast.member]), income: true, as: cast.admin)
            #expect(refund.type == .income && refund.paidBy == cast.member && refund.splits.map(\.amount) == [3000, 3000])
            let balances = try await services.settlements.balances(in: cast.community, as: cast.member)
            #expect(Dictionary(uniqueKeysWithValues: balances.map { ($0.userID, $0.balance) }) == [cast.admin: 3000, cast.member: -3000])
            #expect(
                try await services.settlements.pairs(in: cast.community, as: cast.admin).map { [$0.from, $0.to] } == [[cast.member, cast.admin]])
            let statement = try await services.settlements.pair(in: cast.community, with: cast.member, as: cast.admin)
            #expect(statement.entries.map(\.amount) == [3000] && statement.entries.first?.type == .income)
            let payments = try await services.settlements.settleUpSuggestions(in: cast.community, as: cast.admin)
            #expect(payments.map { [$0.from, $0.to] } == [[cast.member, cast.admin]] && payments.first?.amount == 3000)
            // One receiver: never several payers, neither when added nor when edited.
            let several = await serviceError {
                try await services.expenses.addExpense(
                    in: cast.community, description: "Sale", total: try dollars("10.00"), payers: [cast.admin: 500, cast.member: 500],
                    split: .equal([cast.admin, cast.member]), income: true, as: cast.admin)
            }
            #expect(several?.code == .conflict && several?.field == "payers")
            let edit = await serviceError {
                try await services.expenses.updateExpense(
                    refund.id, total: try dollars("60.00"), payers: [cast.admin: 3000, cast.member: 3000], as: cast.admin)
            }
            #expect(edit?.code == .conflict && edit?.field == "payers")
            // A new total is shared again; money's history and search know it as an income.
            let edited = try await services.expenses.updateExpense(refund.id, total: try dollars("80.00"), as: cast.admin)
            #expect(edited.type == .income && edited.splits.map(\.amount) == [4000, 4000])
            #expect(try await services.settlements.balances(in: cast.community, as: cast.member).map(\.balance).sorted() == [-4000, 4000])
            let history = try await services.expenses.history(in: cast.community, transaction: refund.id, as: cast.admin).items
            #expect(history.map(\.entity) == ["income", "income"] && history.first?.after?.type == "income")
            #expect(try await services.search.search(cast.community, for: "deposit", as: cast.member).items.map(\.id) == [refund.id.uuid])
            // The database holds the one receiver too, whoever writes (at commit: the check is deferred).
            let payerRow = await #expect(throws: PostgresError.self) {
                try await database.withConnection { connection in
                    try await connection.query(
                        """
                        INSERT INTO transaction_payers (transaction_id, community_id, user_id, amount)
                        VALUES (\(refund.id), \(cast.community), \(cast.member), 8000)
                        """)
                }
            }
            #expect(payerRow?.constraint == "transaction_payers_not_on_income", "\(String(describing: payerRow))")
            try await services.expenses.deleteExpense(refund.id, as: cast.admin)
            #expect(try await services.settlements.balances(in: cast.community, as: cast.member).allSatisfy { $0.balance == 0 })
        }
    }

    @Test(
        "corrections: notes on expenses (set, changed, cleared, 2,000 characters at most) and settlements, a settlement's day (never after today where the community is), all in money's history"
    )
    func notesAndSettlementDays() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let expense = try await services.expenses.addExpense(
                in: cast.community, description: "Pizza", total: try dollars("20.00"), paidBy: cast.member, split: .equal([cast.admin, cast.member]),
                notes: "Two large,\nextra cheese", as: cast.member)
            #expect(expense.notes == "Two large,\nextra cheese")
            let changed = try await services.expenses.updateExpense(expense.id, notes: "Three large", as: cast.member)
            #expect(changed.notes == "Three large" && changed.splits == expense.splits)
            let kept = try await services.expenses.updateExpense(expense.id, description: "Pizzas", as: cast.member)
            #expect(kept.notes == "Three large")
            let cleared = try await services.expenses.updateExpense(expense.id, notes: .some(nil), as: cast.member)
            #expect(cleared.notes == nil)
            let long = String(repeating: "x", count: 2001)
            #expect(await serviceError { try await services.expenses.updateExpense(expense.id, notes: long, as: cast.member) }?.field == "notes")
            let history = try await services.expenses.history(in: cast.community, transaction: expense.id, as: cast.admin).items
            #expect(history.first?.before?.notes == "Three large" && history.first?.after?.notes == nil)

            // The community keeps UTC; two days ahead stays ahead even across a midnight.
            // Every category, the everyday ones included, is stored and filtered on.
            for category in ExpenseCategory.allCases {
                _ = try await services.expenses.addExpense(
                    in: cast.community, description: category.rawValue, total: try dollars("1.00"), paidBy: cast.admin, split: .equal([cast.member]),
                    category: category, as: cast.admin)
            }
            let groceries = try await services.expenses.expenses(in: cast.community, filter: ExpenseFilter(category: .groceries), as: cast.member)
            #expect(groceries.items.map(\.description) == ["groceries"] && groceries.items.first?.category == .groceries)
            let today = CivilDate(containing: Date(), in: .gmt)
            let yesterday = CivilDate(dayNumber: today.dayNumber - 1)
            let settlement = try await services.settlements.recordSettlement(
                in: cast.community, from: cast.admin, to: cast.member, amount: try dollars("10.00"), date: yesterday, notes: "Cash at practice",
                as: cast.admin)
            #expect(settlement.transactionDate == yesterday && settlement.notes == "Cash at practice")
            let tomorrow = CivilDate(dayNumber: today.dayNumber + 2)
            let early = await serviceError {
                try await services.settlements.recordSettlement(
                    in: cast.community, from: cast.admin, to: cast.member, amount: try dollars("10.00"), date: tomorrow, as: cast.admin)
            }
            #expect(early?.code == .conflict && early?.field == "transaction_date")
        }
    }

    @Test("expense and dues dates are the same days under the server's DateStyle SQL, DMY")
    func datesUnderAnotherDateStyle() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let name = try await connection.escapeIdentifier(database.name)
                try await connection.executeScript("ALTER DATABASE \(name) SET datestyle = 'SQL, DMY'")
            }
            let pool = database.makePool(maxConnections: 2)
            do {
                let services = OrbitServices(pool: pool)
                let cast = try await Cast.make(services)
                let expense = try await services.expenses.addExpense(
                    in: cast.community, description: "Boots", total: try dollars("12.00"), paidBy: cast.admin, split: .equal([cast.admin]),
                    date: try day("2026-03-04"), as: cast.admin
                )
                #expect(expense.transactionDate == (try day("2026-03-04")))
                #expect(
                    (try await services.expenses.expenses(in: cast.community, as: cast.member)).items.map(\.transactionDate) == [
                        try day("2026-03-04")
                    ])
                let dues = try await services.dues.create(
                    in: cast.community, name: "Season", amount: try dollars("50.00"), dueDate: try day("1999-12-31"), as: cast.admin)
                #expect(dues.dueDate == (try day("1999-12-31")))
                #expect((try await services.dues.list(in: cast.community, as: cast.member)).items.map(\.dueDate) == [try day("1999-12-31")])

                let row = try await pool.query("SELECT current_setting('DateStyle') AS style, \(try day("2026-03-04"))::text AS text").single()
                #expect(try row.decode("style", as: String.self) == "SQL, DMY")
                #expect(try row.decode("text", as: String.self) == "04/03/2026", "why the services read dates in binary, not through ::text")
                for text in ["0001-01-01", "1999-12-31", "2000-01-01", "2026-11-23", "9999-12-31"] {
                    let date = try day(text)
                    let back = try await pool.query("SELECT \(date) AS d, \(date) + 1 AS next").single()
                    #expect(try back.decode("d", as: CivilDate.self) == date)
                    #expect(try back.decode("next", as: CivilDate.self) == date.adding(days: 1))
                }
                await pool.close()
            } catch {
                await pool.close()
                throw error
            }
        }
    }
}
