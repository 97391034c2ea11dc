import Foundation
import HTTPTypes
import OrbitCore
import OrbitTestSupport
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
            // Kit's parent, a member but not an admin, sets Kit's chores too; not the admin's own.
            let byParent = try await harness.request(
                .post, "/communities/\(cast.community)/chores", token: cast.memberToken,
                json: ["title": "Feed the fish", "points": 5, "assignees": [kid.description]])
            #expect(byParent.status == 201, "\(byParent.text)")
            let notAdmin = try await harness.request(
                .post, "/communities/\(cast.community)/chores", token: cast.memberToken,
                json: ["title": "Tidy room", "points": 30, "assignees": [cast.admin.description]])
            #expect(notAdmin.status == 403)
            let reward = try await harness.request(
                .post, "/communities/\(cast.community)/rewards", token: cast.adminToken, json: ["title": "Ice cream", "points_cost": 25])
            #expect(reward.status == 201, "\(reward.text)")

            // The parent (a plain member) sets the PIN and pairs a device; the admin may not (403), the outsider sees nothing (404).
            let pin = try await harness.request(
                .put, "/communities/\(cast.community)/family/\(kid)/pin", token: cast.memberToken, json: ["pin": "2580"])
            #expect(pin.status == 204, "\(pin.text)")
            let foreign = try await harness.request(.post, "/communities/\(cast.community)/family/\(kid)/devices", token: cast.outsiderToken)
            #expect(foreign.status == 404)
            let admin = try await harness.request(.post, "/communities/\(cast.community)/family/\(kid)/devices", token: cast.adminToken)
            #expect(admin.status == 403)
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
            #expect(try signedIn.string("device_id") == pairing.string("device_id") && signedIn.string("community_id") == cast.community.description)
            let child = try signedIn.string("access_token")

            let mine = try await harness.request(.get, "/communities/\(cast.community)/chores", token: child)
            #expect(try mine.status == 200 && mine.items.count == 2, "\(mine.text)")
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
            let pairing = try await harness.services.family.startPairing(for: kid, in: cast.community, as: cast.member)
            let device = try await harness.services.family.finishPairing(code: pairing.pairingCode).deviceToken
            var statuses: [Int] = []
            for _ in 0..<5 {
                statuses.append(try await harness.request(.post, "/auth/child", json: ["device_token": device, "pin": "9999"]).status)
            }
            #expect(statuses == [401, 401, 401, 401, 429])
            let right = try await harness.request(.post, "/auth/child", json: ["device_token": device, "pin": "1357"])
            #expect(right.status == 429)
            #expect(try right.headers[.retryAfter] != nil || right.json["retry_after"] as? Int != nil)
            let notTheirs = try await harness.request(
                .put, "/communities/\(cast.community)/family/\(kid)/pin", token: cast.adminToken, json: ["pin": "2468"])
            #expect(notTheirs.status == 403)
            let reset = try await harness.request(
                .put, "/communities/\(cast.community)/family/\(kid)/pin", token: cast.memberToken, json: ["pin": "2468"])
            #expect(reset.status == 204)
            let after = try await harness.request(.post, "/auth/child", json: ["device_token": device, "pin": "2468"])
            #expect(after.status == 200)
            let neither = try await harness.request(.post, "/auth/child", json: ["pin": "2468"])
            #expect(neither.status == 400)
        }
    }

    @Test(
        "an admin of a club the parent belongs to cannot set the child's PIN or pair, list or revoke their devices: 403, nothing changed, nothing audited as done"
    )
    func clubAdminIsRefused() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let services = harness.services
            // The member (the parent) has a household of their own, and is in the admin's club (cast.community).
            let home = try await services.communities.create(name: "Home", as: cast.member).id
            let kid = try await services.family.add(name: "Kit", as: cast.member).id
            let pin = try await harness.request(.put, "/communities/\(home)/family/\(kid)/pin", token: cast.memberToken, json: ["pin": "2580"])
            #expect(pin.status == 204)
            let pairing = try await harness.request(.post, "/communities/\(home)/family/\(kid)/devices", token: cast.memberToken)
            let device = try await harness.request(.post, "/auth/child", json: ["pairing_code": try pairing.string("pairing_code")])
            let deviceToken = try device.string("device_token")
            let deviceID = try pairing.string("device_id")

            let base = "/communities/\(cast.community)/family/\(kid)"
            for (method, path, body) in [
                (HTTPRequest.Method.put, "\(base)/pin", ["pin": "0000"]), (.post, "\(base)/devices", nil), (.get, "\(base)/devices", nil),
                (.delete, "\(base)/devices", nil), (.delete, "\(base)/devices/\(deviceID)", nil),
            ] {
                let response = try await harness.request(method, path, token: cast.adminToken, json: body)
                #expect(response.status == 403, "\(method) \(path): \(response.status) \(response.text)")
                #expect(try response.string("rule") == "a child's sign-in is managed by the child's own guardians only")
            }
            // Nothing changed: the parent's PIN still signs the child in on the paired device, which is not revoked.
            let signedIn = try await harness.request(.post, "/auth/child", json: ["device_token": deviceToken, "pin": "2580"])
            #expect(signedIn.status == 200, "\(signedIn.text)")
            let devices = try await harness.request(.get, "/communities/\(home)/family/\(kid)/devices", token: cast.memberToken)
            #expect(try devices.items.map { $0["status"] as? String } == ["paired"])
            // Nothing audited as done; each refusal audited as refused.
            let actions = try await harness.database.withConnection { connection in
                try await connection.query("SELECT action FROM audit_log WHERE user_id = \(cast.admin) AND action LIKE 'child.%'").map {
                    try $0.decode("action", as: String.self)
                }
            }
            #expect(
                actions.sorted() == [
                    "child.device_pairing.refused", "child.device_revoked.refused", "child.device_revoked.refused", "child.pin_set.refused",
                ],
                "\(actions)")
        }
    }

    @Test(
        "two guardians over HTTP: an invitation accepted lets the co-parent set the PIN and pair; the guardian of record moves, then the other leaves; the last cannot"
    )
    func coGuardianOverHTTP() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let kid = try await harness.services.family.add(name: "Kit", as: cast.member).id
            let guardians = "/users/me/family/\(kid)/guardians"
            let pin = "/communities/\(cast.community)/family/\(kid)/pin"
            // The outsider shares no community with the member: 404; the admin is invited.
            let stranger = try await harness.request(.post, guardians, token: cast.memberToken, json: ["user_id": cast.outsider.description])
            #expect(stranger.status == 404, "\(stranger.text)")
            let invited = try await harness.request(.post, guardians, token: cast.memberToken, json: ["user_id": cast.admin.description])
            let invitedAt = try invited.json["accepted_at"]
            #expect(invited.status == 201 && invitedAt is NSNull, "\(invited.text)")
            let twice = try await harness.request(.post, guardians, token: cast.memberToken, json: ["user_id": cast.admin.description])
            let twiceField = try twice.string("field")
            #expect(twice.status == 409 && twiceField == "user_id", "\(twice.text)")
            // Not before accepting.
            #expect(try await harness.request(.put, pin, token: cast.adminToken, json: ["pin": "1357"]).status == 403)
            let invitations = try await harness.request(.get, "/users/me/guardian-invitations", token: cast.adminToken)
            #expect(try invitations.items.map { $0["family_member_name"] as? String } == ["Kit"])
            let accepted = try await harness.request(.post, "/users/me/guardian-invitations/\(kid)/accept", token: cast.adminToken)
            let acceptedAt = try accepted.json["accepted_at"]
            #expect(accepted.status == 200 && acceptedAt is String, "\(accepted.text)")
            #expect(try await harness.request(.put, pin, token: cast.adminToken, json: ["pin": "1357"]).status == 204)
            let pairing = try await harness.request(.post, "/communities/\(cast.community)/family/\(kid)/devices", token: cast.adminToken)
            #expect(pairing.status == 201, "\(pairing.text)")
            let list = try await harness.request(.get, guardians, token: cast.adminToken)
            #expect(try list.items.map { $0["of_record"] as? Bool } == [true, false])
            #expect(try await harness.request(.get, guardians, token: cast.outsiderToken).status == 404)

            // The guardian of record does not leave first; the other does not remove them.
            let leaves = try await harness.request(.delete, "\(guardians)/\(cast.member)", token: cast.memberToken)
            #expect(leaves.status == 409, "\(leaves.text)")
            #expect(try await harness.request(.delete, "\(guardians)/\(cast.member)", token: cast.adminToken).status == 403)
            let moved = try await harness.request(
                .put, "/users/me/family/\(kid)/guardian-of-record", token: cast.adminToken, json: ["user_id": cast.admin.description])
            let record = try moved.string("user_id")
            #expect(moved.status == 200 && record == cast.admin.description, "\(moved.text)")
            #expect(try await harness.request(.delete, "\(guardians)/\(cast.member)", token: cast.memberToken).status == 204)
            #expect(try await harness.request(.put, pin, token: cast.memberToken, json: ["pin": "2468"]).status == 403)
            let last = try await harness.request(.delete, "\(guardians)/\(cast.admin)", token: cast.adminToken)
            #expect(last.status == 409 && last.text.contains("last guardian"), "\(last.text)")
            // An invitation declined.
            _ = try await harness.request(.post, guardians, token: cast.adminToken, json: ["user_id": cast.member.description])
            #expect(try await harness.request(.delete, "/users/me/guardian-invitations/\(kid)", token: cast.memberToken).status == 204)
            #expect(try await harness.request(.delete, "/users/me/guardian-invitations/\(kid)", token: cast.memberToken).status == 404)
        }
    }

    @Test("a child paired in the household cannot read or redeem in the parent's club, and one paired in the club not in the household")
    func childTokenIsScopedToItsCommunity() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let services = harness.services
            let home = try await services.communities.create(name: "Home", as: cast.member).id
            let kid = try await services.family.add(name: "Kit", as: cast.member).id
            var rewards: [CommunityID: String] = [:]
            var tokens: [CommunityID: String] = [:]
            for (community, adminToken) in [(home, cast.memberToken), (cast.community, cast.adminToken)] {
                let chore = try await harness.request(
                    .post, "/communities/\(community)/chores", token: adminToken,
                    json: ["title": "Tidy", "points": 30, "assignees": [kid.description], "requires_approval": false])
                #expect(chore.status == 201, "\(chore.text)")
                let reward = try await harness.request(
                    .post, "/communities/\(community)/rewards", token: adminToken, json: ["title": "Treat", "points_cost": 5])
                rewards[community] = try reward.string("id")
                _ = try await harness.request(.put, "/communities/\(community)/family/\(kid)/pin", token: cast.memberToken, json: ["pin": "2580"])
                let pairing = try await harness.request(.post, "/communities/\(community)/family/\(kid)/devices", token: cast.memberToken)
                #expect(pairing.status == 201, "\(pairing.text)")
                let device = try await harness.request(.post, "/auth/child", json: ["pairing_code": try pairing.string("pairing_code")])
                let signedIn = try await harness.request(
                    .post, "/auth/child", json: ["device_token": try device.string("device_token"), "pin": "2580"])
                tokens[community] = try signedIn.string("access_token")
                // The child's own chore there, done: points to spend there.
                let done = try await harness.request(
                    .post, "/chores/\(try chore.string("id"))/completions", token: tokens[community], json: [String: Any]())
                #expect(done.status == 201, "\(done.text)")
            }
            for (mine, other) in [(home, cast.community), (cast.community, home)] {
                let token = try #require(tokens[mine])
                for path in ["chores", "rewards", "points", "chore-completions", "reward-redemptions"] {
                    let own = try await harness.request(.get, "/communities/\(mine)/\(path)", token: token)
                    #expect(own.status == 200, "\(path) in its own community: \(own.status)")
                    let elsewhere = try await harness.request(.get, "/communities/\(other)/\(path)", token: token)
                    #expect(elsewhere.status == 404, "\(path) in the other community: \(elsewhere.status)")
                }
                let redeemElsewhere = try await harness.request(
                    .post, "/rewards/\(try #require(rewards[other]))/redemptions", token: token, json: [String: Any]())
                #expect(redeemElsewhere.status == 404, "\(redeemElsewhere.text)")
                let redeem = try await harness.request(
                    .post, "/rewards/\(try #require(rewards[mine]))/redemptions", token: token, json: [String: Any]())
                #expect(redeem.status == 201, "\(redeem.text)")
            }
        }
    }

    @Test("a parent lists and revokes a child's devices over HTTP; the revoked device's token reaches nothing at once")
    func revokeOverHTTP() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let kid = try await harness.services.family.add(name: "Kit", as: cast.member).id
            let base = "/communities/\(cast.community)/family/\(kid)"
            _ = try await harness.request(.put, "\(base)/pin", token: cast.memberToken, json: ["pin": "2580"])
            let pairing = try await harness.request(.post, "\(base)/devices", token: cast.memberToken)
            let device = try await harness.request(.post, "/auth/child", json: ["pairing_code": try pairing.string("pairing_code")])
            let signedIn = try await harness.request(.post, "/auth/child", json: ["device_token": try device.string("device_token"), "pin": "2580"])
            let child = try signedIn.string("access_token")
            #expect(try await harness.request(.get, "/communities/\(cast.community)/chores", token: child).status == 200)
            let listed = try await harness.request(.get, "\(base)/devices", token: cast.memberToken)
            #expect(try listed.items.count == 1 && listed.items[0]["status"] as? String == "paired" && listed.items[0]["last_used_at"] is String)
            let revoked = try await harness.request(.delete, "\(base)/devices/\(try pairing.string("device_id"))", token: cast.memberToken)
            #expect(revoked.status == 204, "\(revoked.text)")
            #expect(try await harness.request(.get, "/communities/\(cast.community)/chores", token: child).status == 404)
            let again = try await harness.request(.post, "/auth/child", json: ["device_token": try device.string("device_token"), "pin": "2580"])
            #expect(again.status == 401)
            let unknown = try await harness.request(.delete, "\(base)/devices/\(UUID())", token: cast.memberToken)
            #expect(unknown.status == 404)
            let all = try await harness.request(.delete, "\(base)/devices", token: cast.memberToken)
            #expect(all.status == 204)
            let after = try await harness.request(.get, "\(base)/devices", token: cast.memberToken)
            #expect(try after.items.map { $0["status"] as? String } == ["revoked"])
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

