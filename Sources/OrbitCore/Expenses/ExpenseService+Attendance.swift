package import Foundation
import OrbitPostgres

/// Attendance fees (issue 24, item 8): an event's cost charged to who came, in one step.
extension ExpenseService {
    /// Adds an expense for an event (or one occurrence of a series) split per head among those
    /// who answered yes: each answer counts 1 + its plus-ones, the plus-ones owed by who brought
    /// them, a family member's head by their parent (shown "for" them). The expense is linked
    /// to the event (the occurrence's own row, for a series).
    /// - Parameters:
    ///   - description: default "<event title> (attendance)".
    ///   - paidBy: who paid (default the acting user), or the main one of `payers`.
    package func chargeAttendees(
        of event: EventID, occurrence: Date? = nil, description: String? = nil, total: Money, paidBy: UserID? = nil,
        payers: [UserID: Int64]? = nil, category: ExpenseCategory = .other, as actor: UserID
    ) async throws -> Expense {
        try total.requirePositive()
        let paying = try Payers.resolve(payers, paidBy: paidBy ?? actor, total: total.minorUnits, namedPaidBy: paidBy != nil)
        let description = try description.map { try Validate.text($0, field: "description", limit: 500) }
        return try await runner.asUser(actor) { connection in
            let (found, row, answers) = try await Self.attendance(of: event, occurrence: occurrence, as: actor, runner: runner, on: connection)
            var heads: [Holder: Int64] = [:]
            for answer in answers {
                heads[answer.familyMember.map(Holder.familyMember) ?? .user(answer.user), default: 0] += 1
                // Plus-ones are owed by who brought them (a child's by their parent).
                if answer.plusOnes > 0 { heads[.user(answer.user), default: 0] += answer.plusOnes }
            }
            let entry = NewTransaction(
                community: found.communityID, type: .expense, description: description ?? "\(found.title) (attendance)", total: total,
                paidBy: paying.paidBy, payers: paying.rows, category: category, linkedEvent: row,
                splits: try SplitCalculator.splits(of: total.minorUnits, .shares(heads)), splitInput: .shares(heads))
            if let expense = try await insert(entry, as: actor, adminOnly: false, on: connection) { return expense }
            try await runner.requireActiveMembers(entry.people, of: found.communityID, on: connection)
            try await requireFamilyOfMembers(entry.familyMembers, of: found.communityID, on: connection)
            throw ServiceError.changedMeanwhile
        }
    }

    /// Who answered yes to an event (or one occurrence of a series; `actor` must be a member of
    /// its community): the event, the row the answers are on (the occurrence's own row), and the
    /// answers — the user who answered (a family member's parent), the family member, the
    /// plus-ones. None: 409.
    static func attendance(
        of event: EventID, occurrence: Date?, as actor: UserID, runner: RequestRunner, on connection: PostgresConnection
    ) async throws -> (event: Event, row: EventID, answers: [(user: UserID, familyMember: FamilyMemberID?, plusOnes: Int64)]) {
        let found = try await EventService.event(event, on: connection)
        try await runner.requireMember(actor, of: found.communityID, on: connection)
        guard let row = try await EventService.answeredRow(found, occurrence: occurrence, on: connection) else {
            throw ServiceError.conflict(field: "event", reason: "nobody has answered yes to this occurrence")
        }
        let answers = try await connection.query(
            "SELECT user_id, family_member_id, plus_ones FROM rsvps WHERE event_id = \(row.id) AND status = 'yes' ORDER BY user_id"
        ).map { answer in
            let (user, familyMember, plusOnes) = try answer.decode((UserID, FamilyMemberID?, Int32).self)
            return (user: user, familyMember: familyMember, plusOnes: Int64(plusOnes))
        }
        guard !answers.isEmpty else { throw ServiceError.conflict(field: "event", reason: "nobody has answered yes to it") }
        return (found, row.id, answers)
    }
}
