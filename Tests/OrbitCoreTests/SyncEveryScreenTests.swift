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
                in: cast.community, name: "Monthly", amount: try dollars("15.00"), rule: "FREQ=MONTHLY;BYMONTHDAY=1", as: cast.admin)
            _ = try await services.finances.setRate(
                in: cast.community, from: try Currency.parse("EUR", field: "base"), to: .usd, rate: "1.1", as: cast.admin)
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
}