@Suite("Chores change over HTTP")
struct ChoreChangeAPITests {
    @Test("PATCH /chores/{id} (admins; null clears), archive and unarchive, DELETE only while nobody did it")
    func changeOverHTTP() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let chore = try await harness.services.chores.create(
                .init(title: "Dishes", description: "After dinner", points: 10, assignees: [cast.member.uuid]), in: cast.community, as: cast.admin)
            let path = "/chores/\(chore.id)"
            let refused = try await harness.request(.patch, path, token: cast.memberToken, json: ["points": 20])
            #expect(refused.status == 403, "\(refused.text)")
            let changed = try await harness.request(
                .patch, path, token: cast.adminToken, json: ["points": 20, "description": NSNull(), "title": "Dishes and pans"])
            let json = try changed.json
            #expect(changed.status == 200 && json["points"] as? Int == 20 && json["description"] is NSNull, "\(changed.text)")
            let ends = try await harness.request(.patch, path, token: cast.adminToken, json: ["ends_on": "2030-01-01"])
            #expect(ends.status == 409 && ends.text.contains("ends_on"), "\(ends.text)")
            let archived = try await harness.request(.post, "\(path)/archive", token: cast.adminToken)
            let archivedJSON = try archived.json
            #expect(archived.status == 200 && archivedJSON["archived_at"] as? String != nil, "\(archived.text)")
            let back = try await harness.request(.post, "\(path)/unarchive", token: cast.adminToken)
            let backJSON = try back.json
            #expect(back.status == 200 && backJSON["archived_at"] is NSNull, "\(back.text)")
            _ = try await harness.services.chores.complete(chore.id, as: .user(cast.member))
            let kept = try await harness.request(.delete, path, token: cast.adminToken)
            #expect(kept.status == 409 && kept.text.contains("archive"), "\(kept.text)")
            let fresh = try await harness.services.chores.create(
                .init(title: "Bins", points: 5, assignees: [cast.member.uuid]), in: cast.community, as: cast.admin)
            let deleted = try await harness.request(.delete, "/chores/\(fresh.id)", token: cast.adminToken)
            #expect(deleted.status == 204, "\(deleted.text)")
        }
    }

    @Test("PATCH /rewards/{id} (admins; null clears the description and the stock), hide and show, archive; the lists are pages")
    func rewardsChangeOverHTTP() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let reward = try await harness.services.chores.createReward(
                in: cast.community, title: "Pizza", description: "Friday", cost: 40, stock: 2, as: cast.admin)
            let path = "/rewards/\(reward.id)"
            let refused = try await harness.request(.patch, path, token: cast.memberToken, json: ["points_cost": 1])
            #expect(refused.status == 403, "\(refused.text)")
            let hidden = try await harness.request(
                .patch, path, token: cast.adminToken, json: ["points_cost": 50, "description": NSNull(), "stock": NSNull(), "available": false])
            let json = try hidden.json
            #expect(
                hidden.status == 200 && json["points_cost"] as? Int == 50 && json["description"] is NSNull && json["stock"] is NSNull,
                "\(hidden.text)")
            #expect(json["available"] as? Bool == false && json["updated_at"] as? String != nil)
            let bad = try await harness.request(.patch, path, token: cast.adminToken, json: ["points_cost": 0])
            #expect(bad.status == 400 && bad.text.contains("points_cost"), "\(bad.text)")
            // Hidden: the member's list is empty, the admin's has it; GET names it for both.
            #expect(try await harness.request(.get, "/communities/\(cast.community)/rewards", token: cast.memberToken).items.isEmpty)
            #expect(try await harness.request(.get, "/communities/\(cast.community)/rewards", token: cast.adminToken).items.count == 1)
            #expect(try await harness.request(.get, path, token: cast.memberToken).status == 200)
            #expect(try await harness.request(.get, path, token: cast.outsiderToken).status == 404)
            let archived = try await harness.request(.post, "\(path)/archive", token: cast.adminToken)
            #expect(try archived.status == 200 && archived.json["archived_at"] as? String != nil, "\(archived.text)")
            #expect(try await harness.request(.get, "/communities/\(cast.community)/rewards", token: cast.adminToken).items.isEmpty)
            let withArchived = try await harness.request(.get, "/communities/\(cast.community)/rewards?archived=true", token: cast.adminToken)
            #expect(try withArchived.items.count == 1, "\(withArchived.text)")
            let unarchived = try await harness.request(.post, "\(path)/unarchive", token: cast.adminToken)
            #expect(try unarchived.status == 200 && unarchived.json["archived_at"] is NSNull, "\(unarchived.text)")
            let byMember = try await harness.request(.post, "\(path)/archive", token: cast.memberToken)
            #expect(byMember.status == 403)

            // Pages: one per request with limit=1, then the next by its cursor.
            _ = try await harness.services.chores.updateReward(reward.id, .init(available: true), as: cast.admin)
            _ = try await harness.services.chores.createReward(in: cast.community, title: "Cinema", cost: 10, as: cast.admin)
            _ = try await harness.services.chores.adjust(in: cast.community, for: cast.member.uuid, delta: 500, reason: "Start", as: cast.admin)
            for index in 0..<2 {
                let chore = try await harness.services.chores.create(
                    .init(title: "Chore \(index)", points: 5, requiresApproval: false, assignees: [cast.member.uuid]), in: cast.community,
                    as: cast.admin)
                _ = try await harness.services.chores.complete(chore.id, as: .user(cast.member))
            }
            _ = try await harness.services.chores.redeem(reward.id, as: .user(cast.member))
            _ = try await harness.services.chores.redeem(reward.id, as: .user(cast.member))
            for list in ["chores", "rewards", "chore-completions", "reward-redemptions"] {
                let first = try await harness.request(.get, "/communities/\(cast.community)/\(list)?limit=1", token: cast.memberToken)
                let cursor = try first.json["next_cursor"] as? String
                #expect(try first.status == 200 && first.items.count == 1 && cursor != nil, "\(list): \(first.text)")
                let second = try await harness.request(
                    .get, "/communities/\(cast.community)/\(list)?limit=1&cursor=\(cursor ?? "")", token: cast.memberToken)
                #expect(try second.status == 200 && second.items.count == 1 && second.json["next_cursor"] is NSNull, "\(list): \(second.text)")
                #expect(try first.items[0]["id"] as? String != second.items[0]["id"] as? String)
                let tooMany = try await harness.request(.get, "/communities/\(cast.community)/\(list)?limit=201", token: cast.memberToken)
                #expect(tooMany.status == 400, "\(list): \(tooMany.text)")
            }
            let requested = try await harness.request(
                .get, "/communities/\(cast.community)/reward-redemptions?status=requested", token: cast.adminToken)
            #expect(try requested.items.count == 2, "\(requested.text)")
            let status = try await harness.request(.get, "/communities/\(cast.community)/reward-redemptions?status=done", token: cast.adminToken)
            #expect(status.status == 400)
        }
    }

    @Test("photo proof over HTTP: a child's token uploads an image and marks the chore done with it; the parent opens it, then approves")
    func photoProofOverHTTP() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "orbit-media-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withAPI(storage: LocalDirectoryStorage(root: folder)) { harness in
            let cast = try await APICast.make(harness)
            let kid = try await harness.services.family.add(name: "Kit", as: cast.member).id
            let chore = try await harness.request(
                .post, "/communities/\(cast.community)/chores", token: cast.adminToken,
                json: ["title": "Tidy room", "points": 30, "assignees": [kid.description], "requires_photo": true])
            #expect(try chore.status == 201 && chore.json["requires_photo"] as? Bool == true, "\(chore.text)")
            let choreID = try chore.string("id")
            // The parent pairs Kit's device; Kit signs in.
            _ = try await harness.request(.put, "/communities/\(cast.community)/family/\(kid)/pin", token: cast.memberToken, json: ["pin": "2580"])
            let pairing = try await harness.request(.post, "/communities/\(cast.community)/family/\(kid)/devices", token: cast.memberToken)
            let paired = try await harness.request(.post, "/auth/child", json: ["pairing_code": try pairing.string("pairing_code")])
            let signedIn = try await harness.request(.post, "/auth/child", json: ["device_token": try paired.string("device_token"), "pin": "2580"])
            let child = try signedIn.string("access_token")

            let none = try await harness.request(.post, "/chores/\(choreID)/completions", token: child, json: [String: Any]())
            #expect(none.status == 409 && none.text.contains("photo_media_id"), "\(none.text)")
            let jpeg = Data([0xFF, 0xD8, 0xFF, 0x00, 0x01])
            let photo = try await harness.request(
                .post, "/communities/\(cast.community)/media?filename=room.jpg&width=800&height=600", token: child, body: jpeg,
                headers: ["Content-Type": "image/jpeg"])
            #expect(photo.status == 201, "\(photo.text)")
            #expect(
                try photo.json["family_member_id"] as? String == kid.description && photo.json["uploaded_by"] as? String == cast.member.description)
            let pdf = try await harness.request(
                .post, "/communities/\(cast.community)/media?filename=a.pdf", token: child, body: Data("%PDF-1.4".utf8),
                headers: ["Content-Type": "application/pdf"])
            #expect(pdf.status == 400, "\(pdf.text)")
            let elsewhere = try await harness.request(
                .post, "/communities/\(cast.otherCommunity)/media?filename=room.jpg", token: child, body: jpeg,
                headers: ["Content-Type": "image/jpeg"])
            #expect(elsewhere.status == 404, "\(elsewhere.text)")

            let done = try await harness.request(
                .post, "/chores/\(choreID)/completions", token: child, json: ["photo_media_id": try photo.string("id"), "note": "Done!"])
            #expect(try done.status == 201 && done.json["photo_media_id"] as? String == photo.string("id"), "\(done.text)")
            let waiting = try await harness.request(.get, "/communities/\(cast.community)/chore-completions?status=pending", token: cast.adminToken)
            #expect(try waiting.items.first?["photo_media_id"] as? String == photo.string("id"), "\(waiting.text)")
            let file = try await harness.request(.get, "/media/\(try photo.string("id"))", token: cast.adminToken)
            #expect(file.status == 200 && file.body == jpeg)
            #expect(try await harness.request(.get, "/media/\(try photo.string("id"))", token: child).status == 200)
            #expect(try await harness.request(.get, "/media/\(try photo.string("id"))", token: cast.outsiderToken).status == 404)
            let approved = try await harness.request(.post, "/chore-completions/\(try done.string("id"))/approve", token: cast.adminToken)
            #expect(try approved.status == 200 && approved.json["status"] as? String == "approved", "\(approved.text)")
            // The photo Kit took becomes Kit's avatar: the parent sets it; the admin may not; DELETE clears it.
            let avatar = try await harness.request(
                .put, "/users/me/family/\(kid)/avatar", token: cast.memberToken, json: ["media_id": try photo.string("id")])
            #expect(try avatar.status == 200 && avatar.json["avatar_media_id"] as? String == photo.string("id"), "\(avatar.text)")
            let notTheirs = try await harness.request(
                .put, "/users/me/family/\(kid)/avatar", token: cast.adminToken, json: ["media_id": try photo.string("id")])
            #expect(notTheirs.status == 404, "\(notTheirs.text)")
            let cleared = try await harness.request(.delete, "/users/me/family/\(kid)/avatar", token: cast.memberToken)
            #expect(try cleared.status == 200 && cleared.json["avatar_media_id"] is NSNull, "\(cleared.text)")
        }
    }
}
