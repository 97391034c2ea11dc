import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Recurring charges in the database: one row per template and day, fields by kind, occurrences fixed")
struct RecurringChargeInvariantTests {
    private func failure(on connection: PostgresConnection, _ query: PostgresQuery) async -> PostgresError? {
        do {
            try await connection.withTransaction { try await $0.query(query) }
            return nil
        } catch let error as PostgresError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test("a second expense or dues for the same template and day is refused; the occurrence of a row cannot be changed")
    func onePerOccurrence() async throws {
        try await withTestDatabase { database in
            try await database.seeding { seed, connection in
                let (a, b, community) = try await seed.pair()
                let expenseCharge = try await seed.id(
                    """
                    INSERT INTO recurring_charges (community_id, kind, description, amount, currency, category, paid_by, split, recurrence_rule,
                        starts_on, next_on, created_by)
                    VALUES (\(community), 'expense', 'Pitch', 1000, 'USD', 'equipment', \(a),
                        jsonb_build_object('method', 'equal', 'parts', jsonb_build_array(jsonb_build_object('user_id', \(a)::uuid))), 'FREQ=WEEKLY',
                        current_date, current_date, \(a)) RETURNING id
                    """)
                let duesCharge = try await seed.id(
                    """
                    INSERT INTO recurring_charges (community_id, kind, description, amount, currency, recurrence_rule, starts_on, next_on, created_by)
                    VALUES (\(community), 'dues', 'Monthly', 2500, 'USD', 'FREQ=MONTHLY', current_date, current_date, \(a)) RETURNING id
                    """)
                let expense = try await seed.expense(community, paidBy: a, total: 1000, splits: [(a, 500), (b, 500)])
                try await connection.query(
                    "UPDATE transactions SET recurring_charge_id = NULL, occurrence_on = NULL WHERE id = \(expense)")  // a no-op is allowed
                let second = try await seed.expense(community, paidBy: a, total: 1000, splits: [(a, 500), (b, 500)])
                let moved = await failure(
                    on: connection,
                    "UPDATE transactions SET recurring_charge_id = \(expenseCharge), occurrence_on = current_date WHERE id = \(second)")
                #expect(moved?.sqlState == "23001", "\(String(describing: moved))")

                // Written with its occurrence at insert, a row is unique per template and day.
                let insertDues: PostgresQuery = """
                    INSERT INTO dues (community_id, name, amount, due_date, created_by, recurring_charge_id, occurrence_on)
                    VALUES (\(community), 'Monthly', 2500, current_date, \(a), \(duesCharge), current_date)
                    """
                #expect(await failure(on: connection, insertDues) == nil)
                let twice = await failure(on: connection, insertDues)
                #expect(twice?.sqlState == "23505" && twice?.constraint == "dues_one_per_occurrence", "\(String(describing: twice))")
                // Both columns or neither; a template of another community is refused.
                let half = await failure(
                    on: connection,
                    "INSERT INTO dues (community_id, name, amount, due_date, created_by, recurring_charge_id) VALUES (\(community), 'x', 1, current_date, \(a), \(duesCharge))"
                )
                #expect(half?.constraint == "dues_occurrence_pair", "\(String(describing: half))")
                let other = try await seed.community("Other", creator: b)
                let foreign = await failure(
                    on: connection,
                    """
                    INSERT INTO dues (community_id, name, amount, due_date, created_by, recurring_charge_id, occurrence_on)
                    VALUES (\(other), 'x', 1, current_date, \(b), \(duesCharge), current_date + 1)
                    """)
                #expect(foreign?.constraint == "dues_recurring_charge_fkey", "\(String(describing: foreign))")

                // An expense template needs its payer, split and category; dues have none.
                let bare = await failure(
                    on: connection,
                    """
                    INSERT INTO recurring_charges (community_id, kind, description, amount, currency, recurrence_rule, starts_on, next_on, created_by)
                    VALUES (\(community), 'expense', 'x', 1, 'USD', 'FREQ=DAILY', current_date, current_date, \(a))
                    """)
                #expect(bare?.constraint == "recurring_charges_expense_fields", "\(String(describing: bare))")
                // Its split fits its amount (migrations/0028): exact parts add up to it.
                let unfit = await failure(
                    on: connection,
                    """
                    UPDATE recurring_charges SET split = jsonb_build_object('method', 'exact', 'parts',
                        jsonb_build_array(jsonb_build_object('user_id', \(a)::uuid, 'value', 999)))
                    WHERE id = \(expenseCharge)
                    """)
                #expect(unfit?.constraint == "recurring_charges_split_fits", "\(String(describing: unfit))")
                let unended = await failure(on: connection, "UPDATE recurring_charges SET next_on = NULL WHERE id = \(duesCharge)")
                #expect(unended?.constraint == "recurring_charges_ended_without_next", "\(String(describing: unended))")
                let kind = await failure(on: connection, "UPDATE recurring_charges SET kind = 'expense' WHERE id = \(duesCharge)")
                #expect(kind?.sqlState == "23001", "\(String(describing: kind))")
            }
        }
    }
}
