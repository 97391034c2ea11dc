package import Foundation
import OrbitPostgres

/// The scheduled job of recurring charges: each occurrence created once, on any number of
/// servers, and caught up after downtime.
extension RecurringChargeService {
    /// What one run of the job did.
    package struct Report: Sendable, Equatable, CustomStringConvertible {
        /// Expenses and dues created.
        package var created = 0
        /// Templates paused because an occurrence could not be created (the reason is on them).
        package var paused = 0
        /// Templates whose run failed (logged; tried again at the next run).
        package var failed = 0

        package init(created: Int = 0, paused: Int = 0, failed: Int = 0) {
            self.created = created
            self.paused = paused
            self.failed = failed
        }

        package var description: String { "\(created) created, \(paused) paused, \(failed) failed" }
    }

    /// Templates looked at per run; more wait for the next.
    static let jobBatch = 500

    /// Operator job: creates every occurrence that is due (its day is today or before in its
    /// community's zone) of every active template, each template in a transaction of its own,
    /// as the template's creator.
    ///
    /// Exactly once: a run locks the template (`FOR UPDATE SKIP LOCKED`: a template another
    /// server is working on is left to it), creates the days from `next_on` through today and
    /// moves `next_on` past them in the same transaction; and a created row carries the
    /// template and its day under a unique index. After downtime the first run creates every
    /// day missed, each dated its own day (`catchUpLimit` per template and transaction).
    package func createDue() async throws -> Report {
        let due = try await runner.asOperator { connection in
            try await connection.query(
                """
                SELECT r.id, r.created_by FROM recurring_charges r
                JOIN communities c ON c.id = r.community_id AND c.deleted_at IS NULL AND c.archived_at IS NULL
                WHERE r.status = 'active' AND r.next_on <= orbit.civil_date(\(runner.now()), c.settings ->> 'timezone')
                ORDER BY r.next_on, r.id LIMIT \(Self.jobBatch)
                """
            ).map { try $0.decode((RecurringChargeID, UserID).self) }
        }
        var report = Report()
        for (id, creator) in due {
            do {
                let outcome: Outcome? = try await runner.asOperator(creator) { connection in
                    guard
                        let row = try await connection.query(
                            """
                            SELECT \(unescaped: RecurringCharge.columns),
                                (SELECT c.settings ->> 'timezone' FROM communities c WHERE c.id = recurring_charges.community_id) AS timezone
                            FROM recurring_charges WHERE id = \(id) AND status = 'active'
                            FOR UPDATE SKIP LOCKED
                            """
                        ).first
                    else { return nil }
                    let charge = try RecurringCharge(row: row)
                    let zone = CommunitySettings(timezone: try row.decode("timezone", as: String?.self)).timeZone
                    return try await createOccurrences(of: charge, through: CivilDate(containing: runner.now(), in: zone), on: connection)
                }
                guard let outcome else { continue }
                report.created += outcome.created
                if outcome.pausedBecause != nil { report.paused += 1 }
            } catch {
                report.failed += 1
                RequestRunner.logger.error(
                    "recurring charge failed", metadata: ["recurring_charge_id": "\(id)", "error": "\(error)"])
            }
        }
        return report
    }

    /// What `createOccurrences` did.
    struct Outcome: Sendable {
        var charge: RecurringCharge
        var created: Int
        /// Set when an occurrence could not be created and the template was paused.
        var pausedBecause: String?
    }

