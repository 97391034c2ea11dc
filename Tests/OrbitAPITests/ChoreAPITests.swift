import Foundation
import OrbitCore
import Testing

@Suite("Chores, points, rewards and a child's sign-in over HTTP")
struct ChoreAPITests {
    @Test("a parent pairs a device; the child signs in with the PIN and does their chore and redeems; their token reaches nothing else")
    func childOnTheirOwnDevice() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let kid = try await harness.services.family.add(name: "Kit", as: cast.member).id
            let chore = try await harness.request(
                .post, "/communities/\(cast.community)/chores", token: cast.adminToken,
                json: ["title": "Tidy room", "points": 30, "difficulty": "hard", "assignees": [kid.description], "requires_approval": false])
            #expect(chore.status == 201, "\(chore.text)")
            let notAdmin = try await harness.request(
                .post, "/communities/\(cast.community)/chores", token: cast.memberToken,
                json: ["title": "Tidy room", "points": 30, "assignees": [kid.description]])
            #expect(notAdmin.status == 403)
            let reward = try await harness.request(
                .post, "/communities/\(cast.community)/rewards", token: cast.adminToken, json: ["title": "Ice cream", "points_cost": 25])
            #expect(reward.status == 201, "\(reward.text)")

            // The parent (a plain member) sets the PIN and pairs a device; the admin could too, the outsider not.
            let pin = try await harness.request(
                .put, "/communities/\(cast.community)/family/\(kid)/pin", token: cast.memberToken, json: ["pin": "2580"])
            #expect(pin.status == 204, "\(pin.text)")
            let foreign = try await harness.request(.post, "/communities/\(cast.community)/family/\(kid)/devices", token: cast.outsiderToken)
            #expect(foreign.status == 404)
            let pairing = try await harness.request(.post, "/communities/\(cast.community)/family/\(kid)/devices", token: cast.memberToken)
            #expect(pairing.status == 201, "\(pairing.text)")
            let paired = try await harness.request(.post, "/auth/child", json: ["pairing_code": try pairing.string("pairing_code")])
            #expect(paired.status == 201, "\(paired.text)")
            let deviceToken = try paired.string("device_token")
            let again = try await harness.request(.post, "/auth/child", json: ["pairing_code": try pairing.string("pairing_code")])
            #expect(again.status == 401)
            let wrong = try await harness.request(.post, "/auth/child", json: ["device_token": deviceToken, "pin": "0000"])
            #expect(wrong.status == 401)
            let signedIn = try await harness.request(.post, "/auth/child", json: ["device_token": deviceToken, "pin": "2580"])
            #expect(signedIn.status == 200, "\(signedIn.text)")
            #expect(try signedIn.string("family_member_id") == kid.description)
            let child = try signedIn.string("access_token")

            let mine = try await harness.request(.get, "/communities/\(cast.community)/chores", token: child)
            #expect(try mine.status == 200 && mine.items.count == 1, "\(mine.text)")
            let done = try await harness.request(.post, "/chores/\(try chore.string("id"))/completions", token: child, json: [String: Any]())
            #expect(done.status == 201, "\(done.text)")
            #expect(try done.string("status") == "approved")
            let points = try await harness.request(.get, "/communities/\(cast.community)/points", token: child)
            #expect(try points.json["balance"] as? Int == 30)
            let redeemed = try await harness.request(.post, "/rewards/\(try reward.string("id"))/redemptions", token: child, json: [String: Any]())
            #expect(redeemed.status == 201, "\(redeemed.text)")
            let broke = try await harness.request(.post, "/rewards/\(try reward.string("id"))/redemptions", token: child, json: [String: Any]())
            #expect(broke.status == 409)

