import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    /// Dues: what a community collects, its payments and report, dues per attendee (docs/money.md, "Dues").
    func addDuesRoutes(to router: RouterGroup<APIContext>) {
        struct AttendanceDuesBody: Decodable {
            var amount: Int64
            var currency: String?
            var occurrence: Date?
            var name: String?
            var dueDate: String?
        }
        // Dues owed by who answered yes (admins): `amount` per head, plus-ones and children to who answered.
        router.post("events/:event_id/attendance-dues") { request, context in
            let body = try await request.decodeJSON(AttendanceDuesBody.self, context: context)
            let currency = try Amounts.currency(body.currency)
            return Created(
                try await services.dues.chargeAttendees(
                    of: try context.id("event_id"), occurrence: body.occurrence, name: body.name,
                    perHead: try Amounts.money(body.amount, currency: currency, field: "amount"),
                    dueDate: try body.dueDate.map { try CivilDate.parse($0, field: "due_date") }, as: try context.requireUser()))
        }
        struct DuesBody: Decodable {
            var name: String
            var amount: Int64
            var currency: String?
            var dueDate: String
        }
        router.get("communities/:community_id/dues") { request, context in
            let limit = try request.queryInt("limit", default: 50, range: 1...200)
            return JSON(
                try await services.dues.list(
                    in: try context.id("community_id"), limit: limit, cursor: request.query("cursor"), as: try context.requireUser()))
        }
        router.get("dues/:dues_id") { _, context in
            Tagged(try await services.dues.get(try context.id("dues_id"), as: try context.requireUser()))
        }
        struct DuesChange: Decodable {
            var name: String?
            var amount: Int64?
            var dueDate: String?
        }
        router.patch("dues/:dues_id") { request, context in
            let body = try await request.decodeJSON(DuesChange.self, context: context)
            let id: DuesID = try context.id("dues_id")
            let user = try context.requireUser()
            let currency = try Amounts.currency(try await services.dues.get(id, as: user).currency)
            return Tagged(
                try await request.underIfMatch(.entity(.dues, id.uuid)) {
                    try await services.dues.update(
                        id, name: body.name, amount: try body.amount.map { try Amounts.money($0, currency: currency, field: "amount") },
                        dueDate: try body.dueDate.map { try CivilDate.parse($0, field: "due_date") }, as: user
                    )
                }
            )
        }
        // A Stripe Checkout for what the member still owes (their children's heads included).
        router.post("dues/:dues_id/checkout") { _, context in
            let (provider, settings) = try paymentProvider()
            return JSON(
                try await services.dues.checkout(try context.id("dues_id"), as: try context.requireUser(), provider: provider, settings: settings))
        }
        router.post("dues/:dues_id/deactivate") { _, context in
            JSON(try await services.dues.deactivate(try context.id("dues_id"), as: try context.requireUser()))
        }
        router.get("dues/:dues_id/payments") { request, context in
            let limit = try request.queryInt("limit", default: 50, range: 1...200)
            return JSON(
                try await services.dues.payments(
                    of: try context.id("dues_id"), limit: limit, cursor: request.query("cursor"), as: try context.requireUser()))
        }
        router.post("communities/:community_id/dues") { request, context in
            let body = try await request.decodeJSON(DuesBody.self, context: context)
            let user = try context.requireUser()
            let community: CommunityID = try context.id("community_id")
            let currency = try await currency(body.currency, of: community, as: user)
            return try await creating(.dues, request, context: context, stored: { try await services.dues.get(DuesID($0), as: user) }) {
                try await services.dues.create(
                    in: community, name: body.name, amount: try Amounts.money(body.amount, currency: currency, field: "amount"),
                    dueDate: try CivilDate.parse(body.dueDate, field: "due_date"), as: user
                )
            }
        }
        struct PaymentBody: Decodable {
            var userId: UserID
            var amount: Int64
            var paymentMethod: String?
            var notes: String?
        }
        router.post("dues/:dues_id/payments") { request, context in
            let body = try await request.decodeJSON(PaymentBody.self, context: context)
            let id: DuesID = try context.id("dues_id")
            let user = try context.requireUser()
            let dues = try await services.dues.get(id, as: user)
            return try await creating(
                .duesPayments, request, context: context, stored: { try await services.dues.payment(DuesPaymentID($0), as: user) }
            ) {
                try await services.dues.recordPayment(
                    to: id, by: body.userId, amount: try Amounts.money(body.amount, currency: try Amounts.currency(dues.currency), field: "amount"),
                    method: body.paymentMethod, note: body.notes, as: user
                )
            }
        }
        router.get("dues/:dues_id/report") { _, context in
            JSON(Items(try await services.dues.report(try context.id("dues_id"), as: try context.requireUser())))
        }
    }
}
