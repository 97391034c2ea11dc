/// How an expense is divided (prior art: One By Two, Settle Up). Holders are members, or
/// family members whose parent owes their share (`Holder`); the `UserID` forms name members only.
package enum SplitMethod: Sendable, Equatable {
    /// The same share for each participant.
    case equal([Holder])
    /// Given amounts that must add up to the total exactly.
    case exact([Holder: Int64])
    /// Percentages in hundredths of a percent (`33.33%` is 3333) that must add up to 100%.
    case percent([Holder: Int64])
    /// Positive weights: a participant gets total × weight / sum of weights.
    case shares([Holder: Int64])
    /// Items, each with its own split, plus tax and tip shared in proportion to what each
    /// participant's items come to (docs/money.md, "Itemised expenses").
    indirect case items(Itemised)

    package static func equal(_ users: [UserID]) -> SplitMethod { .equal(users.map(Holder.user)) }
    package static func exact(_ amounts: [UserID: Int64]) -> SplitMethod { .exact(keyed(amounts)) }
    package static func percent(_ parts: [UserID: Int64]) -> SplitMethod { .percent(keyed(parts)) }
    package static func shares(_ parts: [UserID: Int64]) -> SplitMethod { .shares(keyed(parts)) }

    private static func keyed(_ values: [UserID: Int64]) -> [Holder: Int64] {
        Dictionary(uniqueKeysWithValues: values.map { (Holder.user($0.key), $0.value) })
    }

    /// Everyone with a share.
    package var participants: [Holder] {
        switch self {
        case .equal(let people): people
        case .exact(let parts), .percent(let parts), .shares(let parts): Array(parts.keys)
        case .items(let itemised): Array(Set(itemised.items.flatMap(\.split.participants))).sorted()
        }
    }
}

/// An itemised expense: what each item cost and how it is split, and the tax and tip on top.
package struct Itemised: Sendable, Equatable, Codable {
    package struct Item: Sendable, Equatable, Codable {
        package var description: String
        /// Minor units, more than zero.
        package var amount: Int64
        /// How this item is divided: any method but items.
        package var split: SplitMethod

        package init(description: String, amount: Int64, split: SplitMethod) {
            self.description = description
            self.amount = amount
            self.split = split
        }
    }

    package var items: [Item]
    /// Minor units, zero or more.
    package var tax: Int64
    package var tip: Int64

    package init(items: [Item], tax: Int64 = 0, tip: Int64 = 0) {
        self.items = items
        self.tax = tax
        self.tip = tip
    }

    /// What the items, tax and tip add up to: the expense's total.
    package var total: Int64 { items.reduce(0) { $0 + $1.amount } + tax + tip }
}