    /// Creates the occurrences of `charge` due from its `next_on` through `today` (skipped days
    /// and days already created left out), as its creator, and moves `next_on` on; when one
    /// cannot be created (its creator or someone it names is no longer a member, a dues
    /// creator no longer an admin), pauses it with the reason instead. The caller holds the
    /// template locked (or has just written it).
    func createOccurrences(of charge: RecurringCharge, through today: CivilDate, on connection: PostgresConnection) async throws -> Outcome {
        guard charge.status == .active, let next = charge.nextOn, next <= today else { return Outcome(charge: charge, created: 0) }
        let rule = try RecurrenceRule.parse(charge.recurrenceRule)
        let days = RecurringCharge.days(
            of: rule, startsOn: charge.startsOn, after: next.adding(days: -1), through: today, limit: Self.catchUpLimit)
        guard let last = days.last else {
            // No day of the rule through today: next_on was stale (never, by construction).
            return Outcome(charge: charge, created: 0)
        }
        let table = charge.kind == .dues ? "dues" : "transactions"
        let existing = Set(
            try await connection.query(
                """
                SELECT occurrence_on FROM \(unescaped: table)
                WHERE recurring_charge_id = \(charge.id) AND occurrence_on BETWEEN \(days[0]) AND \(last)
                """
            ).map { try $0.decode("occurrence_on", as: CivilDate.self) })
        let money = Money(minorUnits: charge.amount, currency: try Currency.parse(charge.currency))
        var created = 0
        var processedThrough = next.adding(days: -1)
        for day in days {
            if !charge.skipped.contains(day) && !existing.contains(day) {
                if let reason = try await createOccurrence(of: charge, on: day, money: money, on: connection) {
                    let paused = try await connection.query(
                        """
                        UPDATE recurring_charges SET status = 'paused', status_reason = \(reason), next_on = \(day), updated_at = now()
                        WHERE id = \(charge.id) RETURNING \(unescaped: RecurringCharge.columns)
                        """
                    ).single()
                    return Outcome(charge: try RecurringCharge(row: paused), created: created, pausedBecause: reason)
                }
                created += 1
            }
            processedThrough = day
        }
        let following = RecurringCharge.days(of: rule, startsOn: charge.startsOn, after: processedThrough, through: nil, limit: 1).first
        let moved = try await connection.query(
            """
            UPDATE recurring_charges SET next_on = \(following), status = CASE WHEN \(following)::date IS NULL THEN 'ended' ELSE status END,
                updated_at = now()
            WHERE id = \(charge.id) RETURNING \(unescaped: RecurringCharge.columns)
            """
        ).single()
        return Outcome(charge: try RecurringCharge(row: moved), created: created)
    }

    /// Creates the occurrence of `day`; nil when created, otherwise why it could not be.
    private func createOccurrence(of charge: RecurringCharge, on day: CivilDate, money: Money, on connection: PostgresConnection) async throws
        -> String?
    {
        switch charge.kind {
        case .dues:
            let id = DuesID.random()
            let dues = DuesService(runner)
            let results = try await connection.pipeline(
                try dues.insertion(
                    id, in: charge.communityID, name: charge.description, amount: money, dueDate: day, as: charge.createdBy,
                    occurrence: (charge.id, day)))
            return results[0].isEmpty ? "its creator is no longer an admin of the community" : nil
        case .expense:
            guard let paidBy = charge.paidBy, let split = charge.split, let category = charge.category else {
                throw ServiceError.conflict("recurring expense \(charge.id) has no payer or split")  // the table's CHECK forbids it
            }
            let expenses = ExpenseService(runner)
            let entry = ExpenseService.NewTransaction(
                community: charge.communityID, type: .expense, description: charge.description, total: money, paidBy: paidBy,
                category: category, date: day, splits: try SplitCalculator.splits(of: charge.amount, split), occurrence: (charge.id, day),
                splitInput: split)
            if try await expenses.insert(entry, as: charge.createdBy, adminOnly: false, on: connection) != nil { return nil }
            // Nothing was written: the statement's checks say why.
            do {
                guard try await runner.membership(charge.createdBy, in: charge.communityID, on: connection) != nil else {
                    return "its creator is no longer a member of the community"
                }
                try await runner.requireActiveMembers(entry.people, of: charge.communityID, on: connection)
                try await expenses.requireFamilyOfMembers(entry.familyMembers, of: charge.communityID, on: connection)
                return "it could not be created"
            } catch let error as ServiceError {
                return error.message
            }
        }
    }
}