            // Scoped: nothing but chores, rewards and points; no admin action; no other child.
            for (method, path) in [
                ("GET", "/users/me"), ("GET", "/communities"), ("GET", "/communities/\(cast.community)/posts"),
                ("GET", "/chats?community_id=\(cast.community)"),
            ] {
                let response = try await harness.request(.init(rawValue: method) ?? .get, path, token: child)
                #expect(response.status == 403, "\(method) \(path) as a child: \(response.status)")
            }
            let approve = try await harness.request(.post, "/chore-completions/\(try done.string("id"))/approve", token: child)
            #expect(approve.status == 403)
            let others = try await harness.request(.get, "/communities/\(cast.community)/points?for=\(cast.member)", token: child)
            #expect(others.status == 404)
            let elsewhere = try await harness.request(.get, "/communities/\(cast.otherCommunity)/rewards", token: child)
            #expect(elsewhere.status == 404)
        }
    }

    @Test("five wrong PINs lock a child's sign-in: 429 with Retry-After, the right PIN too, until a parent sets a new one")
    func lockout() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let kid = try await harness.services.family.add(name: "Kit", as: cast.member).id
            try await harness.services.family.setPIN("1357", for: kid, in: cast.community, as: cast.member)
            let pairing = try await harness.services.family.startPairing(for: kid, in: cast.community, as: cast.admin)
            let device = try await harness.services.family.finishPairing(code: pairing.pairingCode).deviceToken
            var statuses: [Int] = []
            for _ in 0..<5 {
                statuses.append(try await harness.request(.post, "/auth/child", json: ["device_token": device, "pin": "9999"]).status)
            }
            #expect(statuses == [401, 401, 401, 401, 429])
            let right = try await harness.request(.post, "/auth/child", json: ["device_token": device, "pin": "1357"])
            #expect(right.status == 429)
            #expect(try right.headers[.retryAfter] != nil || right.json["retry_after"] as? Int != nil)
            let reset = try await harness.request(
                .put, "/communities/\(cast.community)/family/\(kid)/pin", token: cast.adminToken, json: ["pin": "2468"])
            #expect(reset.status == 204)
            let after = try await harness.request(.post, "/auth/child", json: ["device_token": device, "pin": "2468"])
            #expect(after.status == 200)
            let neither = try await harness.request(.post, "/auth/child", json: ["pin": "2468"])
            #expect(neither.status == 400)
        }
    }

    @Test("a parent's week over HTTP: approve, redeem for a child, cancel (refund), adjust, list what waits for approval")
    func parentsWeek() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let kid = try await harness.services.family.add(name: "Kit", as: cast.admin).id
            let chore = try await harness.request(
                .post, "/communities/\(cast.community)/chores", token: cast.adminToken,
                json: ["title": "Walk the dog", "points": 10, "assignees": [kid.description, cast.member.description]])
            let choreID = try chore.string("id")
            let done = try await harness.request(.post, "/chores/\(choreID)/completions", token: cast.adminToken, json: ["by": kid.description])
            #expect(try done.status == 201 && done.string("status") == "pending", "\(done.text)")
            let byMember = try await harness.request(.post, "/chores/\(choreID)/completions", token: cast.memberToken, json: ["note": "Me too"])
            #expect(byMember.status == 409)
            let waiting = try await harness.request(.get, "/communities/\(cast.community)/chore-completions?status=pending", token: cast.adminToken)
            #expect(try waiting.items.count == 1)
            let approved = try await harness.request(.post, "/chore-completions/\(try done.string("id"))/approve", token: cast.adminToken)
            #expect(approved.status == 200)
            let twice = try await harness.request(.post, "/chore-completions/\(try done.string("id"))/approve", token: cast.adminToken)
            #expect(twice.status == 409)
            let reward = try await harness.request(
                .post, "/communities/\(cast.community)/rewards", token: cast.adminToken, json: ["title": "Sticker", "points_cost": 4, "stock": 1])
            let redeemed = try await harness.request(
                .post, "/rewards/\(try reward.string("id"))/redemptions", token: cast.adminToken, json: ["by": kid.description])
            #expect(redeemed.status == 201, "\(redeemed.text)")
            let cancelled = try await harness.request(.post, "/reward-redemptions/\(try redeemed.string("id"))/cancel", token: cast.adminToken)
            #expect(try cancelled.status == 200 && cancelled.string("status") == "cancelled")
            let adjusted = try await harness.request(
                .post, "/communities/\(cast.community)/points/adjustments", token: cast.adminToken,
                json: ["holder_id": kid.description, "delta": -3, "reason": "Muddy paws on the sofa"])
            #expect(adjusted.status == 200, "\(adjusted.text)")
            #expect(try adjusted.json["balance"] as? Int == 7 && adjusted.json["lifetime_earned"] as? Int == 10)
            let overdraft = try await harness.request(
                .post, "/communities/\(cast.community)/points/adjustments", token: cast.adminToken,
                json: ["holder_id": kid.description, "delta": -8, "reason": "Too much"])
            #expect(overdraft.status == 409)
            let badQuery = try await harness.request(.get, "/communities/\(cast.community)/points?for=nobody", token: cast.adminToken)
            #expect(badQuery.status == 400)
        }
    }
}
