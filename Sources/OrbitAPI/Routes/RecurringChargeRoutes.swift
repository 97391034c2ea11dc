import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    /// Recurring charges: expenses and dues that repeat by a rule (docs/money.md, "Recurring charges").
    func addRecurringChargeRoutes(to router: RouterGroup<APIContext>) {
        struct RecurringBody: Decodable {
            var kind: String
            var description: String
            var amount: Int64
            var currency: String?
            var recurrenceRule: String
            var startsOn: String?
            var paidBy: UserID?
            var split: SplitBody?
            var category: String?
        }
        router.post("communities/:community_id/recurring-charges") { request, context in
            let body = try await request.decodeJSON(RecurringBody.self, context: context)
            let user = try context.requireUser()
            let community: CommunityID = try context.id("community_id")
            let currency = try await currency(body.currency, of: community, as: user)
            let amount = try Amounts.money(body.amount, currency: currency, field: "amount")
            let startsOn = try body.startsOn.map { try CivilDate.parse($0, field: "starts_on") }
            let kind = try RecurringCharge.Kind.parse(body.kind, field: "kind")
            if kind == .dues, body.paidBy != nil || body.split != nil || body.category != nil {
                throw APIProblem.validation(field: "kind", "Recurring dues are owed by every member: leave out paid_by, split and category.")
            }
            if kind == .expense, body.split == nil { throw APIProblem.validation(field: "split", "split is required for a recurring expense.") }
            return try await creating(
                .recurringCharges, request, context: context, stored: { try await services.recurringCharges.get(RecurringChargeID($0), as: user) }
            ) {
                guard kind == .expense, let split = body.split else {
                    return try await services.recurringCharges.createDues(
                        in: community, name: body.description, amount: amount, rule: try RecurrenceRule.parse(body.recurrenceRule),
                        startsOn: startsOn, as: user)
                }
                let people = try await services.expenses.participants(split.ids, as: user)
                return try await services.recurringCharges.createExpense(
                    in: community, description: body.description, amount: amount, paidBy: body.paidBy,
                    split: try split.method(currency: currency, people: people),
                    category: try ExpenseCategory.parse(body.category ?? "other", field: "category"),
                    rule: try RecurrenceRule.parse(body.recurrenceRule),
                    startsOn: startsOn, as: user)
            }
        }
        router.get("communities/:community_id/recurring-charges") { request, context in
            let limit = try request.queryInt("limit", default: 50, range: 1...200)
            return JSON(
                try await services.recurringCharges.list(
                    in: try context.id("community_id"), limit: limit, cursor: request.query("cursor"), as: try context.requireUser()))
        }
        router.get("recurring-charges/:charge_id") { _, context in
            JSON(try await services.recurringCharges.get(try context.id("charge_id"), as: try context.requireUser()))
        }
        router.post("recurring-charges/:charge_id/pause") { _, context in
            JSON(try await services.recurringCharges.pause(try context.id("charge_id"), as: try context.requireUser()))
        }
        router.post("recurring-charges/:charge_id/resume") { _, context in
            JSON(try await services.recurringCharges.resume(try context.id("charge_id"), as: try context.requireUser()))
        }
        router.post("recurring-charges/:charge_id/end") { _, context in
            JSON(try await services.recurringCharges.end(try context.id("charge_id"), as: try context.requireUser()))
        }
        struct SkipBody: Decodable {
            var date: String
        }
        router.post("recurring-charges/:charge_id/skip") { request, context in
            let body = try await request.decodeJSON(SkipBody.self, context: context)
            return JSON(
                try await services.recurringCharges.skip(
                    try context.id("charge_id"), on: try CivilDate.parse(body.date, field: "date"), as: try context.requireUser()))
        }

    }
}
