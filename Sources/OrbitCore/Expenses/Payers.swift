import OrbitPostgres

/// Who paid an expense: one payer for all of it, or several with amounts that add up to the
/// total (issue 24; the database checks the sum again at commit, sql/150_expenses.sql).
enum Payers {
    struct Resolved: Equatable {
        /// The main payer: `paid_by`.
        var paidBy: UserID
        /// Payer rows: empty when `paidBy` paid it all.
        var rows: [Payer]
    }

    /// - Parameters:
    ///   - payers: who paid how much, or nil for `paidBy` alone.
    ///   - namedPaidBy: whether `paidBy` was given (then it must be one of `payers`); otherwise
    ///     the main payer is the one who paid most (the smallest id among equals).
    static func resolve(_ payers: [UserID: Int64]?, paidBy: UserID, total: Int64, namedPaidBy: Bool) throws -> Resolved {
        guard let payers else { return Resolved(paidBy: paidBy, rows: []) }
        guard !payers.isEmpty else { throw ServiceError.invalidInput(field: "payers", reason: "must name at least one payer") }
        guard payers.values.allSatisfy({ $0 > 0 }) else { throw ServiceError.invalidInput(field: "payers", reason: "amounts must be more than zero") }
        guard payers.values.allSatisfy({ $0 <= Money.maximumMinorUnits }) else {
            throw ServiceError.invalidInput(field: "payers", reason: "amounts must be at most \(Money.maximumMinorUnits) minor units")
        }
        let sum = payers.values.reduce(0, +)
        guard sum == total else {
            throw ServiceError.invalidInput(field: "payers", reason: "add up to \(sum) minor units, not the total \(total)")
        }
        let main: UserID
        if namedPaidBy {
            guard payers[paidBy] != nil else { throw ServiceError.invalidInput(field: "paid_by", reason: "must be one of the payers") }
            main = paidBy
        } else {
            // Not empty (checked above).
            main = payers.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }[0].key
        }
        // One payer is no different from paid_by alone.
        guard payers.count > 1 else { return Resolved(paidBy: main, rows: []) }
        return Resolved(paidBy: main, rows: payers.sorted { $0.key < $1.key }.map { Payer(userID: $0.key, amount: $0.value) })
    }
}

extension Payer {
    /// A `transaction_payers` row (user_id, amount).
    init(row: PostgresRow) throws {
        userID = try row.decode("user_id")
        amount = Int64(try row.decode("amount", as: Int32.self))
    }
}