/// Divides a total into splits that always add up to it exactly.
///
/// Rounding rule: each participant first gets the exact share rounded down; the minor units left
/// over go one each to the participants with the largest remainders, and among equal remainders
/// to the smallest ids (byte order; user and family member ids alike), so the result never depends on the order in which
/// participants were given. For an equal split that means: the first `total mod n` participants by
/// id pay one unit more.
package enum SplitCalculator {
    package static func splits(of total: Int64, _ method: SplitMethod) throws -> [(participant: Holder, amount: Int64)] {
        guard total > 0 else { throw ServiceError.invalidInput(field: "amount", reason: "must be more than zero") }
        let weights: [(Holder, Int64)]
        let denominator: Int64
        switch method {
        case .equal(let users):
            let unique = Set(users)
            guard !unique.isEmpty else { throw ServiceError.invalidInput(field: "between", reason: "must name at least one member") }
            guard unique.count == users.count else { throw ServiceError.invalidInput(field: "between", reason: "names a member twice") }
            weights = unique.map { ($0, 1) }
            denominator = Int64(unique.count)
        case .exact(let amounts):
            guard !amounts.isEmpty else { throw ServiceError.invalidInput(field: "parts", reason: "must name at least one member") }
            guard amounts.values.allSatisfy({ $0 >= 0 }) else { throw ServiceError.invalidInput(field: "parts", reason: "cannot be negative") }
            guard amounts.values.allSatisfy({ $0 <= Money.maximumMinorUnits }) else {
                throw ServiceError.invalidInput(field: "parts", reason: "must be at most \(Money.maximumMinorUnits) minor units each")
            }
            let sum = amounts.values.reduce(0, +)
            guard sum == total else {
                throw ServiceError.invalidInput(field: "parts", reason: "add up to \(sum) minor units, not the total \(total)")
            }
            return amounts.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        case .percent(let parts):
            guard !parts.isEmpty else { throw ServiceError.invalidInput(field: "parts", reason: "must name at least one member") }
            guard parts.values.allSatisfy({ (0...10_000).contains($0) }) else {
                throw ServiceError.invalidInput(field: "parts", reason: "must be from 0 to 100% (0 to 10000 hundredths) each")
            }
            let sum = parts.values.reduce(0, +)
            guard sum == 10_000 else {
                throw ServiceError.invalidInput(field: "parts", reason: "percentages add up to \(Double(sum) / 100)%, not 100%")
            }
            weights = parts.map { ($0.key, $0.value) }
            denominator = 10_000
        case .shares(let parts):
            guard !parts.isEmpty else { throw ServiceError.invalidInput(field: "parts", reason: "must name at least one member") }
            guard parts.values.allSatisfy({ $0 > 0 && $0 <= 1_000_000 }) else {
                throw ServiceError.invalidInput(field: "parts", reason: "shares must be whole numbers from 1 to 1000000")
            }
            weights = parts.map { ($0.key, $0.value) }
            denominator = parts.values.reduce(0, +)
        case .items(let itemised):
            return try splits(of: total, itemised)
        }
        return apportion(total, weights, denominator: denominator)
    }

    /// Each item divided by its own split; the tax and tip together divided in proportion to
    /// what each participant's items come to (weights = those subtotals), by the same rule.
    private static func splits(of total: Int64, _ itemised: Itemised) throws -> [(participant: Holder, amount: Int64)] {
        guard !itemised.items.isEmpty, itemised.items.count <= 200 else {
            throw ServiceError.invalidInput(field: "items", reason: "must list from 1 to 200 items")
        }
        guard itemised.tax >= 0, itemised.tip >= 0 else { throw ServiceError.invalidInput(field: "tax", reason: "tax and tip cannot be negative") }
        // Each part within the bound, so that their sum cannot overflow (200 items at most).
        guard itemised.tax <= Money.maximumMinorUnits, itemised.tip <= Money.maximumMinorUnits,
            itemised.items.allSatisfy({ $0.amount <= Money.maximumMinorUnits })
        else {
            throw ServiceError.invalidInput(
                field: "items", reason: "amounts, tax and tip must be at most \(Money.maximumMinorUnits) minor units each")
        }
        guard itemised.total == total else {
            throw ServiceError.invalidInput(
                field: "items", reason: "items, tax and tip add up to \(itemised.total) minor units, not the total \(total)")
        }
        var subtotals: [Holder: Int64] = [:]
        for (index, item) in itemised.items.enumerated() {
            let field = "items[\(index)]"
            _ = try Validate.text(item.description, field: "\(field).description", limit: 200)
            guard item.amount > 0 else { throw ServiceError.invalidInput(field: "\(field).amount", reason: "must be more than zero") }
            if case .items = item.split { throw ServiceError.invalidInput(field: "\(field).split", reason: "an item cannot have items") }
            do {
                for (holder, amount) in try splits(of: item.amount, item.split) { subtotals[holder, default: 0] += amount }
            } catch var error as ServiceError where error.code == .invalidInput {
                // "parts add up to …" becomes "items[2].parts add up to …".
                error.field = "\(field).\(error.field ?? "split")"
                error.message = "\(field).\(error.message)"
                throw error
            }
        }
        let extra = itemised.tax + itemised.tip
        let itemsTotal = total - extra
        // The extras' shares add up to `extra` (apportion), the subtotals to the items' total.
        var result = subtotals.sorted { $0.key < $1.key }.map { (participant: $0.key, amount: $0.value) }
        if extra > 0 {
            let extras = Dictionary(uniqueKeysWithValues: apportion(extra, result.map { ($0.participant, $0.amount) }, denominator: itemsTotal))
            result = result.map { ($0.participant, $0.amount + (extras[$0.participant] ?? 0)) }
        }
        return result
    }

    /// `total` × weight / `denominator` for each, rounded down, and the units left over one each
    /// to the largest remainders (then the smallest holders). The weights add up to `denominator`.
    /// total ≤ 2^31 and denominator ≤ 2^31: products stay far below Int64.max.
    private static func apportion(_ total: Int64, _ weights: [(Holder, Int64)], denominator: Int64) -> [(participant: Holder, amount: Int64)] {
        var result = weights.map { (participant: $0.0, amount: total * $0.1 / denominator, remainder: total * $0.1 % denominator) }
        result.sort { $0.participant < $1.participant }
        var left = total - result.reduce(0) { $0 + $1.amount }
        let order = result.indices.sorted { result[$0].remainder != result[$1].remainder ? result[$0].remainder > result[$1].remainder : $0 < $1 }
        for index in order where left > 0 {
            result[index].amount += 1
            left -= 1
        }
        return result.map { ($0.participant, $0.amount) }
    }
}

