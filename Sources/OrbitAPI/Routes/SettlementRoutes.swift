import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    /// Settlements and balances: "from paid to", a split settled, balances and settle-up (docs/money.md).
    func addSettlementRoutes(to router: RouterGroup<APIContext>) {
        struct SettleBody: Decodable {
            var settledVia: String?
        }
        // The split's debtor, the payer or an admin marks one split settled.
        router.post("splits/:split_id/settle") { request, context in
            let body = try await request.decodeJSON(SettleBody.self, context: context)
            return JSON(
                try await services.settlements.settleSplit(
                    try context.id("split_id", as: SplitID.self), via: body.settledVia, as: try context.requireUser()))
        }
        struct SettlementBody: Decodable {
            var fromUserId: UserID
            var toUserId: UserID
            var amount: Int64
            var currency: String?
            var settlesCurrency: String?
            var rate: String?
            var method: String?
            var transactionDate: String?
            var notes: String?
        }
        router.post("communities/:community_id/settlements") { request, context in
            let body = try await request.decodeJSON(SettlementBody.self, context: context)
            let user = try context.requireUser()
            let community: CommunityID = try context.id("community_id")
            let currency = try await currency(body.currency, of: community, as: user)
            // Without `currency` the settlement is in the community's own, which is state: a
            // rate for a "conversion" into that same currency is refused as 409, as any rule that
            // the request alone cannot show (docs/api.md); with `currency` given it is 400.
            if body.currency == nil, body.rate != nil, body.settlesCurrency == currency.code {
                throw ServiceError.conflict(
                    field: "rate", reason: "goes with a settlement in another currency than the debt's, and the community's is \(currency.code)")
            }
            return try await creating(
                .transactions, request, context: context, stored: { try await services.expenses.expense(TransactionID($0), as: user) }
            ) {
                try await services.settlements.recordSettlement(
                    in: community, from: body.fromUserId, to: body.toUserId,
                    amount: try Amounts.money(body.amount, currency: currency, field: "amount"),
                    settles: try body.settlesCurrency.map {
                        guard let code = Currency($0), code.code == $0 else {
                            throw APIProblem.validation(field: "settles_currency", "settles_currency must be an ISO 4217 code such as USD or EUR.")
                        }
                        return code
                    },
                    rate: try body.rate.map { try DecimalRate.parse($0) }, method: body.method,
                    date: try body.transactionDate.map { try CivilDate.parse($0, field: "transaction_date") }, notes: body.notes, as: user
                )
            }
        }
        // Each member's balance, or with `view=pairs` who owes whom (docs/money.md).
        // Someone who is owed asks someone who owes them to settle up; once a day per pair (429).
        struct NudgeBody: Decodable {
            var member: UserID
        }
        router.post("communities/:community_id/nudges") { request, context in
            let body = try await request.decodeJSON(NudgeBody.self, context: context)
            return Created(
                try await services.settlements.nudge(body.member, in: try context.id("community_id"), as: try context.requireUser()))
        }
        router.get("communities/:community_id/balances") { request, context in
            let community: CommunityID = try context.id("community_id")
            let user = try context.requireUser()
            switch request.query("view") ?? "members" {
            case "members":
                return try JSON(Items(try await services.settlements.balances(in: community, as: user))).response(from: request, context: context)
            case "pairs":
                return try JSON(Items(try await services.settlements.pairs(in: community, as: user))).response(from: request, context: context)
            default: throw APIProblem.validation(field: "view", "view must be members or pairs.")
            }
        }
        // Where the caller stands with one member, and the entries behind it.
        router.get("communities/:community_id/balances/with/:member_id") { request, context in
            let limit = try request.queryInt("limit", default: 50, range: 1...500)
            return JSON(
                try await services.settlements.pair(
                    in: try context.id("community_id"), with: try context.id("member_id"), limit: limit, cursor: request.query("cursor"),
                    as: try context.requireUser()))
        }
        // Per currency; with `in`, every payment in that currency at the rates known today;
        // `simplify` overrides the community's `minimizeDebts`.
        router.get("communities/:community_id/settle-up") { request, context in
            let community: CommunityID = try context.id("community_id")
            let user = try context.requireUser()
            let simplify = request.query("simplify") == nil ? nil : try request.queryBool("simplify")
            let platform = try request.platform()
            let region = try request.region()
            let suggestions: [SettleUp.Payment]
            if let code = request.query("in") {
                guard let currency = Currency(code), currency.code == code else {
                    throw APIProblem.validation(field: "in", "in must be an ISO 4217 code such as USD or EUR.")
                }
                suggestions = try await services.settlements.settleUpSuggestions(in: community, currency: currency, simplify: simplify, as: user)
            } else {
                suggestions = try await services.settlements.settleUpSuggestions(in: community, simplify: simplify, as: user)
            }
            // Each with the ways to pay it: the payee's handles and the active providers (docs/money.md, "Getting paid back").
            return JSON(Items(try await services.payments.withPayOptions(suggestions, in: community, platform: platform, region: region, as: user)))
        }

    }
}
