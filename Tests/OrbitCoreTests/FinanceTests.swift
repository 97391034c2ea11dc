import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Expenses, balances, settle-up and dues")
struct FinanceTests {
    @Test("an expense splits to the cent; balances follow; suggestions clear them")
    func expenseAndBalances() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let third = try await services.users.create(email: "t@example.com", displayName: "Third").id
            _ = try await services.members.add(third, to: cast.community, as: cast.admin)
            let people = [cast.admin, cast.member, third]
            let expense = try await services.expenses.addExpense(
                in: cast.community, description: "Pizza", total: try dollars("10.01"), paidBy: cast.admin, split: .equal(people), as: cast.member
            )
            #expect(expense.totalAmount == 1001 && expense.splits.map(\.amount).sorted() == [333, 334, 334])
            let balances = try await services.settlements.balances(in: cast.community, as: cast.member)
            #expect(balances.map(\.balance).reduce(0, +) == 0)
            let adminShare = expense.splits.first(where: { $0.userID == cast.admin })?.amount ?? 0
            let adminBalance = balances.first(where: { $0.userID == cast.admin })?.balance
            #expect(adminBalance == 1001 - adminShare)
            let payments = try await services.settlements.settleUpSuggestions(in: cast.community, as: cast.member)
            for payment in payments {
                _ = try await services.settlements.recordSettlement(
                    in: cast.community, from: payment.from, to: payment.to, amount: Money(minorUnits: payment.amount, currency: .usd),
                    as: cast.admin
                )
            }
            #expect(try await services.settlements.balances(in: cast.community, as: cast.member).isEmpty)
        }
    }

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

    @Test(
        "random adds, edits, deletes and settlements in two currencies, with snapshot refreshes between: balances equal a model kept here and sum to zero",
        arguments: 0..<3)
    func randomLedger(round: Int) async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            var people = [cast.admin, cast.member]
            for index in 0..<3 {
                let user = try await services.users.create(email: "p\(index)@example.com", displayName: "P\(index)").id
                _ = try await services.members.add(user, to: cast.community, as: cast.admin)
                people.append(user)
            }
            var random = SystemRandomNumberGenerator()
            var live: [TransactionID: (currency: String, payer: UserID, splits: [(UserID, Int64)])] = [:]
            for step in 0..<40 {
                // Refresh the snapshot now and then: balances are snapshot + journal from then on.
                if step % 13 == 7 { _ = try await services.settlements.refreshBalancesSnapshot() }
                let currency = ["USD", "JPY"].randomElement(using: &random)!
                let code = try #require(Currency(currency))
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<6:
                    let payer = people.randomElement(using: &random)!
                    let between = Array(people.shuffled(using: &random).prefix(Int.random(in: 1...people.count, using: &random)))
                    let amount = Money(minorUnits: Int64.random(in: 1...500_000, using: &random), currency: code)
                    let expense = try await services.expenses.addExpense(
                        in: cast.community, description: "E", total: amount, paidBy: payer, split: .equal(between), as: payer
                    )
                    live[expense.id] = (currency, payer, expense.splits.map { ($0.userID, $0.amount) })
                case 6..<8:
                    guard let (id, entry) = live.randomElement(using: &random) else { continue }
                    let amount = Money(minorUnits: Int64.random(in: 1...500_000, using: &random), currency: try #require(Currency(entry.currency)))
                    let edited = try await services.expenses.updateExpense(id, total: amount, as: cast.admin)
                    live[id] = (entry.currency, entry.payer, edited.splits.map { ($0.userID, $0.amount) })
                case 8:
                    guard let id = live.keys.randomElement(using: &random) else { continue }
                    try await services.expenses.deleteExpense(id, as: cast.admin)
                    live[id] = nil
                default:
                    let pair = people.shuffled(using: &random).prefix(2)
                    let amount = Money(minorUnits: Int64.random(in: 1...100_000, using: &random), currency: code)
                    let settlement = try await services.settlements.recordSettlement(
                        in: cast.community, from: pair.first!, to: pair.last!, amount: amount, as: cast.admin
                    )
                    live[settlement.id] = (currency, pair.first!, [(pair.last!, amount.minorUnits)])
                }
            }
            var model: [String: Int64] = [:]
            for entry in live.values {
                for (user, amount) in entry.splits {
                    model["\(entry.payer)/\(entry.currency)", default: 0] += amount
                    model["\(user)/\(entry.currency)", default: 0] -= amount
                }
            }
            let actual = try await services.settlements.balances(in: cast.community, as: cast.member)
            #expect(Dictionary(uniqueKeysWithValues: actual.map { ("\($0.userID)/\($0.currency)", $0.balance) }) == model.filter { $0.value != 0 })
            for currency in ["USD", "JPY"] {
                #expect(actual.filter { $0.currency == currency }.map(\.balance).reduce(0, +) == 0)
            }
        }
    }

    @Test("after a snapshot refresh, deleting, editing and settling stay exact (snapshot + journal)")
    func exactAcrossRefresh() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let owed = { () async throws -> Int64 in
                try await services.settlements.balances(in: cast.community, as: cast.member).first(where: { $0.userID == cast.admin })?.balance ?? 0
            }
            let first = try await services.expenses.addExpense(
                in: cast.community, description: "A", total: try dollars("10.00"), paidBy: cast.admin, split: .exact([cast.member: 1000]),
                as: cast.admin
            )
            let second = try await services.expenses.addExpense(
                in: cast.community, description: "B", total: try dollars("4.00"), paidBy: cast.admin, split: .exact([cast.member: 400]),
                as: cast.admin
            )
            _ = try await services.settlements.refreshBalancesSnapshot()
            #expect(try await owed() == 1400)
            try await services.expenses.deleteExpense(first.id, as: cast.admin)
            #expect(try await owed() == 400)
            _ = try await services.expenses.updateExpense(second.id, total: try dollars("6.00"), split: .exact([cast.member: 600]), as: cast.admin)
            #expect(try await owed() == 600)
            _ = try await services.settlements.refreshBalancesSnapshot()
            #expect(try await owed() == 600)
            let split = try #require(try await services.expenses.expense(second.id, as: cast.admin).splits.first)
            try await services.settlements.settleSplit(split.id, via: "cash", as: cast.member)
            #expect(try await owed() == 0)
            _ = try await services.settlements.refreshBalancesSnapshot()
            #expect(try await owed() == 0)
        }
    }

    @Test("dues: partial payments, overpayment refused (also when two are recorded at once), the report")
    func dues() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let dues = try await services.dues.create(
                in: cast.community, name: "Season", amount: try dollars("50.00"), dueDate: try day("2000-01-31"), as: cast.admin)
            #expect(dues.amount == 5000 && dues.currency == "USD")
            let byMember = await serviceError {
                try await services.dues.create(
                    in: cast.community, name: "X", amount: try dollars("1"), dueDate: try day("2030-01-01"), as: cast.member)
            }
            #expect(byMember?.code == .forbidden)
            _ = try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("20.00"), method: "cash", as: cast.admin)
            let over = await serviceError {
                try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("30.01"), as: cast.admin)
            }
            #expect(over?.code == .conflict)
            let notAdmin = await serviceError {
                try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("1.00"), as: cast.member)
            }
            #expect(notAdmin?.code == .forbidden)

            // Two payments of 20.00 against 30.00 outstanding, at the same moment: one is refused,
            // as a conflict (a pool timeout or any other failure would not count).
            let refusals = await withTaskGroup(of: ServiceError.Code?.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        await serviceError {
                            try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("20.00"), as: cast.admin)
                        }?.code
                    }
                }
                return await group.reduce(into: [ServiceError.Code?]()) { $0.append($1) }
            }
            #expect(refusals.filter { $0 == nil }.count == 1)
            #expect(refusals.filter { $0 == .conflict }.count == 1)

            let report = try await services.dues.report(dues.id, as: cast.member)
            let member = try #require(report.first { $0.userID == cast.member })
            #expect(member.amountPaid == 4000 && member.outstanding == 1000 && member.status == .partial && member.overdue)
            let admin = try #require(report.first { $0.userID == cast.admin })
            #expect(admin.status == .unpaid)
            // The former member left before these dues existed and owes nothing.
            #expect(!report.contains { $0.userID == cast.former })
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
