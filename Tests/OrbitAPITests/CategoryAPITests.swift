import Foundation
import HTTPTypes
import OrbitCore
import OrbitTestSupport
import Testing

@Suite("A community's own categories over HTTP")
struct CategoryAPITests {
    @Test("a member adds and lists categories; an expense takes one and leaves it; archived ones are refused and listed on request")
    func categoriesOverHTTP() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let base = "/communities/\(cast.community)/categories"
            let added = try await harness.request(.post, base, token: cast.memberToken, json: ["name": "Camp", "emoji": "🏕️"])
            #expect(added.status == 201, "\(added.text)")
            let camp = try added.string("id")
            #expect(try added.json["emoji"] as? String == "🏕️" && added.json["archived_at"] is NSNull, "\(added.text)")

            // Bad input, a taken name, strangers, another community's path.
            let blank = try await harness.request(.post, base, token: cast.memberToken, json: ["name": "Gear", "emoji": " "])
            #expect(try blank.status == 400 && blank.json["field"] as? String == "emoji", "\(blank.text)")
            let taken = try await harness.request(.post, base, token: cast.adminToken, json: ["name": "camp", "emoji": "⛺"])
            #expect(try taken.status == 409 && taken.json["field"] as? String == "name", "\(taken.text)")
            #expect(try await harness.request(.get, base, token: cast.outsiderToken).status == 404)
            #expect(try await harness.request(.post, base, token: cast.outsiderToken, json: ["name": "Eve", "emoji": "🍎"]).status == 404)
            let other = try await harness.services.communities.create(name: "Other", as: cast.member).id
            #expect(
                try await harness.request(.patch, "/communities/\(other)/categories/\(camp)", token: cast.memberToken, json: ["name": "X"]).status
                    == 404)
            // Only its creator or an admin changes it.
            let notYours = try await harness.request(.post, base, token: cast.adminToken, json: ["name": "Prague", "emoji": "🇨🇿"])
            let prague = try notYours.string("id")
            #expect(try await harness.request(.patch, "\(base)/\(prague)", token: cast.memberToken, json: ["name": "Mine"]).status == 403)

            let expense = try await harness.request(
                .post, "/communities/\(cast.community)/expenses", token: cast.memberToken,
                json: [
                    "description": "Tent", "amount": 8000, "currency": "USD", "category": "equipment", "category_id": camp,
                    "split": ["method": "equal", "user_ids": [cast.member.description, cast.admin.description]],
                ])
            #expect(expense.status == 201, "\(expense.text)")
            #expect(try expense.json["category_id"] as? String == camp && expense.json["category"] as? String == "other")
            let tent = try expense.string("id")
            let listed = try await harness.request(.get, "/communities/\(cast.community)/expenses?category_id=\(camp)", token: cast.adminToken)
            #expect(try listed.items.map { $0["id"] as? String } == [tent])
            let unknown = try await harness.request(
                .patch, "/expenses/\(tent)", token: cast.memberToken, json: ["category_id": UUID().uuidString.lowercased()])
            #expect(unknown.status == 404, "\(unknown.text)")
            let left = try await harness.request(.patch, "/expenses/\(tent)", token: cast.memberToken, json: ["category_id": NSNull()])
            #expect(try left.status == 200 && left.json["category_id"] is NSNull && left.json["category"] as? String == "other", "\(left.text)")

            let archived = try await harness.request(.patch, "\(base)/\(camp)", token: cast.adminToken, json: ["archived": true])
            #expect(try archived.status == 200 && archived.json["archived_at"] is String, "\(archived.text)")
            let refused = try await harness.request(.patch, "/expenses/\(tent)", token: cast.memberToken, json: ["category_id": camp])
            #expect(try refused.status == 409 && refused.json["field"] as? String == "category_id", "\(refused.text)")
            #expect(try await harness.request(.get, base, token: cast.memberToken).items.map { $0["id"] as? String } == [prague])
            #expect(try await harness.request(.get, "\(base)?archived=true", token: cast.memberToken).items.count == 2)
            let back = try await harness.request(.patch, "\(base)/\(camp)", token: cast.memberToken, json: ["archived": false, "emoji": "⛺"])
            #expect(try back.status == 200 && back.json["archived_at"] is NSNull && back.json["emoji"] as? String == "⛺", "\(back.text)")
        }
    }
}
