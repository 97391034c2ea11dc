import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Issue 38, item 2: everything a screen of the 002, 003 and 004 apps shows is in the change feed.
@Suite("Sync: every screen's entities")
struct SyncEveryScreenTests {
    /// The keys of the follower's copy of `entity`.
    static func keys(_ follower: Follower, _ entity: SyncEntity) -> [String] {
        follower.copy.keys.filter { $0.hasPrefix("\(entity.rawValue)/") }.sorted()
    }

    /// The keys whose entries differ, with both values, for a failure to name them.
    static func difference(_ fresh: Follower, _ follower: Follower) -> [String] {
        Set(fresh.copy.keys).union(follower.copy.keys).sorted().filter { fresh.copy[$0] != follower.copy[$0] }.map {
            "\($0): fresh \(fresh.copy[$0] ?? "nil") / follower \(follower.copy[$0] ?? "nil")"
        }
    }

    @Test(
        "chores, completions, rewards, redemptions, points, recurring charges, exchange rates and family members: in the state, as changes and as tombstones, and a follower's copy equals a fresh sync"
    )
    func everyEntity() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let kid = try await services.family.add(name: "Kit", as: cast.member)
            let chore = try await services.chores.create(
                .init(title: "Tidy room", points: 30, requiresApproval: false, assignees: [kid.id.uuid]), in: cast.community, as: cast.admin)
            let reward = try await services.chores.createReward(
                in: cast.community, title: "Ice cream", description: nil, cost: 25, stock: nil, as: cast.admin)

            // The state.
            var follower = Follower(cast.member, of: cast.community)
            try await follower.pull(services)
            #expect(follower.has(.familyMember, kid.id.uuid))
            #expect(follower.has(.chore, chore.id.uuid) && follower.has(.reward, reward.id.uuid))
            #expect(follower.data(.chore, chore.id.uuid) == (try Follower.json(try await services.chores.get(chore.id, as: .user(cast.member)))))

