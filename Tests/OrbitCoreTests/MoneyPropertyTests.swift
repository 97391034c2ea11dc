import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Synchronization
import Testing

/// Issue 24's property: random sequences of several payers, children's shares, itemised
/// expenses with tax and tip, incomes (the lines turned), attendance fees, edits, settled splits, settlements, deletions, snapshot refreshes and recurring expenses run by
/// the job as the days pass (skipped days, ended templates), settlements converted between the two
/// currencies at a recorded rate, against a model
/// kept here that knows only who paid what and who owes what, and which days a recurring expense
/// has (every `interval` days from its first, but skipped ones and those after its end).
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
        /// A settlement paid in another currency (its amount cannot be edited).
        var converted = false
        /// An itemised expense (a new total needs new items).
        var itemised = false
        /// An income: `paidBy` received the money and owes each share (the lines turned).
        var income = false
    }

    /// What the model keeps of a recurring expense: FREQ=DAILY;INTERVAL=`interval` from `first`.
    struct Template {
        var first: CivilDate
        var interval: Int
        var skipped: Set<CivilDate> = []
        /// The last day it was active on (set when ended).
        var endedAfter: CivilDate?
        /// The days of the expenses the job created.
        var created: [CivilDate] = []

        func expected(through today: CivilDate) -> [CivilDate] {
            let last = min(today, endedAfter ?? today)
            return stride(from: first.dayNumber, through: last.dayNumber, by: interval).map(CivilDate.init(dayNumber:))
                .filter { !skipped.contains($0) }
        }
    }

    @Test("balances and who owes whom equal the model; a person's pairs add up to their balance; each currency sums to zero", arguments: 0..<3)
    func randomSequences(round: Int) async throws {
        try await withServices { services, _ in try await Self.run(services) }
    }

    static func run(_ unclocked: OrbitServices) async throws {
        do {
            // The services' clock, moved forward by the sequence.
            let clock = TestClock(Date(timeIntervalSince1970: 1_893_456_000))  // 2030-01-01T00:00Z
            var services = unclocked
            services.now = { clock.now }
            var templates: [RecurringChargeID: Template] = [:]
            var seen = Set<TransactionID>()
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
            for step in 0..<50 {
                if step % 11 == 5 { _ = try await services.settlements.refreshBalancesSnapshot() }
                let code = ["USD", "EUR"].randomElement(using: &random) ?? "USD"
                let currency = try Currency.parse(code)
                let total = Int64.random(in: 1...200_000, using: &random)
                switch Int.random(in: 0..<19, using: &random) {
                case 0..<4:  // an expense: one payer or several, members and children sharing
                    let sharing = Array(everyone.shuffled(using: &random).prefix(Int.random(in: 1...everyone.count, using: &random)))
                    var weights: [Holder: Int64] = [:]
                    for person in sharing { weights[person] = Int64.random(in: 1...5, using: &random) }
                    let split: SplitMethod = Bool.random(using: &random) ? .equal(sharing) : .shares(weights)
                    let paying = Self.payers(total, among: people, using: &random)
                    let alone = people.randomElement(using: &random)
                    let expense = try await services.expenses.addExpense(
                        in: cast.community, description: "E\(step)", total: Money(minorUnits: total, currency: currency),
                        paidBy: paying == nil ? alone : nil, payers: paying, split: split, as: cast.admin)
                    live[expense.id] = Self.entry(parentOf, expense)
                case 17:  // an itemised expense: items split by exact amounts, tax and tip on top
                    let items = Self.itemised(total, among: everyone, using: &random)
                    let paying = Self.payers(total, among: people, using: &random)
                    let expense = try await services.expenses.addExpense(
                        in: cast.community, description: "I\(step)", total: Money(minorUnits: total, currency: currency),
                        paidBy: paying == nil ? people.randomElement(using: &random) : nil, payers: paying, split: .items(items), as: cast.admin)
                    Self.expectProportional(expense, items)
                    live[expense.id] = Self.entry(parentOf, expense)
                case 18:  // an income: one member received money for some of the group, members and children
                    let sharing = Array(everyone.shuffled(using: &random).prefix(Int.random(in: 1...everyone.count, using: &random)))
                    let income = try await services.expenses.addExpense(
                        in: cast.community, description: "R\(step)", total: Money(minorUnits: total, currency: currency),
                        paidBy: people.randomElement(using: &random), split: .equal(sharing), income: true, as: cast.admin)
                    #expect(income.type == .income)
                    live[income.id] = Self.entry(parentOf, income)
                case 4:  // an attendance fee
                    let paying = Self.payers(total, among: people, using: &random)
                    let fee = try await services.expenses.chargeAttendees(
                        of: game.id, total: Money(minorUnits: total, currency: currency), payers: paying, as: people[3])
                    live[fee.id] = Self.entry(parentOf, fee)
                case 5, 6:  // an edit: new total and payers
                    guard let id = live.keys.randomElement(using: &random), let entry = live[id] else { continue }
                    let same = try Currency.parse(entry.currency)
                    if entry.converted {
                        // A converted settlement's amount follows from what was paid and the rate.
                        let refused = await serviceError {
                            try await services.expenses.updateExpense(id, total: Money(minorUnits: total, currency: same), as: cast.admin)
                        }
                        #expect(refused?.code == .conflict || total == entry.payers.values.reduce(0, +))
                        continue
                    }
                    if entry.income {
                        // An income has one receiver: a new total, or a new receiver, never payers.
                        let refused = await serviceError {
                            try await services.expenses.updateExpense(
                                id, total: Money(minorUnits: total, currency: same), payers: [cast.admin: total - 1, cast.member: 1],
                                as: cast.admin)
                        }
                        #expect(refused?.field == "payers")
                        let edited = try await services.expenses.updateExpense(
                            id, total: Money(minorUnits: total, currency: same), paidBy: people.randomElement(using: &random), as: cast.admin)
                        live[id] = Self.entry(parentOf, edited)
                        continue
                    }
                    let alone = people.randomElement(using: &random) ?? cast.admin
                    let paying = Self.payers(total, among: people, using: &random) ?? [alone: total]
                    var items: Itemised?
                    if entry.itemised {
                        // A new total alone: the items no longer fit it, so the edit needs new ones.
                        let refused = await serviceError {
                            try await services.expenses.updateExpense(
                                id, total: Money(minorUnits: total, currency: same), payers: paying, as: cast.admin)
                        }
                        #expect(refused?.field == "split")
                        items = Self.itemised(total, among: everyone, using: &random)
                    }
                    let edited = try await services.expenses.updateExpense(
                        id, total: Money(minorUnits: total, currency: same), payers: paying, split: items.map(SplitMethod.items), as: cast.admin)
                    if let items { Self.expectProportional(edited, items) }
                    live[id] = Self.entry(parentOf, edited)
                case 7:  // a split settled
                    guard let id = live.keys.randomElement(using: &random), let split = live[id]?.splitIDs.randomElement(using: &random) else {
                        continue
                    }
                    live[id] = Self.entry(parentOf, try await services.settlements.settleSplit(split, via: "cash", as: cast.admin))
                case 8:
                    guard let id = live.keys.randomElement(using: &random) else { continue }
                    try await services.expenses.deleteExpense(id, as: cast.admin)
                    live[id] = nil
                case 12:  // a recurring expense: every few days from a day soon
                    let interval = Int.random(in: 2...9, using: &random)
                    let first = CivilDate(containing: clock.now).adding(days: Int.random(in: 0...4, using: &random))
                    let sharing = Array(everyone.shuffled(using: &random).prefix(Int.random(in: 1...everyone.count, using: &random)))
                    let charge = try await services.recurringCharges.createExpense(
                        in: cast.community, description: "R\(step)", amount: Money(minorUnits: total, currency: currency),
                        paidBy: people.randomElement(using: &random), split: .equal(sharing), rule: try .parse("FREQ=DAILY;INTERVAL=\(interval)"),
                        startsOn: first, as: people.randomElement(using: &random) ?? cast.admin)
                    templates[charge.id] = Template(first: first, interval: interval)
                    try await Self.collect(services, cast, parentOf, &templates, &seen, &live)
                case 13:  // skip a day still to come, or end one
                    guard let id = templates.keys.randomElement(using: &random), let template = templates[id], template.endedAfter == nil else {
                        continue
                    }
                    if Bool.random(using: &random) {
                        _ = try await services.recurringCharges.end(id, as: cast.admin)
                        templates[id]?.endedAfter = CivilDate(containing: clock.now)
                    } else if let next = try await services.recurringCharges.get(id, as: cast.admin).nextOn {
                        let day = next.adding(days: template.interval * Int.random(in: 0...2, using: &random))
                        if !template.skipped.contains(day) {
                            _ = try await services.recurringCharges.skip(id, on: day, as: cast.admin)
                            templates[id]?.skipped.insert(day)
                        }
                    }
                case 16:  // a settlement paid in the other currency, at a rate with up to 4 decimals
                    let pair = people.shuffled(using: &random)
                    let other = try Currency.parse(code == "USD" ? "EUR" : "USD")
                    let scaled = Int64.random(in: 5_000...20_000, using: &random)  // 0.5000 … 2.0000
                    let rate = "\(scaled / 10_000).\(String(scaled % 10_000).leftPadded(4))"
                    let settlement = try await services.settlements.recordSettlement(
                        in: cast.community, from: pair[0], to: pair[1], amount: Money(minorUnits: total, currency: currency), settles: other,
                        rate: try .parse(rate), as: pair[0])
                    // Half away from zero, in integers: total × scaled / 10⁴.
                    let converted = (total * scaled * 2 + 10_000) / 20_000
                    #expect(settlement.currency == other.code && settlement.totalAmount == converted, "\(total) at \(rate)")
                    live[settlement.id] = Self.entry(parentOf, settlement)
                case 14, 15:  // days pass; the job runs (more than once after a long gap: it catches up 60 a run)
                    clock.advance(by: Double(Int.random(in: 1...20, using: &random)) * 86_400)
                    while try await services.recurringCharges.createDue().created > 0 {}
                    try await Self.collect(services, cast, parentOf, &templates, &seen, &live)
                default:
                    let pair = people.shuffled(using: &random)
                    let settlement = try await services.settlements.recordSettlement(
                        in: cast.community, from: pair[0], to: pair[1], amount: Money(minorUnits: total, currency: currency), as: cast.admin)
                    live[settlement.id] = Self.entry(parentOf, settlement)
                }
            }

            for (id, template) in templates {
                #expect(template.created == template.expected(through: CivilDate(containing: clock.now)), "recurring expense \(id)")
            }

            var model: [String: Int64] = [:]
            for entry in live.values {
                #expect(entry.payers.values.reduce(0, +) == entry.shares.map(\.1).reduce(0, +))
                // An income turns every line: its receiver owes the shares.
                let sign: Int64 = entry.income ? -1 : 1
                for (payer, amount) in entry.payers { model["\(payer)/\(entry.currency)", default: 0] += sign * amount }
                for (user, amount, settled) in entry.shares {
                    model["\(user)/\(entry.currency)", default: 0] -= sign * amount
                    // A settled share was paid back to the main payer outside the app.
                    if settled {
                        model["\(user)/\(entry.currency)", default: 0] += sign * amount
                        model["\(entry.paidBy)/\(entry.currency)", default: 0] -= sign * amount
                    }
                }
            }
            let actual = try await services.settlements.balances(in: cast.community, as: cast.member)
            #expect(
                Dictionary(uniqueKeysWithValues: actual.filter { $0.balance != 0 }.map { ("\($0.userID)/\($0.currency)", $0.balance) })
                    == model.filter { $0.value != 0 })
            for currency in ["USD", "EUR"] {
                #expect(actual.filter { $0.currency == currency }.map(\.balance).reduce(0, +) == 0)
            }

            // Who owes whom (issue 54, item 2), against the same model pair by pair:
            // "debtor/creditor/currency" → what the debtor owes, netted both ways.
            var pairModel: [String: Int64] = [:]
            func owes(_ debtor: UserID, _ creditor: UserID, _ amount: Int64, _ currency: String) {
                guard debtor != creditor else { return }
                pairModel["\(debtor)/\(creditor)/\(currency)", default: 0] += amount
                pairModel["\(creditor)/\(debtor)/\(currency)", default: 0] -= amount
            }
            for entry in live.values {
                for (payer, amount) in entry.payers { owes(entry.paidBy, payer, amount, entry.currency) }
                for (user, amount, settled) in entry.shares where !settled {
                    if entry.income { owes(entry.paidBy, user, amount, entry.currency) } else { owes(user, entry.paidBy, amount, entry.currency) }
                }
            }
            let pairs = try await services.settlements.pairs(in: cast.community, as: cast.member)
            #expect(
                Dictionary(uniqueKeysWithValues: pairs.map { ("\($0.from)/\($0.to)/\($0.currency)", $0.amount) })
                    == pairModel.filter { $0.value > 0 })
            // For every person, what their pairs owe them less what they owe is their balance.
            var summed: [String: Int64] = [:]
            for debt in pairs {
                summed["\(debt.to)/\(debt.currency)", default: 0] += debt.amount
                summed["\(debt.from)/\(debt.currency)", default: 0] -= debt.amount
            }
            #expect(summed.filter { $0.value != 0 } == model.filter { $0.value != 0 })
            // And one pair's figure is what `pairs` says of it.
            if let debt = pairs.first {
                let statement = try await services.settlements.pair(in: cast.community, with: debt.from, limit: 500, as: debt.to)
                #expect(statement.balances.first { $0.currency == debt.currency }?.balance == debt.amount)
                #expect(statement.entries.filter { $0.currency == debt.currency }.map(\.amount).reduce(0, +) == debt.amount)
            }
        }
    }

    /// Takes in the expenses the recurring charges made since the last look: into `live`, and
    /// their days into their template's `created`.
    static func collect(
        _ services: OrbitServices, _ cast: Cast, _ parentOf: [Holder: UserID], _ templates: inout [RecurringChargeID: Template],
        _ seen: inout Set<TransactionID>, _ live: inout [TransactionID: Entry]
    ) async throws {
        var cursor: String?
        repeat {
            let page = try await services.expenses.expenses(in: cast.community, limit: 500, cursor: cursor, as: cast.admin)
            for expense in page.items where !seen.contains(expense.id) {
                seen.insert(expense.id)
                guard let charge = expense.recurringChargeID else { continue }
                templates[charge]?.created.append(expense.transactionDate)
                templates[charge]?.created.sort()
                live[expense.id] = entry(parentOf, expense)
            }
            cursor = page.nextCursor
        } while cursor != nil
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

    /// `total` as 1 to 4 items, each split by exact amounts among a few of `holders`, and a tax
    /// and a tip of up to a tenth of it each.
    static func itemised(_ total: Int64, among holders: [Holder], using random: inout SystemRandomNumberGenerator) -> Itemised {
        let tax = Int64.random(in: 0...(total / 10), using: &random)
        let tip = Int64.random(in: 0...(total / 10), using: &random)
        let items = cut(total - tax - tip, into: Int.random(in: 1...4, using: &random), using: &random).map { amount in
            let sharing = holders.shuffled(using: &random).prefix(Int.random(in: 1...holders.count, using: &random))
            let parts = cut(amount, into: sharing.count, using: &random)
            return Itemised.Item(
                description: "item", amount: amount, split: .exact(Dictionary(uniqueKeysWithValues: zip(sharing, parts))))
        }
        return Itemised(items: items, tax: tax, tip: tip)
    }

    /// `amount` in `count` parts adding up to it (zeros when it is smaller than `count`).
    static func cut(_ amount: Int64, into count: Int, using random: inout SystemRandomNumberGenerator) -> [Int64] {
        guard count > 1, amount >= Int64(count) else { return [amount] + Array(repeating: 0, count: max(0, count - 1)) }
        var cuts = Set<Int64>()
        while cuts.count < count - 1 { cuts.insert(Int64.random(in: 1..<amount, using: &random)) }
        let points = [0] + cuts.sorted() + [amount]
        return zip(points.dropFirst(), points).map { $0 - $1 }
    }

    /// The model of an itemised split: each holder owes their items, and of the tax and tip
    /// their proportion rounded down, or one unit more; everything adds up to the total.
    static func expectProportional(_ expense: Expense, _ items: Itemised) {
        var subtotals: [Holder: Int64] = [:]
        for item in items.items {
            guard case .exact(let parts) = item.split else { continue }
            for (holder, amount) in parts { subtotals[holder, default: 0] += amount }
        }
        let extra = items.tax + items.tip
        let itemsTotal = items.total - extra
        let shares = Dictionary(expense.splits.map { ($0.participant, $0.amount) }, uniquingKeysWith: +)
        #expect(Set(shares.keys) == Set(subtotals.keys))
        var roundedUp: Int64 = 0
        for (holder, subtotal) in subtotals {
            let floor = extra * subtotal / itemsTotal
            let share = shares[holder] ?? -1
            #expect(share == subtotal + floor || share == subtotal + floor + 1, "\(holder): \(share) of \(subtotal) + \(extra)")
            roundedUp += share - subtotal - floor
        }
        #expect(subtotals.values.reduce(0) { $0 + extra * $1 / itemsTotal } + roundedUp == extra)
        #expect(shares.values.reduce(0, +) == expense.totalAmount)
    }

    static func entry(_ parentOf: [Holder: UserID], _ expense: Expense) -> Entry {
        Entry(
            currency: expense.currency, paidBy: expense.paidBy,
            payers: Dictionary(uniqueKeysWithValues: expense.payers.map { ($0.userID, $0.amount) }),
            shares: expense.splits.map { (parentOf[$0.participant] ?? $0.userID, $0.amount, $0.isSettled) }, splitIDs: expense.splits.map(\.id),
            converted: expense.conversion != nil, itemised: { if case .items = expense.splitInput { true } else { false } }(),
            income: expense.type == .income)
    }
}

extension String {
    /// Zeros in front up to `width` characters.
    fileprivate func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
