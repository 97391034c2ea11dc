import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    /// Exchange rates: the community's own, set by admins, and the reference rates (docs/money.md, "Currencies").
    func addRateRoutes(to router: RouterGroup<APIContext>) {
        // Exchange rates: the community's own (admins set them) and the reference rates.
        router.get("communities/:community_id/exchange-rates") { request, context in
            let limit = try request.queryInt("limit", default: 100, range: 1...1000)
            return JSON(Items(try await services.rates.rates(in: try context.id("community_id"), limit: limit, as: try context.requireUser())))
        }
        struct RateBody: Decodable {
            var base: String
            var quote: String
            var rate: String
            var rateOn: String?
        }
        router.post("communities/:community_id/exchange-rates") { request, context in
            let body = try await request.decodeJSON(RateBody.self, context: context)
            return Created(
                try await services.rates.setRate(
                    in: try context.id("community_id"), from: try Currency.parse(body.base, field: "base"),
                    to: try Currency.parse(body.quote, field: "quote"), rate: try DecimalRate.parse(body.rate),
                    on: try body.rateOn.map { try CivilDate.parse($0, field: "rate_on") }, as: try context.requireUser()))
        }
    }
}
