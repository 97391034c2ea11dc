package import Foundation
import OrbitPostgres

package enum RecurringChargeTag {}
package typealias RecurringChargeID = Identifier<RecurringChargeTag>

/// A recurring expense or recurring dues (issue 24, item 4): a template and an RRULE whose days
/// are the community's days. Each day the rule gives creates one expense (dated that day) or
/// one set of dues (due that day), once.
package struct RecurringCharge: Sendable, Codable, Equatable {
    package enum Kind: String, DatabaseEnum {
        case expense, dues
    }

    package enum Status: String, DatabaseEnum {
        /// Creating its occurrences as their days come.
        case active
        /// Creating nothing; days that pass while paused are not created later.
        case paused
        /// Over: ended by a member, or the rule has no more days.
        case ended
    }

    package var id: RecurringChargeID
    package var communityID: CommunityID
    package var kind: Kind
    /// The expense's description, or the dues' name.
    package var description: String
    /// Minor units of `currency`.
    package var amount: Int64
    package var currency: String
    /// Expenses only.
    package var category: ExpenseCategory?
    /// Expenses only: who pays each occurrence.
    package var paidBy: UserID?
    /// Expenses only: how each occurrence is split, as entered.
    package var split: SplitMethod?
    package var recurrenceRule: String
    package var startsOn: CivilDate
    /// The next day whose occurrence is still to be created (or skipped); nil when ended by the rule.
    package var nextOn: CivilDate?
    package var skipped: [CivilDate]
    package var status: Status
    /// Why it was paused by the job (a payer who left, a creator no longer an admin), or nil.
    package var statusReason: String?
    package var createdBy: UserID
    package var createdAt: Date
    package var updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", kind, description, amount, currency, category, paidBy = "paid_by", split
        case recurrenceRule = "recurrence_rule", startsOn = "starts_on", nextOn = "next_on", skipped, status, statusReason = "status_reason"
        case createdBy = "created_by", createdAt = "created_at", updatedAt = "updated_at"
    }

    static let columns = """
        id, community_id, kind, description, amount, currency, category::text AS category, paid_by, split, recurrence_rule, starts_on,
        next_on, (SELECT coalesce(array_agg(to_char(d, 'YYYY-MM-DD') ORDER BY d), '{}') FROM unnest(skipped) d) AS skipped_days, status,
        status_reason, created_by, created_at, updated_at
        """

    init(row: PostgresRow) throws {
        let amount: Int32
        (id, communityID, kind, description, amount, currency, category, paidBy) = try row.decode(
            (RecurringChargeID, CommunityID, Kind, String, Int32, String, ExpenseCategory?, UserID?).self)
        self.amount = Int64(amount)
        split = try row.decode("split", as: PostgresJSON?.self)?.decode(SplitMethod.self)
        recurrenceRule = try row.decode("recurrence_rule")
        startsOn = try row.decode("starts_on")
        nextOn = try row.decode("next_on")
        skipped = try row.decode("skipped_days", as: [String].self).map { try CivilDate.parse($0, field: "skipped") }
        status = try row.decode("status")
        statusReason = try row.decode("status_reason")
        createdBy = try row.decode("created_by")
        createdAt = try row.decode("created_at")
        updatedAt = try row.decode("updated_at")
    }

    /// The days `rule` gives from `startsOn`, after `after` (from the first when nil) through
    /// `through` (unbounded when nil), at most `limit`. Days, not instants: the rule runs on the
    /// calendar (UNTIL as a date is inclusive; an UNTIL instant counts by its UTC day), so no
    /// daylight-saving change moves an occurrence; which day is *today* is the community's
    /// (the job's question).
    static func days(of rule: RecurrenceRule, startsOn: CivilDate, after: CivilDate?, through: CivilDate?, limit: Int) -> [CivilDate] {
        let utc = TimeZone(identifier: "UTC") ?? .gmt
        let series = RecurringSeries(rule: rule, start: LocalDateTime(date: startsOn, hour: 0, minute: 0), timeZone: utc)
        func midnight(_ day: CivilDate) -> Date { Date(timeIntervalSince1970: TimeInterval(day.dayNumber) * 86_400) }
        return series.occurrences(from: after.map { midnight($0.adding(days: 1)) }, to: through.map(midnight), limit: limit)
            .map { CivilDate(containing: $0) }
    }
}
