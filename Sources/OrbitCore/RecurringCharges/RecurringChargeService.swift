package import Foundation
import OrbitPostgres

/// Recurring expenses and recurring dues (issue 24, item 4; docs/money.md).
///
/// A template repeats by an RRULE whose days are the community's days: each day it gives
/// creates one expense dated that day, or dues due that day, as the template's creator. The
/// scheduled job (`createDue`) creates what is due on every server at once without creating
/// anything twice, and after downtime catches up every day it missed. Members pause a template
/// (days that pass meanwhile are not created), resume it, skip one day, or end it.
package struct RecurringChargeService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// Days created per template in one transaction; a template further behind is caught up
    /// over the next runs.
    static let catchUpLimit = 60

    /// Sets up a recurring expense (any member): `amount` paid by `paidBy` (default the acting
    /// user) each time, split by `split`. Occurrences already due (`startsOn` today or
    /// before) are created at once.
    /// - Parameters:
    ///   - rule: an RRULE (`FREQ=MONTHLY;BYMONTHDAY=1`); its days are the community's days.
    ///   - startsOn: the rule's first day (DTSTART); default today in the community's zone.
    package func createExpense(
        in community: CommunityID, description: String, amount: Money, paidBy: UserID? = nil, split: SplitMethod,
        category: ExpenseCategory = .other, rule: RecurrenceRule, startsOn: CivilDate? = nil, as actor: UserID
    ) async throws -> RecurringCharge {
        let description = try Validate.text(description, field: "description", limit: 500)
        try amount.requirePositive()
        // The split must work for the amount now: each occurrence splits the same amount.
        let shares = try SplitCalculator.splits(of: amount.minorUnits, split)
        let paidBy = paidBy ?? actor
        let template = Template(
            community: community, kind: .expense, description: description, amount: amount, category: category, paidBy: paidBy,
            split: split, rule: rule)
        return try await create(template, startsOn: startsOn, as: actor) { connection in
            let people = Array(Set([paidBy] + shares.compactMap(\.participant.userID))).sorted()
            try await runner.requireActiveMembers(people, of: community, on: connection)
            try await ExpenseService(runner).requireFamilyOfMembers(
                shares.compactMap(\.participant.familyMemberID), of: community, on: connection)
        }
    }

    /// Sets up recurring dues (admins): dues called `name`, of `amount` per member, due on each
    /// day the rule gives. Dues already due are created at once.
    package func createDues(
        in community: CommunityID, name: String, amount: Money, rule: RecurrenceRule, startsOn: CivilDate? = nil, as actor: UserID
    ) async throws -> RecurringCharge {
        let name = try Validate.text(name, field: "name", limit: 200)
        try amount.requirePositive()
        let template = Template(community: community, kind: .dues, description: name, amount: amount, rule: rule)
        return try await create(template, startsOn: startsOn, as: actor) { _ in }
    }

    /// What a new template holds, checked.
    private struct Template {
        var community: CommunityID
        var kind: RecurringCharge.Kind
        var description: String
        var amount: Money
        var category: ExpenseCategory?
        var paidBy: UserID?
        var split: SplitMethod?
        var rule: RecurrenceRule
    }

    /// Writes `template` as `actor` (a member; an admin for dues) and creates what is due.
    /// - Parameter check: refuses a template whose occurrences could not be created now
    ///   (someone it names is not a member, …).
    private func create(
        _ template: Template, startsOn: CivilDate?, as actor: UserID, check: @escaping (PostgresConnection) async throws -> Void
    ) async throws -> RecurringCharge {
        let id = RecurringChargeID.new(in: .recurringCharges)
        let split = try template.split.map { try PostgresJSON(encoding: $0) }
        return try await runner.asUser(actor) { connection in
            let today = try await runner.today(in: template.community, on: connection)
            let first = startsOn ?? today
            guard let next = RecurringCharge.days(of: template.rule, startsOn: first, after: nil, through: nil, limit: 1).first else {
                // A well-formed rule whose days are all past (today is state): 409, as a time already past.
                throw ServiceError.conflict(field: "recurrence_rule", reason: "gives no day from \(first) on")
            }
            let written = try await connection.query(
                """
                INSERT INTO recurring_charges (id, community_id, kind, description, amount, currency, category, paid_by, split, recurrence_rule,
                    starts_on, next_on, created_by)
                SELECT \(id), \(template.community), \(template.kind), \(template.description), \(Int32(template.amount.minorUnits)),
                    \(template.amount.currency.code), \(template.category)::expense_category, \(template.paidBy), \(split),
                    \(template.rule.description), \(first), \(next), \(actor)
                WHERE EXISTS (
                    SELECT FROM members m
                    WHERE m.community_id = \(template.community) AND m.user_id = \(actor) AND m.left_at IS NULL
                      AND (m.role = 'admin' OR \(template.kind) <> 'dues'))
                RETURNING \(unescaped: RecurringCharge.columns)
                """
            ).first
            guard let written else {
                if template.kind == .dues {
                    try await runner.requireAdmin(actor, of: template.community, rule: "only admins can set up recurring dues", on: connection)
                }
                try await runner.requireMember(actor, of: template.community, on: connection)
                throw ServiceError.changedMeanwhile
            }
            let charge = try RecurringCharge(row: written)
            try await check(connection)
            let outcome = try await createOccurrences(of: charge, through: today, on: connection)
            // The first occurrences are the creator's to make: if one cannot be made, the
            // template is refused with the reason, not stored paused.
            if let reason = outcome.pausedBecause { throw ServiceError.conflict(reason) }
            return outcome.charge
        }
    }

    /// The order of recurring-charges: newest first.
    static let chargeOrder = Paging.Keyset.timeAndID("recurring-charges")

    /// A community's recurring charges, newest first.
    package func list(in community: CommunityID, limit: Int = 50, cursor: String? = nil, as actor: UserID) async throws -> Page<RecurringCharge> {
        try Validate.limit(limit, in: 1...200)
        let after = try Self.chargeOrder.decode(cursor)
        return try await runner.asUserReading(actor) { connection in
            let rows = try await runner.queryAsMember(
                actor, of: community, on: connection,
                """
                SELECT \(unescaped: RecurringCharge.columns), \(unescaped: Self.chargeOrder.columns) FROM recurring_charges
                WHERE community_id = \(community)
                  AND \(try Self.chargeOrder.after(after))
                ORDER BY \(unescaped: Self.chargeOrder.order) LIMIT \(limit + 1)
                """
            )
            return try Self.chargeOrder.page(rows, limit: limit, item: RecurringCharge.init(row:))
        }
    }

    package func get(_ id: RecurringChargeID, as actor: UserID) async throws -> RecurringCharge {
        try await runner.asUser(actor) { try await Self.charge(id, on: $0) }
    }

    static func charge(_ id: RecurringChargeID, on connection: PostgresConnection) async throws -> RecurringCharge {
        guard let row = try await connection.query("SELECT \(unescaped: RecurringCharge.columns) FROM recurring_charges WHERE id = \(id)").first
        else { throw ServiceError.notFound("Recurring charge \(id)") }
        return try RecurringCharge(row: row)
    }

    /// Stops creating occurrences until resumed; days that pass meanwhile are not created.
    /// Its creator or an admin (recurring dues: an admin).
    package func pause(_ id: RecurringChargeID, as actor: UserID) async throws -> RecurringCharge {
        try await change(id, from: [.active], as: actor) { _ in
            "UPDATE recurring_charges SET status = 'paused', status_reason = NULL, updated_at = now() WHERE id = \(id) AND status = 'active' RETURNING \(unescaped: RecurringCharge.columns)"
        }
    }

    /// Starts creating occurrences again from today in the community's zone (the days while it
    /// was paused are left out); the next run of the scheduled job creates today's, if due.
    package func resume(_ id: RecurringChargeID, as actor: UserID) async throws -> RecurringCharge {
        try await change(id, from: [.paused], as: actor) { connection in
            let charge = try await Self.charge(id, on: connection)
            let today = try await runner.today(in: charge.communityID, on: connection)
            let from = max(today, charge.nextOn ?? today)
            let next = RecurringCharge.days(
                of: try RecurrenceRule.parse(charge.recurrenceRule), startsOn: charge.startsOn, after: from.adding(days: -1), through: nil, limit: 1
            ).first
            return """
                UPDATE recurring_charges SET status = CASE WHEN \(next)::date IS NULL THEN 'ended' ELSE 'active' END, status_reason = NULL,
                    next_on = coalesce(\(next), next_on), updated_at = now()
                WHERE id = \(id) AND status = 'paused'
                RETURNING \(unescaped: RecurringCharge.columns)
                """
        }
    }

    /// Leaves out one day the rule gives that has not been created yet.
    package func skip(_ id: RecurringChargeID, on day: CivilDate, as actor: UserID) async throws -> RecurringCharge {
        try await change(id, from: [.active, .paused], as: actor) { connection in
            let charge = try await Self.charge(id, on: connection)
            let rule = try RecurrenceRule.parse(charge.recurrenceRule)
            guard RecurringCharge.days(of: rule, startsOn: charge.startsOn, after: day.adding(days: -1), through: day, limit: 1) == [day] else {
                // A well-formed day the stored series does not give: the state refuses it (409).
                throw ServiceError.conflict(field: "date", reason: "\(day) is not a day of \(charge.recurrenceRule) from \(charge.startsOn)")
            }
            guard let next = charge.nextOn, day >= next else {
                throw ServiceError.conflict(
                    field: "date",
                    reason: "the occurrence of \(day) has already been created: delete that \(charge.kind == .dues ? "dues" : "expense") instead")
            }
            guard !charge.skipped.contains(day) else { throw ServiceError.conflict(field: "date", reason: "\(day) is already skipped") }
            return """
                UPDATE recurring_charges SET skipped = array_append(skipped, \(day)), updated_at = now()
                WHERE id = \(id) AND status <> 'ended' AND next_on <= \(day) AND NOT (\(day) = ANY (skipped))
                RETURNING \(unescaped: RecurringCharge.columns)
                """
        }
    }

    /// Ends it for good: nothing more is created (what was created stays).
    package func end(_ id: RecurringChargeID, as actor: UserID) async throws -> RecurringCharge {
        try await change(id, from: [.active, .paused], as: actor) { _ in
            "UPDATE recurring_charges SET status = 'ended', status_reason = NULL, updated_at = now() WHERE id = \(id) AND status <> 'ended' RETURNING \(unescaped: RecurringCharge.columns)"
        }
    }

    /// Runs `statement` (made by `make`, which may refuse) as `actor`; when it changes nothing,
    /// says why: not found, not the creator or an admin (policy `recurring_charges_update`),
    /// or not in one of the states `from`.
    private func change(
        _ id: RecurringChargeID, from states: Set<RecurringCharge.Status>, as actor: UserID,
        _ make: @escaping (PostgresConnection) async throws -> PostgresQuery
    ) async throws -> RecurringCharge {
        try await runner.asUser(actor) { connection in
            let charge = try await Self.charge(id, on: connection)
            let role = try await runner.requireMember(actor, of: charge.communityID, on: connection)
            guard role == .admin || (charge.kind == .expense && charge.createdBy == actor) else {
                throw ServiceError.forbidden(
                    rule: charge.kind == .dues
                        ? "only admins can change recurring dues" : "only its creator or an admin can change a recurring expense")
            }
            guard states.contains(charge.status) else {
                throw ServiceError.conflict(field: "status", reason: "the recurring charge is \(charge.status)")
            }
            guard let row = try await connection.query(try await make(connection)).first else { throw ServiceError.changedMeanwhile }
            return try RecurringCharge(row: row)
        }
    }
}