            // Changes of each kind.
            let completion = try await services.chores.complete(chore.id, by: kid.id.uuid, as: .user(cast.member))
            let redemption = try await services.chores.redeem(reward.id, by: kid.id.uuid, as: .user(cast.member))
            let charge = try await services.recurringCharges.createDues(
                in: cast.community, name: "Monthly", amount: try dollars("15.00"), rule: try .parse("FREQ=MONTHLY;BYMONTHDAY=1"), as: cast.admin)
            _ = try await services.rates.setRate(
                in: cast.community, from: try Currency.parse("EUR", field: "base"), to: .usd, rate: try .parse("1.1"), as: cast.admin)
            _ = try await services.family.rename(kid.id, to: "Kitty", as: cast.member)
            try await follower.pull(services)
            #expect(follower.has(.choreCompletion, completion.id.uuid) && follower.has(.rewardRedemption, redemption.id.uuid))
            #expect(
                follower.data(.recurringCharge, charge.id.uuid)
                    == (try Follower.json(try await services.recurringCharges.get(charge.id, as: cast.member))))
            let points = Self.keys(follower, .points)
            #expect(points.count == 1, "\(follower.copy.keys.sorted())")
            #expect(points.first.flatMap { follower.copy[$0] }?.contains(#""balance":5"#) == true, "30 earned, 25 spent")
            #expect(Self.keys(follower, .exchangeRate).count == 1)
            #expect(follower.data(.familyMember, kid.id.uuid)?.contains("Kitty") == true)
            var fresh = Follower(cast.member, of: cast.community)
            try await fresh.pull(services)
            #expect(Self.difference(fresh, follower) == [])

            // A redemption cancelled, the points back; then the child removed: everything of theirs goes.
            _ = try await services.chores.resolveRedemption(redemption.id, fulfil: false, as: cast.admin)
            try await follower.pull(services)
            #expect(points.first.flatMap { follower.copy[$0] }?.contains(#""balance":30"#) == true)
            try await services.family.remove(kid.id, as: cast.member)
            try await follower.pull(services)
            #expect(!follower.has(.familyMember, kid.id.uuid) && !follower.has(.choreCompletion, completion.id.uuid))
            #expect(!follower.has(.rewardRedemption, redemption.id.uuid) && Self.keys(follower, .points).isEmpty)
            #expect(follower.has(.chore, chore.id.uuid), "the chore stays, without its assignee")
            fresh = Follower(cast.member, of: cast.community)
            try await fresh.pull(services)
            #expect(Self.difference(fresh, follower) == [])
        }
    }

    @Test("a member's payment handles are in the feed of each community they are in, change and go with them; the user's own feed has theirs")
    func paymentHandlesFollowTheirOwner() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            var admin = Follower(cast.admin, of: cast.community)
            try await admin.pull(services)
            _ = try await services.payments.setHandles(PaymentHandles(revolut: "maxm", upi: "max@okaxis"), as: cast.member)
            let ids = try await database.withConnection { connection in
                try await connection.query("SELECT id, kind::text FROM payment_handles WHERE user_id = \(cast.member) ORDER BY kind").map {
                    try $0.decode((UUID, String).self)
                }
            }
            let revolut = try #require(ids.first { $0.1 == "revolut" }?.0)
            let upi = try #require(ids.first { $0.1 == "upi" }?.0)
            try await admin.pull(services)
            #expect(admin.has(.paymentHandle, revolut) && admin.data(.paymentHandle, upi)?.contains("max@okaxis") == true)
            // A new handle of the same kind, and one removed.
            _ = try await services.payments.setHandles(PaymentHandles(revolut: "max.m"), as: cast.member)
            try await admin.pull(services)
            #expect(admin.data(.paymentHandle, revolut)?.contains("max.m") == true && !admin.has(.paymentHandle, upi))
            var own = Follower(cast.member, of: nil)
            try await own.pull(services)
            #expect(own.has(.paymentHandle, revolut))
            // The owner leaves: their handles leave the community's feed.
            try await services.members.leave(cast.community, as: cast.member)
            try await admin.pull(services)
            #expect(!admin.has(.paymentHandle, revolut))
            var fresh = Follower(cast.admin, of: cast.community)
            try await fresh.pull(services)
            #expect(fresh.copy == admin.copy)
        }
    }

    @Test("a parent's family members are in the feed of each community the parent is in, and leave it with them")
    func familyMembersFollowTheirParent() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let kid = try await services.family.add(name: "Kit", as: cast.member)
            var admin = Follower(cast.admin, of: cast.community)
            try await admin.pull(services)
            #expect(admin.has(.familyMember, kid.id.uuid))
            try await services.members.leave(cast.community, as: cast.member)
            try await admin.pull(services)
            #expect(!admin.has(.familyMember, kid.id.uuid))
            var fresh = Follower(cast.admin, of: cast.community)
            try await fresh.pull(services)
            #expect(fresh.copy == admin.copy)
        }
    }

    @Test(
        "a user's own feed: their account, devices, family members and notifications of no community, as state, changes and tombstones; a token that moves to another user leaves the first's feed; nobody else's"
    )
    func ownFeed() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            let token = String(repeating: "ab", count: 32)
            let device = try await services.devices.register(
                token: token, environment: .production, bundleID: "app.orbitcove.ios", locale: nil, as: cast.member)
            let kid = try await services.family.add(name: "Kit", as: cast.member)
            // Notifications of no community (written as the operator: nothing in the app makes one
            // today, but the table allows it), one for each user, and one of the community.
            func notify(_ user: UserID, in community: CommunityID? = nil) async throws -> UUID {
                try await database.withConnection { connection in
                    try await connection.query(
                        """
                        INSERT INTO notifications (user_id, community_id, type, title, body)
                        VALUES (\(user), \(community), 'new_post', 'Hi', 'There') RETURNING id
                        """
                    ).single().decode("id", as: UUID.self)
                }
            }
            let mine = try await notify(cast.member)
            let theirs = try await notify(cast.admin)
            let ofTheCommunity = try await notify(cast.member, in: cast.community)

            var follower = Follower(cast.member, of: nil)
            try await follower.pull(services)
            #expect(follower.has(.user, cast.member.uuid) && follower.has(.device, device.id.uuid))
            #expect(follower.has(.familyMember, kid.id.uuid) && follower.has(.notification, mine))
            #expect(!follower.has(.notification, theirs) && !follower.has(.notification, ofTheCommunity), "another's, and a community's")
            #expect(follower.copy.count == 4, "\(follower.copy.keys.sorted())")
            #expect(follower.data(.user, cast.member.uuid) == (try Follower.json(try await services.users.get(cast.member, as: cast.member))))

            // Changes of each kind; the token registered again by the admin moves to them.
            _ = try await services.users.updateProfile(displayName: "Maxine Member", as: cast.member)
            let second = try await services.devices.register(
                token: String(repeating: "cd", count: 32), environment: .sandbox, bundleID: "app.orbitcove.ios", locale: "de-CH", as: cast.member)
            let moved = try await services.devices.register(
                token: token, environment: .production, bundleID: "app.orbitcove.ios", locale: nil, as: cast.admin)
            _ = try await services.family.rename(kid.id, to: "Kitty", as: cast.member)
            _ = try await services.notifications.markRead(NotificationID(mine), as: cast.member)
            let later = try await notify(cast.member)
            try await follower.pull(services)
            #expect(follower.data(.user, cast.member.uuid)?.contains("Maxine Member") == true)
            #expect(follower.has(.device, second.id.uuid) && !follower.has(.device, device.id.uuid), "the moved token left")
            #expect(follower.data(.familyMember, kid.id.uuid)?.contains("Kitty") == true)
            #expect(follower.data(.notification, mine)?.contains(#""read_at":null"#) == false && follower.has(.notification, later))
            var fresh = Follower(cast.member, of: nil)
            try await fresh.pull(services)
            #expect(SyncEveryScreenTests.difference(fresh, follower) == [])

            // The admin's own feed has the token now; the member's removals reach the member's.
            var admin = Follower(cast.admin, of: nil)
            try await admin.pull(services)
            #expect(admin.has(.device, moved.id.uuid) && admin.has(.notification, theirs) && !admin.has(.familyMember, kid.id.uuid))
            try await services.devices.remove(token: String(repeating: "cd", count: 32), as: cast.member)
            try await services.family.remove(kid.id, as: cast.member)
            try await follower.pull(services)
            #expect(!follower.has(.device, second.id.uuid) && !follower.has(.familyMember, kid.id.uuid))
            fresh = Follower(cast.member, of: nil)
            try await fresh.pull(services)
            #expect(SyncEveryScreenTests.difference(fresh, follower) == [])

            // Each feed's cursors are its own.
            let own = try #require(follower.cursor)
            await #expect(throws: ServiceError.self) { try await services.sync.changes(of: cast.community, cursor: own, as: cast.member) }
            let page = try await services.sync.changes(of: cast.community, as: cast.member)
            await #expect(throws: ServiceError.self) { try await services.sync.ownChanges(cursor: page.nextCursor, as: cast.member) }
        }
    }

    @Test(
        "a co-parent's own feed: the child comes in when they accept, changes as the parent renames them, and goes when they leave; a follower always matches a fresh sync"
    )
    func guardiansOwnFeed() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let kid = try await services.family.add(name: "Kit", as: cast.member)
            var coParent = Follower(cast.admin, of: nil)
            try await coParent.pull(services)
            #expect(!coParent.has(.familyMember, kid.id.uuid))
            func matchesFresh() async throws {
                var fresh = Follower(cast.admin, of: nil)
                try await fresh.pull(services)
                #expect(SyncEveryScreenTests.difference(fresh, coParent) == [])
            }
            _ = try await services.family.inviteGuardian(cast.admin, of: kid.id, as: cast.member)
            try await coParent.pull(services)
            #expect(!coParent.has(.familyMember, kid.id.uuid), "an invitation is not a guardianship")
            _ = try await services.family.acceptGuardianship(of: kid.id, as: cast.admin)
            try await coParent.pull(services)
            #expect(coParent.has(.familyMember, kid.id.uuid))
            try await matchesFresh()
            _ = try await services.family.rename(kid.id, to: "Kitty", as: cast.member)
            try await coParent.pull(services)
            #expect(coParent.data(.familyMember, kid.id.uuid)?.contains("Kitty") == true)
            try await matchesFresh()
            try await services.family.removeGuardian(cast.admin, of: kid.id, as: cast.admin)
            try await coParent.pull(services)
            #expect(!coParent.has(.familyMember, kid.id.uuid))
            try await matchesFresh()
            // Back again; the co-parent becomes the guardian of record, the parent leaves, and the
            // co-parent removes the child: gone from both feeds.
            _ = try await services.family.inviteGuardian(cast.admin, of: kid.id, as: cast.member)
            _ = try await services.family.acceptGuardianship(of: kid.id, as: cast.admin)
            var parent = Follower(cast.member, of: nil)
            try await parent.pull(services)
            #expect(parent.has(.familyMember, kid.id.uuid))
            _ = try await services.family.setGuardianOfRecord(cast.admin, of: kid.id, as: cast.member)
            try await services.family.removeGuardian(cast.member, of: kid.id, as: cast.member)
            try await parent.pull(services)
            #expect(!parent.has(.familyMember, kid.id.uuid))
            try await coParent.pull(services)
            #expect(coParent.data(.familyMember, kid.id.uuid)?.contains(cast.admin.description) == true)
            try await services.family.remove(kid.id, as: cast.admin)
            try await coParent.pull(services)
            #expect(!coParent.has(.familyMember, kid.id.uuid))
            try await matchesFresh()
        }
    }
}
