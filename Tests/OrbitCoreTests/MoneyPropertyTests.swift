import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Issue 24's property: random sequences of several payers, children's shares, attendance fees,
/// edits, settled splits, settlements, deletions and snapshot refreshes, in two currencies,
/// against a model kept here that knows only who paid what and who owes what.
@Suite("Money: random sequences against a reference model")
struct MoneyPropertyTests {
    /// What the model keeps of a transaction: payments in, shares out, by person.
    struct Entry {
        var currency: String
        var paidBy: UserID
        var payers: [UserID: Int64]
        /// (debtor, amount, settled)
        var shares: [(UserID, Int64, Bool)]
        var splitIDs: [SplitID]
    }

    @Test("balances equal the model and sum to zero per currency", arguments: 0..<3)
    func randomSequences(round: Int) async throws {
        try await withServices { services, _ in try await Self.run(services) }
    }

    static func run(_ services: OrbitServices) async throws {
        do {
            let cast = try await Cast.make(services)
            var people = [cast.admin, cast.member]
            for index in 0..<2 {
                let user = try await services.users.create(email: "p\(index)@example.com", displayName: "P\(index)").id
                _ = try await services.members.add(user, to: cast.community, as: cast.admin)
                people.append(user)
            }
            // Two children, each owed for by their own parent.
            let kid = try await services.family.add(name: "Kid0", as: people[1]).id
            let otherKid = try await services.family.add(name: "Kid1", as: people[2]).id
            let parentOf: [Holder: UserID] = [.familyMember(kid): people[1], .familyMember(otherKid): people[2]]
            let everyone: [Holder] = people.map(Holder.user) + Array(parentOf.keys)
            let game = try await services.events.create(
                in: cast.community, EventDraft(title: "Game", startsAt: Date().addingTimeInterval(86_400)), as: cast.admin)
            _ = try await services.events.rsvp(game.id, status: .yes, plusOnes: 2, as: people[0])
            _ = try await services.events.rsvp(game.id, status: .yes, as: people[1])
            _ = try await services.events.rsvp(game.id, status: .yes, familyMember: kid, as: people[1])

            var random = SystemRandomNumberGenerator()
            var live: [TransactionID: Entry] = [:]
            for step in 0..<40 {
                if step % 11 == 5 { _ = try await services.finances.refreshBalancesSnapshot() }
                let code = ["USD", "EUR"].randomElement(using: &random) ?? "USD"
                let currency = try Currency.parse(code)
                let total = Int64.random(in: 1...200_000, using: &random)
                switch Int.random(in: 0..<12, using: &random) {
                case 0..<4:  // an expense: one payer or several, members and children sharing
                    let sharing = Array(everyone.shuffled(using: &random).prefix(Int.random(in: 1...everyone.count, using: &random)))
                    var weights: [Holder: Int64] = [:]
                    for person in sharing { weights[person] = Int64.random(in: 1...5, using: &random) }
                    let split: SplitMethod = Bool.random(using: &random) ? .equal(sharing) : .shares(weights)
                    let paying = Self.payers(total, among: people, using: &random)
                    let alone = people.randomElement(using: &random)
                    let expense = try await services.finances.addExpense(
                        in: cast.community, description: "E\(step)", total: Money(minorUnits: total, currency: currency),
                        paidBy: paying == nil ? alone : nil, payers: paying, split: split, as: cast.admin)
                    live[expense.id] = Self.entry(parentOf, expense)
                case 4:  // an attendance fee
                    let paying = Self.payers(total, among: people, using: &random)
                    let fee = try await services.finances.chargeAttendees(
                        of: game.id, total: Money(minorUnits: total, currency: currency), payers: paying, as: people[3])
                    live[fee.id] = Self.entry(parentOf, fee)
                case 5, 6:  // an edit: new total and payers
                    guard let id = live.keys.randomElement(using: &random), let entry = live[id] else { continue }
                    let same = try Currency.parse(entry.currency)
                    let alone = people.randomElement(using: &random) ?? cast.admin
                    let paying = Self.payers(total, among: people, using: &random) ?? [alone: total]
                    let edited = try await services.finances.updateExpense(
                        id, total: Money(minorUnits: total, currency: same), payers: paying, as: cast.admin)
                    live[id] = Self.entry(parentOf, edited)
                case 7:  // a split settled
                    guard let id = live.keys.randomElement(using: &random), let split = live[id]?.splitIDs.randomElement(using: &random) else {
                        continue
                    }
                    live[id] = Self.entry(parentOf, try await services.finances.settleSplit(split, via: "cash", as: cast.admin))
                case 8:
                    guard let id = live.keys.randomElement(using: &random) else { continue }
                    try await services.finances.deleteExpense(id, as: cast.admin)
                    live[id] = nil
                default:
                    let pair = people.shuffled(using: &random)
                    let settlement = try await services.finances.recordSettlement(
                        in: cast.community, from: pair[0], to: pair[1], amount: Money(minorUnits: total, currency: currency), as: cast.admin)
                    live[settlement.id] = Self.entry(parentOf, settlement)
                }
            }

            var model: [String: Int64] = [:]
            for entry in live.values {
                #expect(entry.payers.values.reduce(0, +) == entry.shares.map(\.1).reduce(0, +))
                for (payer, amount) in entry.payers { model["\(payer)/\(entry.currency)", default: 0] += amount }
                for (user, amount, settled) in entry.shares {
                    model["\(user)/\(entry.currency)", default: 0] -= amount
                    // A settled share was paid back to the main payer outside the app.
                    if settled {
                        model["\(user)/\(entry.currency)", default: 0] += amount
                        model["\(entry.paidBy)/\(entry.currency)", default: 0] -= amount
                    }
                }
            }
            let actual = try await services.finances.balances(in: cast.community, as: cast.member)
            #expect(
                Dictionary(uniqueKeysWithValues: actual.filter { $0.balance != 0 }.map { ("\($0.userID)/\($0.currency)", $0.balance) })
                    == model.filter { $0.value != 0 })
            for currency in ["USD", "EUR"] {
                #expect(actual.filter { $0.currency == currency }.map(\.balance).reduce(0, +) == 0)
            }
        }
    }

    /// `total` in 2 or 3 positive parts for random people, or nil (one payer).
    static func payers(_ total: Int64, among people: [UserID], using random: inout SystemRandomNumberGenerator) -> [UserID: Int64]? {
        let count = Int.random(in: 1...3, using: &random)
        guard count > 1, total >= Int64(count) else { return nil }
        var cuts = Set<Int64>()
        while cuts.count < count - 1 { cuts.insert(Int64.random(in: 1..<total, using: &random)) }
        let points = [0] + cuts.sorted() + [total]
        return Dictionary(uniqueKeysWithValues: zip(people.shuffled(using: &random), zip(points.dropFirst(), points).map { $0 - $1 }))
    }

    static func entry(_ parentOf: [Holder: UserID], _ expense: Expense) -> Entry {
        Entry(
            currency: expense.currency, paidBy: expense.paidBy,
            payers: Dictionary(uniqueKeysWithValues: expense.payers.map { ($0.userID, $0.amount) }),
            shares: expense.splits.map { (parentOf[$0.participant] ?? $0.userID, $0.amount, $0.isSettled) }, splitIDs: expense.splits.map(\.id))
    }
}
