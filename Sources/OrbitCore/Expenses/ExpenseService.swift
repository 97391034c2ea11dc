package import Foundation
import OrbitPostgres

/// Expenses (spec: Transactions, Splits): what was paid, by one or several payers, split among
/// members and their family members, with its history and attendance fees. Amounts are integer
/// minor units; the splits of a transaction add up to its total, checked by PostgreSQL at commit.
/// Settlements and balances are `SettlementService`'s, rates `RateService`'s, the export
/// `ExportService`'s, dues `DuesService`'s (docs/money.md).
package struct ExpenseService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// Adds an expense paid by `paidBy`, or by several `payers`, and split among members and
    /// their family members (any member may add one).
    /// - Parameters:
    ///   - total: what was paid, more than zero.
    ///   - payers: who paid how much, when several did: positive amounts adding up to `total`.
    ///     `paidBy` must be one of them; the largest payer is the main one otherwise.
    ///   - date: the day it was spent; today in the community's time zone when nil.
    ///   - time: the time of day it was spent, `HH:MM` in the community's time zone.
    ///   - receiptMedia: an image uploaded to the community's media, as its receipt.
    ///   - customCategory: one of the community's own categories, in use (not archived); the
    ///     expense's `category` is then `other`.
    ///   - income: money `paidBy` received for the group (a refund, a sale), shared by `split`:
    ///     `paidBy` then owes each of them their share (Settle Up's negative expense). An income
    ///     has one receiver: `payers` are a conflict (409).
    package func addExpense(
        in community: CommunityID, description: String, total: Money, paidBy: UserID? = nil, payers: [UserID: Int64]? = nil,
        split: SplitMethod, date: CivilDate? = nil, category: ExpenseCategory = .other, receiptURL: String? = nil,
        linkedEvent: EventID? = nil, notes: String? = nil, income: Bool = false, customCategory: CustomCategoryID? = nil, time: String? = nil,
        receiptMedia: MediaID? = nil, as actor: UserID
    ) async throws -> Expense {
        let description = try Validate.text(description, field: "description", limit: 500)
        let notes = try notes.map { try Validate.text($0, field: "notes", limit: 2000, multiline: true) }
        try total.requirePositive()
        if income, payers != nil { throw Self.incomeHasOneReceiver }
        let paying = try Payers.resolve(payers, paidBy: paidBy ?? actor, total: total.minorUnits, namedPaidBy: paidBy != nil)
        let splits = try SplitCalculator.splits(of: total.minorUnits, split)
        let receiptURL = try Validate.url(receiptURL, field: "receipt_url")
        let time = try Validate.timeOfDay(time, field: "transaction_time")
        let entry = NewTransaction(
            community: community, type: income ? .income : .expense, description: description, total: total, paidBy: paying.paidBy,
            payers: paying.rows,
            category: customCategory == nil ? category : .other, categoryID: customCategory, receiptURL: receiptURL, notes: notes,
            linkedEvent: linkedEvent, date: date, time: time, receiptMedia: receiptMedia, splits: splits, splitInput: split)
        return try await runner.asUser(actor) { connection in
            if let expense = try await insert(entry, as: actor, adminOnly: false, on: connection) { return expense }
            // Nothing was written: the checks the statement holds say why.
            try await runner.requireMember(actor, of: community, on: connection)
            try await runner.requireActiveMembers(entry.people, of: community, on: connection)
            try await requireFamilyOfMembers(entry.familyMembers, of: community, on: connection)
            throw ServiceError.changedMeanwhile
        }
    }

    /// The split of an expense added without one (docs/money.md, "Who a new split takes"): the
    /// community's `defaultSplit`, `equal` (when unset) among the members in new splits (in it and
    /// active), or `shares` by their default weights; for a member.
    /// - Throws: `conflict` when nobody is in new splits.
    package func defaultSplit(in community: CommunityID, as actor: UserID) async throws -> SplitMethod {
        let rows = try await runner.asUserReading(actor) { connection in
            try await runner.queryAsMember(
                actor, of: community, on: connection,
                """
                SELECT m.user_id, m.default_weight, c.settings ->> 'defaultSplit' AS method
                FROM members m JOIN communities c ON c.id = m.community_id
                WHERE m.community_id = \(community) AND m.left_at IS NULL AND m.active
                ORDER BY m.joined_at, m.id
                """)
        }
        guard let first = rows.first else {
            throw ServiceError.conflict(field: "split", reason: "nobody here is in new splits: say who shares this expense")
        }
        let people = try rows.map { row in (try row.decode("user_id", as: UserID.self), Int64(try row.decode("default_weight", as: Int32.self))) }
        guard try first.decode("method", as: String?.self) == "shares" else { return .equal(people.map(\.0)) }
        return .shares(Dictionary(uniqueKeysWithValues: people))
    }

    /// Several payers given for an income, which has one receiver (`paid_by`): a conflict with
    /// what an income is (409, as a stored income refuses payers), not a malformed field.
    static let incomeHasOneReceiver = ServiceError.conflict(
        field: "payers", reason: "an income has one receiver: give paid_by, the member who received the money")

    /// A transaction about to be written with its splits.
    struct NewTransaction {
        var community: CommunityID
        var type: TransactionType
        var description: String
        var total: Money
        var paidBy: UserID
        /// Payer rows: empty when `paidBy` paid it all.
        var payers: [Payer] = []
        var category: ExpenseCategory
        /// One of the community's own categories (`category` is then `other`).
        var categoryID: CustomCategoryID? = nil
        var receiptURL: String?
        var notes: String?
        var linkedEvent: EventID?
        /// Nil: today in the community's time zone, by the services' clock.
        var date: CivilDate?
        /// `HH:MM`, validated.
        var time: String? = nil
        var receiptMedia: MediaID? = nil
        var splits: [(participant: Holder, amount: Int64)]
        /// The recurring charge and day this expense is the occurrence of (stored once: a unique key).
        var occurrence: (charge: RecurringChargeID, day: CivilDate)?
        /// A settlement paid in another currency: what changed hands and the rate (1 paid
        /// currency = rate of the transaction's), `total` being the converted amount.
        var conversion: Conversion?
        /// The split as entered, kept for edits (nil for settlements).
        var splitInput: SplitMethod?

        /// Every user the transaction names, once each (family members' guardians are checked
        /// through `familyMembers`).
        var people: [UserID] { Array(Set([paidBy] + payers.map(\.userID) + splits.compactMap(\.participant.userID))).sorted() }
        var familyMembers: [FamilyMemberID] { splits.compactMap(\.participant.familyMemberID).sorted() }
        var userShares: [(user: UserID, amount: Int64)] { splits.compactMap { split in split.participant.userID.map { ($0, split.amount) } } }
        var familyShares: [(member: FamilyMemberID, amount: Int64)] {
            splits.compactMap { split in split.participant.familyMemberID.map { ($0, split.amount) } }
        }
    }

    /// Writes `entry`, its splits and its payers in one statement, and returns it, if the acting
    /// user is an active member of the community (an admin, with `adminOnly`), everyone it names
    /// is an active member too, and each family member it names belongs to one; nil, with
    /// nothing written, otherwise. Its date, when not given, is today in the community's time
    /// zone (`orbit.civil_date` with the services' clock). The database still checks the rest:
    /// row-level security, payer and split users members, a family member's share owed by their
    /// guardian, and at COMMIT that the splits and the payers add up to the total.
    func insert(_ entry: NewTransaction, as actor: UserID, adminOnly: Bool, on connection: PostgresConnection) async throws -> Expense? {
        let id = TransactionID.new(in: .transactions)
        let people = entry.people
        let family = entry.familyMembers
        // Only the parts this expense has: a part left empty (no child's share, no payer rows)
        // would still cost its tables' policy checks, and an empty INSERT its statement
        // triggers (docs/benchmarks.md, "Adding an expense").
        let familyMembersAreMembers: PostgresQuery =
            family.isEmpty
            ? ""
            : """
            AND (SELECT count(*) FROM family_members f
                 JOIN members m ON m.community_id = c.id AND m.user_id = f.user_id AND m.left_at IS NULL
                 WHERE f.id = ANY(\(family.map(\.uuid)))) = \(family.count)
            """
        let familySplits: PostgresQuery =
            entry.familyShares.isEmpty
            ? ""
            : """
            UNION ALL
            SELECT t.id, t.community_id, f.user_id, f.id, x.amount
            FROM t, unnest(\(entry.familyShares.map(\.member.uuid)), \(entry.familyShares.map { Int32($0.amount) })) AS x (id, amount)
            JOIN family_members f ON f.id = x.id
            """
        let familyNames: (column: PostgresQuery, join: PostgresQuery) =
            entry.familyShares.isEmpty ? ("NULL::text", "") : ("f.name", "LEFT JOIN family_members f ON f.id = s.family_member_id")
        let payerRows: PostgresQuery =
            entry.payers.isEmpty
            ? "SELECT NULL::uuid AS user_id, NULL::integer AS amount WHERE false"
            : """
            INSERT INTO transaction_payers (transaction_id, community_id, user_id, amount)
            SELECT t.id, t.community_id, y.user_id, y.amount
            FROM t, unnest(\(entry.payers.map(\.userID.uuid)), \(entry.payers.map { Int32($0.amount) })) AS y (user_id, amount)
            RETURNING user_id, amount
            """
        // One round trip: the transaction with its splits and payers, then its history entry.
        let results: [PostgresRows]
        do {
            results = try await connection.pipeline([
                """
                WITH allowed AS (
                    SELECT c.settings ->> 'timezone' AS timezone FROM communities c
                    JOIN members actor ON actor.community_id = c.id AND actor.user_id = \(actor) AND actor.left_at IS NULL
                    WHERE c.id = \(entry.community) AND (NOT \(adminOnly) OR actor.role = 'admin')
                      AND (SELECT count(*) FROM members m WHERE m.community_id = c.id AND m.left_at IS NULL AND m.user_id = ANY(\(people.map(\.uuid))))
                          = \(people.count)
                      \(familyMembersAreMembers)
                ),
                t AS (
                    INSERT INTO transactions (id, community_id, created_by, type, description, total_amount, currency, paid_by, category,
                        category_id, receipt_url, notes, linked_event_id, transaction_date, transaction_time, receipt_media_id,
                        recurring_charge_id, occurrence_on, paid_amount, paid_currency, exchange_rate,
                        split_input)
                    SELECT \(id), \(entry.community), \(actor), \(entry.type)::transaction_type, \(entry.description), \(Int32(entry.total.minorUnits)),
                        \(entry.total.currency.code), \(entry.paidBy), \(entry.category)::expense_category, \(entry.categoryID),
                        \(entry.receiptURL), \(entry.notes),
                        \(entry.linkedEvent),
                        coalesce(\(entry.date), orbit.civil_date(\(runner.now()), allowed.timezone)), \(entry.time)::time,
                        \(entry.receiptMedia), \(entry.occurrence?.charge), \(entry.occurrence?.day),
                        \(entry.conversion.map { Int32($0.paidAmount) }), \(entry.conversion?.paidCurrency), \(entry.conversion?.rate)::numeric,
                        \(try entry.splitInput.map { try PostgresJSON(encoding: $0) })
                    FROM allowed
                    RETURNING \(unescaped: Expense.columns)
                ),
                s AS (
                    INSERT INTO splits (transaction_id, community_id, user_id, family_member_id, amount)
                    SELECT t.id, t.community_id, x.user_id, NULL, x.amount
                    FROM t, unnest(\(entry.userShares.map(\.user.uuid)), \(entry.userShares.map { Int32($0.amount) })) AS x (user_id, amount)
                    \(familySplits)
                    RETURNING id, user_id, family_member_id, amount, is_settled, settled_at, settled_via
                ),
                p AS (\(payerRows))
                SELECT t.*, s.id AS split_id, s.user_id AS split_user_id, s.family_member_id AS split_family_member_id,
                    \(familyNames.column) AS split_family_member_name, s.amount AS split_amount, s.is_settled AS split_is_settled,
                    s.settled_at AS split_settled_at, s.settled_via AS split_settled_via,
                    (SELECT array_agg(p.user_id ORDER BY p.user_id) FROM p) AS payer_ids,
                    (SELECT array_agg(p.amount ORDER BY p.user_id) FROM p) AS payer_amounts
                FROM t LEFT JOIN s ON true \(familyNames.join)
                ORDER BY s.user_id, s.family_member_id NULLS FIRST
                """,
                MoneyHistory.recordCreation(of: id, by: actor),
                MoneyNotifications.added(id, entry.type, by: actor),
            ])
        } catch let error as PostgresError where error.constraint == "transactions_category_fkey" {
            throw ServiceError.notFound("Category \(entry.categoryID?.description ?? "")")
        } catch let error as PostgresError where error.constraint == "transactions_linked_event_fkey" {
            // The linked event is an event of this community, or none (schemathesis sent a made-up id).
            throw ServiceError.notFound("Event \(entry.linkedEvent?.description ?? "")")
        }
        let rows = results[0]
        guard let first = rows.first else { return nil }
        let payerIDs = try first.decode("payer_ids", as: [UUID]?.self) ?? []
        let payerAmounts = try first.decode("payer_amounts", as: [Int32]?.self) ?? []
        let splits = try rows.compactMap { row -> Split? in
            guard let id = try row.decode("split_id", as: SplitID?.self) else { return nil }
            return Split(
                id: id, userID: try row.decode("split_user_id"), familyMemberID: try row.decode("split_family_member_id"),
                familyMemberName: try row.decode("split_family_member_name"), amount: Int64(try row.decode("split_amount", as: Int32.self)),
                isSettled: try row.decode("split_is_settled"), settledAt: try row.decode("split_settled_at"),
                settledVia: try row.decode("split_settled_via"))
        }
        return try Expense(
            row: first, payers: zip(payerIDs, payerAmounts).map { Payer(userID: UserID($0), amount: Int64($1)) }, splits: splits)
    }

    /// A split's columns (`Split(row:)`), selected from `splitSource`.
    static let splitColumns = """
        s.transaction_id, s.id, s.user_id, s.family_member_id, f.name AS family_member_name, s.amount, s.is_settled, s.settled_at,
        s.settled_via
        """
    static let splitSource = "splits s LEFT JOIN family_members f ON f.id = s.family_member_id"
    static let splitOrder = "s.user_id, s.family_member_id NULLS FIRST"

    /// Changes an expense (its creator or an admin); new amount or split replace the splits
    /// atomically, checked against the total at commit; new payers replace the payers.
    /// - Parameters:
    ///   - total: the new total, in the expense's currency, or in another one while no split is
    ///     settled (its currency then changes; not a settlement paid in another currency). An
    ///     expense paid by several people needs its payers again with a new total (they must add
    ///     up to it).
    ///   - paidBy: a new single payer (who paid it all), or the main one among new `payers`.
    ///   - date: a new day (a settlement's: today or earlier where the community is).
    ///   - linkedEvent: an event of the community to link, `.some(nil)` to unlink.
    ///   - category: a built-in category (the expense leaves its own category, if it had one).
    ///   - time: a time of day, `HH:MM`, or `.some(nil)` to clear it.
    ///   - receiptMedia: an image uploaded to the community as the receipt, `.some(nil)` to remove it.
    ///   - customCategory: one of the community's own categories, in use (`category` becomes
    ///     `other`), or `.some(nil)` to leave it for `category` (or `other`).
    package func updateExpense(
        _ id: TransactionID, description: String? = nil, total newTotal: Money? = nil, paidBy: UserID? = nil,
        payers newPayers: [UserID: Int64]? = nil, split: SplitMethod? = nil, category: ExpenseCategory? = nil, notes: String?? = nil,
        date: CivilDate? = nil, linkedEvent: EventID?? = nil, customCategory: CustomCategoryID?? = nil,
        time: String?? = nil, receiptMedia: MediaID?? = nil, as actor: UserID
    ) async throws -> Expense {
        let time = try time.map { try Validate.timeOfDay($0, field: "transaction_time") }
        let description = try description.map { try Validate.text($0, field: "description", limit: 500) }
        let notes = try notes.map { try $0.map { try Validate.text($0, field: "notes", limit: 2000, multiline: true) } }
        try newTotal?.requirePositive()
        return try await runner.asUser(actor) { connection in
            // Locked: an edit computes the new row from the current one (the total a split
            // divides, the fields it keeps), so two edits at once must not both start from the
            // same version — the second would write the first's total back over its splits.
            // FOR UPDATE applies the UPDATE policy, under which an expense the actor may not
            // edit looks missing: only then is it read again unlocked, for the right error.
            guard let current = try await lockedForEdit(id, actor, on: connection) else {
                try await requireExpenseEditor(try await expense(id, on: connection), actor, on: connection)
                throw ServiceError.changedMeanwhile
            }
            let currency = try Currency.parse(current.currency)
            if let newTotal, newTotal.currency != currency {
                // Another currency: the same money counted anew, while nobody has settled a part of it.
                guard current.conversion == nil else {
                    throw ServiceError.conflict(
                        field: "currency", reason: "this settlement was paid in another currency: delete it and record it again")
                }
                guard !current.splits.contains(where: \.isSettled) else {
                    throw ServiceError.conflict(field: "currency", reason: "a share of this expense is settled: its currency stays")
                }
            }
            if let date, current.type == .settlement, date > (try await runner.today(in: current.communityID, on: connection)) {
                throw ServiceError.conflict(field: "transaction_date", reason: "a settlement is paid today or earlier where the community is")
            }
            if let conversion = current.conversion, newTotal.map({ $0.minorUnits != current.totalAmount }) ?? false {
                throw ServiceError.conflict(
                    field: "amount",
                    reason: "this settlement's amount is what \(conversion.paidAmount) \(conversion.paidCurrency) at \(conversion.rate) gives: "
                        + "delete it and record the payment again")
            }
            let total = newTotal ?? Money(minorUnits: current.totalAmount, currency: currency)
            if current.type == .income, newPayers != nil { throw Self.incomeHasOneReceiver }
            let paying: Payers.Resolved?
            if newPayers != nil || paidBy != nil {
                paying = try Payers.resolve(
                    newPayers, paidBy: paidBy ?? current.paidBy, total: total.minorUnits, namedPaidBy: paidBy != nil)
            } else if newTotal != nil, current.payers.count > 1 {
                throw ServiceError.invalidInput(
                    field: "payers", reason: "this expense was paid by several people: give its payers again, adding up to the new total")
            } else {
                paying = nil
            }
            let splits: [(participant: Holder, amount: Int64)]?
            switch (split, newTotal, current.splitInput) {
            case (let split?, _, _): splits = try SplitCalculator.splits(of: total.minorUnits, split)
            // A new total alone is divided again as the split was entered.
            case (nil, _?, .exact?):
                throw ServiceError.invalidInput(
                    field: "split", reason: "this expense was split by exact amounts: give the split again, adding up to the new total")
            case (nil, _?, .items?):
                throw ServiceError.invalidInput(
                    field: "split", reason: "this expense was itemised: give its items again, adding up to the new total with tax and tip")
            case (nil, _?, let entered?): splits = try SplitCalculator.splits(of: total.minorUnits, entered)
            // Entered before splits were kept: equally among the same people.
            case (nil, _?, nil): splits = try SplitCalculator.splits(of: total.minorUnits, .equal(current.splits.map(\.participant)))
            case (nil, nil, _): splits = nil
            }
            return try await replace(
                current, total: total, paying: paying, splits: splits, splitInput: split, description,
                Self.categoryChange(category, customCategory), notes: notes, date: date, linkedEvent: linkedEvent,
                time: time, receiptMedia: receiptMedia, as: actor, on: connection)
        }
    }

    /// What an edit does to an expense's categories: a built-in `category` (nil: unchanged), and
    /// whether its own category changes to `custom` (nil: none).
    struct CategoryChange {
        var category: ExpenseCategory?
        var changesCustom: Bool
        var custom: CustomCategoryID?
    }

    /// One of the community's own categories wins over a built-in one given with it, and makes
    /// `category` `other`; a built-in one alone leaves the community's own.
    static func categoryChange(_ category: ExpenseCategory?, _ customCategory: CustomCategoryID??) -> CategoryChange {
        if let custom = customCategory ?? nil { return CategoryChange(category: .other, changesCustom: true, custom: custom) }
        return CategoryChange(category: category, changesCustom: customCategory != nil || category != nil, custom: nil)
    }

    /// The expense, locked, if the acting user may edit it (its creator, or an admin of its
    /// community, an active member either way); nil otherwise.
    private func lockedForEdit(_ id: TransactionID, _ actor: UserID, on connection: PostgresConnection) async throws -> Expense? {
        let results = try await connection.pipeline([
            """
            SELECT \(unescaped: Expense.columns) FROM transactions t
            WHERE t.id = \(id) AND t.deleted_at IS NULL
              AND EXISTS (
                  SELECT FROM members m WHERE m.community_id = t.community_id AND m.user_id = \(actor) AND m.left_at IS NULL
                    AND (m.role = 'admin' OR t.created_by = \(actor)))
            FOR UPDATE
            """,
            "SELECT \(unescaped: Self.splitColumns) FROM \(unescaped: Self.splitSource) WHERE s.transaction_id = \(id) ORDER BY \(unescaped: Self.splitOrder)",
            "SELECT transaction_id, user_id, amount FROM transaction_payers WHERE transaction_id = \(id) ORDER BY user_id",
        ])
        guard let row = results[0].first else { return nil }
        return try Expense(row: row, payers: try results[2].map(Payer.init(row:)), splits: try results[1].map(Split.init(row:)))
    }

    /// Updates the transaction; `paying`, when given, replaces its payer (and payer rows);
    /// `splits`, when given, replace the old ones, if every one of their people is an active
    /// member (a family member's guardian, for theirs). One round trip. paid_by changes in a
    /// statement of its own, before the payer rows (sql/155_balances.sql: the journal reads paid_by).
    private func replace(
        _ current: Expense, total: Money, paying: Payers.Resolved?, splits: [(participant: Holder, amount: Int64)]?, splitInput: SplitMethod?,
        _ description: String?, _ category: CategoryChange, notes: String?? = nil, date: CivilDate? = nil, linkedEvent: EventID?? = nil,
        time: String?? = nil, receiptMedia: MediaID?? = nil, as actor: UserID, on connection: PostgresConnection
    ) async throws -> Expense {
        let activity = UUID()
        var statements: [PostgresQuery] = [
            MoneyHistory.recordBefore(activity, .edited, transaction: current.id, by: actor),
            """
            UPDATE transactions SET total_amount = \(Int32(total.minorUnits)), currency = \(total.currency.code),
                description = coalesce(\(description), description),
                category = coalesce(\(category.category)::expense_category, category),
                category_id = CASE WHEN \(category.changesCustom) THEN \(category.custom) ELSE category_id END, paid_by = coalesce(\(paying?.paidBy), paid_by),
                split_input = coalesce(\(try splitInput.map { try PostgresJSON(encoding: $0) }), split_input),
                notes = CASE WHEN \(notes != nil) THEN \(notes ?? nil) ELSE notes END,
                transaction_date = coalesce(\(date), transaction_date),
                linked_event_id = CASE WHEN \(linkedEvent != nil) THEN \(linkedEvent ?? nil) ELSE linked_event_id END,
                transaction_time = CASE WHEN \(time != nil) THEN \(time ?? nil)::time ELSE transaction_time END,
                receipt_media_id = CASE WHEN \(receiptMedia != nil) THEN \(receiptMedia ?? nil) ELSE receipt_media_id END
            WHERE id = \(current.id)
            RETURNING \(unescaped: Expense.columns)
            """,
        ]
        var checks: [(statement: Int, rows: Int)] = []
        let entry = NewTransaction(
            community: current.communityID, type: current.type, description: "", total: total, paidBy: paying?.paidBy ?? current.paidBy,
            payers: paying?.rows ?? [], category: current.category, splits: splits ?? [])
        let people = entry.people
        let family = entry.familyMembers
        let community = current.communityID
        let peopleIDs = people.map(\.uuid)
        let familyIDs = family.map(\.uuid)
        if let paying {
            statements.append("DELETE FROM transaction_payers WHERE transaction_id = \(current.id)")
            checks.append((statements.count, paying.rows.count))
            statements.append(
                """
                INSERT INTO transaction_payers (transaction_id, community_id, user_id, amount)
                SELECT \(current.id), \(community), y.user_id, y.amount
                FROM unnest(\(paying.rows.map(\.userID.uuid)), \(paying.rows.map { Int32($0.amount) })) AS y (user_id, amount)
                WHERE (SELECT count(*) FROM members m WHERE m.community_id = \(community) AND m.left_at IS NULL AND m.user_id = ANY(\(peopleIDs)))
                      = \(people.count)
                """
            )
        }
        if let splits {
            statements.append("DELETE FROM splits WHERE transaction_id = \(current.id)")
            checks.append((statements.count, splits.count))
            // Written only if everyone is an active member and each family member belongs to one.
            statements.append(
                """
                WITH allowed AS (
                    SELECT WHERE (SELECT count(*) FROM members m
                                  WHERE m.community_id = \(community) AND m.left_at IS NULL AND m.user_id = ANY(\(peopleIDs))) = \(people.count)
                      AND (SELECT count(*) FROM family_members f
                           JOIN members m ON m.community_id = \(community) AND m.user_id = f.user_id AND m.left_at IS NULL
                           WHERE f.id = ANY(\(familyIDs))) = \(family.count)
                )
                INSERT INTO splits (transaction_id, community_id, user_id, family_member_id, amount)
                SELECT \(current.id), \(community), x.user_id, NULL, x.amount
                FROM allowed, unnest(\(entry.userShares.map(\.user.uuid)), \(entry.userShares.map { Int32($0.amount) })) AS x (user_id, amount)
                UNION ALL
                SELECT \(current.id), \(community), f.user_id, f.id, x.amount
                FROM allowed, unnest(\(entry.familyShares.map(\.member.uuid)), \(entry.familyShares.map { Int32($0.amount) })) AS x (id, amount)
                JOIN family_members f ON f.id = x.id
                """
            )
        }
        statements.append(MoneyHistory.recordAfter(activity))
        statements.append(
            MoneyNotifications.edited(
                current.id, before: current.splits.reduce(into: [:]) { $0[$1.userID, default: 0] += $1.amount },
                currencyChanged: total.currency.code != current.currency, by: actor))
        statements.append(
            "SELECT \(unescaped: Self.splitColumns) FROM \(unescaped: Self.splitSource) WHERE s.transaction_id = \(current.id) ORDER BY \(unescaped: Self.splitOrder)"
        )
        statements.append("SELECT transaction_id, user_id, amount FROM transaction_payers WHERE transaction_id = \(current.id) ORDER BY user_id")
        let results: [PostgresRows]
        do {
            results = try await connection.pipeline(statements)
        } catch let error as PostgresError where error.constraint == "transactions_linked_event_fkey" {
            throw ServiceError.notFound("Event \(linkedEvent??.description ?? "")")
        }
        if checks.contains(where: { results[$0.statement].affectedRows != $0.rows }) {
            // Someone named is not an active member: say who (the transaction rolls back).
            try await runner.requireActiveMembers(people, of: current.communityID, on: connection)
            try await requireFamilyOfMembers(family, of: current.communityID, on: connection)
            throw ServiceError.changedMeanwhile
        }
        guard let row = results[1].first else { throw ServiceError.notFound("Expense \(current.id)") }
        return try Expense(
            row: row, payers: try results[results.count - 1].map(Payer.init(row:)),
            splits: try results[results.count - 2].map(Split.init(row:)))
    }

    /// Throws unless each family member belongs to an active member of the community.
    func requireFamilyOfMembers(_ family: [FamilyMemberID], of community: CommunityID, on connection: PostgresConnection) async throws {
        guard !family.isEmpty else { return }
        let found = Set(
            try await connection.query(
                """
                SELECT f.id FROM family_members f
                JOIN members m ON m.community_id = \(community) AND m.user_id = f.user_id AND m.left_at IS NULL
                WHERE f.id = ANY(\(family.map(\.uuid)))
                """
            ).map { try $0.decode("id", as: FamilyMemberID.self) })
        if let missing = Set(family).subtracting(found).sorted().first {
            throw ServiceError.conflict(field: "family_member", reason: "\(missing) is not a family member of anyone in this community")
        }
    }

    /// Deletes (soft) an expense or settlement: it no longer counts in balances.
    package func deleteExpense(_ id: TransactionID, as actor: UserID) async throws {
        try await runner.asUser(actor) { connection in
            let activity = UUID()
            let results = try await connection.pipeline([
                MoneyHistory.recordBefore(activity, .deleted, transaction: id, by: actor),
                """
                UPDATE transactions t SET deleted_at = now()
                WHERE t.id = \(id) AND t.deleted_at IS NULL
                  AND EXISTS (
                      SELECT FROM members m WHERE m.community_id = t.community_id AND m.user_id = \(actor) AND m.left_at IS NULL
                        AND (m.role = 'admin' OR t.created_by = \(actor)))
                """,
                MoneyHistory.recordAfter(activity),
                MoneyNotifications.deleted(id, by: actor),
            ])
            guard results[1].affectedRows == 1 else {
                // Nothing was deleted: the checks the statement holds say why.
                try await requireExpenseEditor(try await expense(id, on: connection), actor, on: connection)
                throw ServiceError.changedMeanwhile
            }
        }
    }

    /// Restores a deleted expense or settlement (One By Two's undo): it counts in balances again,
    /// as it was. Its creator or an admin, for the 30 days a deleted community can be restored
    /// too (`CommunityService.restoreWindow`, by the services' clock); after them it is a
    /// conflict, as for a community. Money's history records it (`restored`).
    /// - Returns: the expense, live again.
    package func restoreExpense(_ id: TransactionID, as actor: UserID) async throws -> Expense {
        let cutoff = runner.now().addingTimeInterval(-CommunityService.restoreWindow)
        return try await runner.asUser(actor) { connection in
            let activity = UUID()
            let results = try await connection.pipeline([
                MoneyHistory.recordBefore(activity, .restored, transaction: id, by: actor),
                """
                UPDATE transactions t SET deleted_at = NULL
                WHERE t.id = \(id) AND t.deleted_at IS NOT NULL AND t.deleted_at > \(cutoff)
                  AND EXISTS (
                      SELECT FROM members m WHERE m.community_id = t.community_id AND m.user_id = \(actor) AND m.left_at IS NULL
                        AND (m.role = 'admin' OR t.created_by = \(actor)))
                """,
                MoneyHistory.recordAfter(activity),
            ])
            if results[1].affectedRows == 1 { return try await expense(id, on: connection) }
            // Nothing was restored: say why.
            guard
                let row = try await connection.query(
                    """
                    SELECT community_id, created_by, deleted_at, deleted_at <= \(cutoff) AS too_old
                    FROM transactions WHERE id = \(id)
                    """
                ).first
            else { throw ServiceError.notFound("Expense \(id)") }
            let (community, creator, deletedAt, tooOld) = try row.decode((CommunityID, UserID, Date?, Bool?).self)
            let role = try await runner.requireMember(actor, of: community, on: connection)
            guard role == .admin || creator == actor else {
                throw ServiceError.forbidden(rule: "members can restore only the expenses they logged")
            }
            guard deletedAt != nil else { throw ServiceError.conflict("Expense \(id) is not deleted.") }
            if tooOld == true { throw ServiceError.conflict("Expense \(id) was deleted more than 30 days ago and can no longer be restored.") }
            throw ServiceError.changedMeanwhile
        }
    }

    package func expense(_ id: TransactionID, as actor: UserID) async throws -> Expense {
        try await runner.asUser(actor) { try await expense(id, on: $0) }
    }

    /// The order of expenses: newest first.
    static let expenseOrder = Paging.Keyset.timeAndID("expenses")

    /// A community's expenses and settlements, newest first.
    package func expenses(
        in community: CommunityID, filter: ExpenseFilter = ExpenseFilter(), limit: Int = 50, cursor: String? = nil, as actor: UserID
    ) async throws -> Page<Expense> {
        try Validate.limit(limit, in: 1...500)
        let after = try Self.expenseOrder.decode(cursor)
        // `to` before `from` is an empty range: nothing is dated in it (not an error, so that
        // any two valid dates make a valid request, as openapi.yaml says).
        if let from = filter.from, let to = filter.to, to < from { return Page(items: [], nextCursor: nil) }
        return try await runner.asUserReading(actor) { connection in
            let rows = try await runner.queryAsMember(
                actor, of: community, on: connection,
                """
                SELECT \(unescaped: Expense.columns), \(unescaped: Self.expenseOrder.columns) FROM transactions t
                WHERE community_id = \(community) AND deleted_at IS NULL
                  AND (\(filter.member)::uuid IS NULL OR paid_by = \(filter.member)
                       OR EXISTS (SELECT FROM splits s WHERE s.transaction_id = t.id AND s.user_id = \(filter.member))
                       OR EXISTS (SELECT FROM transaction_payers p WHERE p.transaction_id = t.id AND p.user_id = \(filter.member)))
                  AND (\(filter.category)::expense_category IS NULL OR category = \(filter.category)::expense_category)
                  AND (\(filter.categoryID)::uuid IS NULL OR category_id = \(filter.categoryID))
                  AND (\(filter.from)::date IS NULL OR transaction_date >= \(filter.from))
                  AND (\(filter.to)::date IS NULL OR transaction_date <= \(filter.to))
                  AND \(try Self.expenseOrder.after(after))
                ORDER BY \(unescaped: Self.expenseOrder.order) LIMIT \(limit + 1)
                """
            )
            let shown = Array(rows.prefix(limit))
            let details = try await details(of: try shown.map { try $0.decode("id", as: TransactionID.self) }, on: connection)
            return try Self.expenseOrder.page(rows, limit: limit) { row in
                let id = try row.decode("id", as: TransactionID.self)
                return try Expense(row: row, payers: details.payers[id] ?? [], splits: details.splits[id] ?? [])
            }
        }
    }

    /// - Parameter lock: `FOR UPDATE`, for a read that the same transaction will write back.
    func expense(_ id: TransactionID, on connection: PostgresConnection, lock: Bool = false) async throws -> Expense {
        guard
            let row = try await connection.query(
                "SELECT \(unescaped: Expense.columns) FROM transactions WHERE id = \(id) AND deleted_at IS NULL \(unescaped: lock ? "FOR UPDATE" : "")"
            ).first
        else { throw ServiceError.notFound("Expense \(id)") }
        let details = try await details(of: [id], on: connection)
        return try Expense(row: row, payers: details.payers[id] ?? [], splits: details.splits[id] ?? [])
    }

    /// The splits (in user order, a user's own share first) and payer rows of several
    /// transactions, in one round trip.
    func details(
        of ids: [TransactionID], on connection: PostgresConnection
    ) async throws -> (splits: [TransactionID: [Split]], payers: [TransactionID: [Payer]]) {
        guard !ids.isEmpty else { return ([:], [:]) }
        let results = try await connection.pipeline([
            """
            SELECT \(unescaped: Self.splitColumns) FROM \(unescaped: Self.splitSource)
            WHERE s.transaction_id = ANY(\(ids.map(\.uuid))) ORDER BY s.transaction_id, \(unescaped: Self.splitOrder)
            """,
            "SELECT transaction_id, user_id, amount FROM transaction_payers WHERE transaction_id = ANY(\(ids.map(\.uuid))) ORDER BY user_id",
        ])
        var splits: [TransactionID: [Split]] = [:]
        for row in results[0] {
            splits[try row.decode("transaction_id", as: TransactionID.self), default: []].append(try Split(row: row))
        }
        var payers: [TransactionID: [Payer]] = [:]
        for row in results[1] {
            payers[try row.decode("transaction_id", as: TransactionID.self), default: []].append(try Payer(row: row))
        }
        return (splits, payers)
    }

    func requireExpenseEditor(_ expense: Expense, _ actor: UserID, on connection: PostgresConnection) async throws {
        let role = try await runner.requireMember(actor, of: expense.communityID, on: connection)
        guard role == .admin || expense.createdBy == actor else {
            throw ServiceError.forbidden(rule: "members can change only the expenses they logged")
        }
    }
}

extension ExpenseService {
    /// Which of users and family members each id is, for a split naming either by id; an id
    /// the acting user does not know is left out (taken as a user id, it is refused where the
    /// expense is written, after the community's own checks).
    package func participants(_ ids: [UUID], as actor: UserID) async throws -> [UUID: Holder] {
        guard !ids.isEmpty else { return [:] }
        return try await runner.asUserReading(actor) { try await runner.holders(ids, field: nil, on: $0) }
    }
}
