import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Settlements: balances, settle-up, settling a split, snapshot and journal")
struct SettlementTests {
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

    @Test("settling a split: the debtor, the payer or an admin; it stays in the balances as settled")
    func settleSplit() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let expense = try await services.expenses.addExpense(
                in: cast.community, description: "Pizza", total: try dollars("20.00"), paidBy: cast.admin, split: .equal([cast.admin, cast.member]),
                as: cast.admin)
            let split = try #require(expense.splits.first { $0.userID == cast.member })
            let outsider = await serviceError { try await services.settlements.settleSplit(split.id, via: "cash", as: cast.outsider) }
            #expect(outsider?.code == .notFound)
            let settled = try await services.settlements.settleSplit(split.id, via: "cash", as: cast.member)
            #expect(settled.splits.first { $0.id == split.id }?.isSettled == true)
            #expect(settled.splits.first { $0.id == split.id }?.settledVia == "cash")
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

    @Test(
        "who owes whom: each pair's debt adds up to the balances; one pair's figure and the entries behind it; settle-up pair by pair or simplified")
    func pairs() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let (a, b) = (cast.admin, cast.member)
            let c = try await services.users.create(email: "c@example.com", displayName: "C").id
            _ = try await services.members.add(c, to: cast.community, as: a)
            // A pays 30.00 for three, B pays 12.00 for three: B owes A 10 − 4, C owes A 10, C owes B 4.
            let dinner = try await services.expenses.addExpense(
                in: cast.community, description: "Dinner", total: try dollars("30.00"), paidBy: a, split: .equal([a, b, c]), as: a)
            let taxi = try await services.expenses.addExpense(
                in: cast.community, description: "Taxi", total: try dollars("12.00"), paidBy: b, split: .equal([a, b, c]), as: b)
            let pairs = try await services.settlements.pairs(in: cast.community, as: c)
            #expect(
                pairs == [
                    PairDebt(from: c, to: a, amount: 1000, currency: "USD"), PairDebt(from: b, to: a, amount: 600, currency: "USD"),
                    PairDebt(from: c, to: b, amount: 400, currency: "USD"),
                ])
            // For every person, what their pairs owe them less what they owe is their balance.
            let balances = try await services.settlements.balances(in: cast.community, as: c)
            for balance in balances {
                let owed = pairs.filter { $0.to == balance.userID }.map(\.amount).reduce(0, +)
                let owing = pairs.filter { $0.from == balance.userID }.map(\.amount).reduce(0, +)
                #expect(owed - owing == balance.balance, "\(balance.userID)")
            }

            // A and B: the figure, and the two expenses behind it, newest first, adding up to it.
            let statement = try await services.settlements.pair(in: cast.community, with: b, as: a)
            #expect(statement.memberID == b && statement.balances == [PairStatement.Figure(currency: "USD", balance: 600)])
            #expect(statement.entries.map(\.transactionID) == [taxi.id, dinner.id] && statement.entries.map(\.amount) == [-400, 1000])
            #expect(statement.nextCursor == nil)
            let mirrored = try await services.settlements.pair(in: cast.community, with: a, as: b)
            #expect(mirrored.balances == [PairStatement.Figure(currency: "USD", balance: -600)] && mirrored.entries.map(\.amount) == [400, -1000])
            // A page at a time.
            let first = try await services.settlements.pair(in: cast.community, with: b, limit: 1, as: a)
            let next = try await services.settlements.pair(in: cast.community, with: b, limit: 1, cursor: first.nextCursor, as: a)
            #expect(first.entries.map(\.transactionID) == [taxi.id] && next.entries.map(\.transactionID) == [dinner.id] && next.nextCursor == nil)
            // With oneself: even, nothing behind it.
            let alone = try await services.settlements.pair(in: cast.community, with: a, as: a)
            #expect(alone.memberID == a && alone.balances.isEmpty && alone.entries.isEmpty)
            #expect(await serviceError { try await services.settlements.pair(in: cast.community, with: cast.outsider, as: a) }?.code == .notFound)
            #expect(await serviceError { try await services.settlements.pair(in: cast.community, with: a, as: cast.outsider) }?.code == .notFound)
            let foreignCursor = try await services.expenses.expenses(in: cast.community, limit: 1, as: a).nextCursor
            #expect(
                await serviceError { try await services.settlements.pair(in: cast.community, with: b, cursor: foreignCursor, as: a) }?.code
                    == .invalidInput)

            // Settle-up: the fewest payments by default, each pair's debt without simplifying.
            let simplified = try await services.settlements.settleUpSuggestions(in: cast.community, as: a)
            #expect(simplified.map(\.amount) == [1400, 200])
            let pairwise = try await services.settlements.settleUpSuggestions(in: cast.community, simplify: false, as: a)
            #expect(pairwise.map { PairDebt(from: $0.from, to: $0.to, amount: $0.amount, currency: $0.currency) } == pairs)
            let pairwiseInUSD = try await services.settlements.settleUpSuggestions(in: cast.community, currency: .usd, simplify: false, as: a)
            #expect(Set(pairwiseInUSD.map(\.amount)) == [1000, 600, 400] && pairwiseInUSD.count == 3)
            // The community's minimizeDebts decides when the request does not.
            _ = try await services.communities.update(cast.community, settings: CommunitySettings(minimizeDebts: false), as: a)
            #expect(try await services.settlements.settleUpSuggestions(in: cast.community, as: b) == pairwise)
            #expect(try await services.settlements.settleUpSuggestions(in: cast.community, simplify: true, as: b) == simplified)

            // C pays A back: that pair is even, and the entries behind it cancel out.
            _ = try await services.settlements.recordSettlement(in: cast.community, from: c, to: a, amount: try dollars("10.00"), as: c)
            let even = try await services.settlements.pair(in: cast.community, with: a, as: c)
            #expect(even.balances.isEmpty && even.entries.map(\.amount).reduce(0, +) == 0)
            #expect(try await services.settlements.pairs(in: cast.community, as: a).count == 2)
        }
    }
}
