import Foundation
import HTTPTypes
import OrbitCore
import OrbitTestSupport
import Testing

@Suite("Guests over HTTP")
struct GuestAPITests {
    @Test("a member adds, lists, renames, invites and removes a guest; the guest splits an expense; the user who joins through the link claims them")
    func guestsOverHTTP() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let base = "/communities/\(cast.community)/guests"
            let added = try await harness.request(.post, base, token: cast.memberToken, json: ["name": "Gina Guest"])
            #expect(added.status == 201, "\(added.text)")
            let guest = try added.string("id")
            let guestUser = try added.string("user_id")
            #expect(try added.json["guest"] as? Bool == true && added.json["display_name"] as? String == "Gina Guest")
            let list = try await harness.request(.get, base, token: cast.adminToken)
            #expect(try list.items.map { $0["id"] as? String } == [guest])
            let members = try await harness.request(.get, "/communities/\(cast.community)/members", token: cast.adminToken)
            #expect(try members.items.contains { $0["id"] as? String == guest && $0["guest"] as? Bool == true })
            #expect(try members.items.contains { $0["user_id"] as? String == cast.member.description && $0["guest"] as? Bool == false })

            // Bad input and strangers.
            let blank = try await harness.request(.post, base, token: cast.memberToken, json: ["name": " "])
            #expect(try blank.status == 400 && blank.json["field"] as? String == "name", "\(blank.text)")
            #expect(try await harness.request(.post, base, token: cast.outsiderToken, json: ["name": "Eve"]).status == 404)
            #expect(try await harness.request(.get, base, token: cast.outsiderToken).status == 404)
            #expect(try await harness.request(.patch, "\(base)/\(guest)", token: cast.outsiderToken, json: ["name": "Eve"]).status == 404)
            // Another community's path does not reach the guest.
            let other = try await harness.services.communities.create(name: "Other", as: cast.member).id
            #expect(
                try await harness.request(.patch, "/communities/\(other)/guests/\(guest)", token: cast.memberToken, json: ["name": "Eve"]).status
                    == 404)

            let renamed = try await harness.request(.patch, "\(base)/\(guest)", token: cast.adminToken, json: ["name": "Gina G."])
            #expect(try renamed.status == 200 && renamed.json["display_name"] as? String == "Gina G.", "\(renamed.text)")

            let expense = try await harness.request(
                .post, "/communities/\(cast.community)/expenses", token: cast.memberToken,
                json: [
                    "description": "Cabin", "amount": 6000, "currency": "USD",
                    "split": ["method": "equal", "user_ids": [cast.member.description, guestUser]],
                ])
            #expect(expense.status == 201, "\(expense.text)")
            let unsettled = try await harness.request(.delete, "\(base)/\(guest)", token: cast.memberToken)
            #expect(unsettled.status == 409, "\(unsettled.text)")

            let link = try await harness.request(.post, "\(base)/\(guest)/invite", token: cast.memberToken, json: [:])
            #expect(link.status == 201, "\(link.text)")
            #expect(try link.json["guest_member_id"] as? String == guest && link.json["uses_remaining"] as? Int == 1)
            let code = try link.string("code")
            let preview = try await harness.request(.get, "/invites/\(code)")
            #expect(try preview.status == 200 && preview.json["guest_name"] as? String == "Gina G.", "\(preview.text)")

            let gina = try await harness.services.users.create(email: "gina@example.com", displayName: "Gina").id
            let joined = try await harness.request(.post, "/invites/redeem", token: try await harness.token(for: gina), json: ["code": code])
            #expect(try joined.status == 200 && joined.json["claimed_guest_member_id"] as? String == guest, "\(joined.text)")
            let pairs = try await harness.request(.get, "/communities/\(cast.community)/balances?view=pairs", token: cast.memberToken)
            #expect(
                try pairs.items.map { [$0["from_user_id"] as? String, $0["to_user_id"] as? String] } == [[gina.description, cast.member.description]])
            #expect(try await harness.request(.get, base, token: cast.adminToken).items.isEmpty)
            #expect(try await harness.request(.delete, "\(base)/\(guest)", token: cast.memberToken).status == 404)
        }
    }
}
