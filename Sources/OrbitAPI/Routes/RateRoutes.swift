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
            let community: CommunityID = try context.id("community_id")
            let base = try Currency.parse(body.base, field: "base")
            let quote = try Currency.parse(body.quote, field: "quote")
            let day = try body.rateOn.map { try CivilDate.parse($0, field: "rate_on") }
            // Who asks comes before the rate's text, as when the service parsed it.
            let user = try context.requireUser()
            return Created(
                try await services.rates.setRate(in: community, from: base, to: quote, rate: try DecimalRate.parse(body.rate), on: day, as: user))
        }
    }
}