/// The fewest payments (at most n − 1 per currency) that bring every balance to zero: the
/// largest creditor is paid by the largest debtor, repeatedly. Ties are broken by user id, so the
/// suggestion is deterministic; no pair of people ever appears in both directions.
package enum SettleUp {
    package struct Payment: Sendable, Equatable, Codable {
        package var from: UserID
        package var to: UserID
        package var amount: Int64
        package var currency: String
        /// How the payer can pay it: one for each of the payee's handles an active provider pays
        /// in the currency (`PaymentService.withPayOptions`); empty until then.
        package var payOptions: [PayOption] = []

        enum CodingKeys: String, CodingKey { case from = "from_user_id", to = "to_user_id", amount, currency, payOptions = "pay_options" }

        package init(from: UserID, to: UserID, amount: Int64, currency: String, payOptions: [PayOption] = []) {
            self.from = from
            self.to = to
            self.amount = amount
            self.currency = currency
            self.payOptions = payOptions
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            from = try container.decode(UserID.self, forKey: .from)
            to = try container.decode(UserID.self, forKey: .to)
            amount = try container.decode(Int64.self, forKey: .amount)
            currency = try container.decode(String.self, forKey: .currency)
            payOptions = try container.decodeIfPresent([PayOption].self, forKey: .payOptions) ?? []
        }
    }

    /// - Parameter balances: per user and currency; positive = is owed. Each currency must sum to zero.
    package static func payments(_ balances: [(user: UserID, currency: String, balance: Int64)]) -> [Payment] {
        var payments: [Payment] = []
        for currency in Set(balances.map(\.currency)).sorted() {
            var creditors = balances.filter { $0.currency == currency && $0.balance > 0 }.map { ($0.user, $0.balance) }
            var debtors = balances.filter { $0.currency == currency && $0.balance < 0 }.map { ($0.user, -$0.balance) }
            while let creditorIndex = largest(creditors), let debtorIndex = largest(debtors) {
                let amount = min(creditors[creditorIndex].1, debtors[debtorIndex].1)
                payments.append(Payment(from: debtors[debtorIndex].0, to: creditors[creditorIndex].0, amount: amount, currency: currency))
                creditors[creditorIndex].1 -= amount
                debtors[debtorIndex].1 -= amount
                creditors.removeAll { $0.1 == 0 }
                debtors.removeAll { $0.1 == 0 }
            }
        }
        return payments
    }

    private static func largest(_ entries: [(UserID, Int64)]) -> Int? {
        entries.indices.max { entries[$0].1 != entries[$1].1 ? entries[$0].1 < entries[$1].1 : entries[$0].0 > entries[$1].0 }
    }
}
