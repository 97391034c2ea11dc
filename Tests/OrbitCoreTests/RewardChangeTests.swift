import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Rewards change: edited, hidden, shown, archived; a redemption keeps its cost; lists are pages", .serialized)
struct RewardChangeTests {
    @Test("an admin edits a reward; a redemption asked for keeps the cost it was asked at; only admins")
    func edits() async throws {
        try await withServices { services, _ in
            let family = try await Cast.Household.make(services)
            let chores = services.chores
            let mia = try await services.signedInChild(family.mia, in: family.home, guardian: family.mum)
            _ = try await chores.adjust(in: family.home, for: family.mia.uuid, delta: 100, reason: "Birthday", as: family.mum)
            let film = try await chores.createReward(in: family.home, title: "Film night", cost: 15, stock: 3, as: family.mum)
            #expect(film.updatedAt == film.createdAt)
            let asked = try await chores.redeem(film.id, as: mia)
            #expect(asked.pointsCost == 15)

            // Dearer from now on, a new title and stock, the description set then cleared.
            let changed = try await chores.updateReward(
                film.id, .init(title: "Film night with popcorn", description: .some("Any film"), pointsCost: 40, stock: .some(5)), as: family.dad)
            #expect(changed.title == "Film night with popcorn" && changed.description == "Any film" && changed.pointsCost == 40)
            #expect(changed.stock == 5 && changed.updatedAt > film.updatedAt)
            let unlimited = try await chores.updateReward(film.id, .init(description: .some(nil), stock: .some(nil)), as: family.mum)
            #expect(unlimited.description == nil && unlimited.stock == nil && unlimited.title == changed.title && unlimited.pointsCost == 40)

            // The redemption asked for at 15 stays at 15, and its cancellation refunds 15.
            #expect(try await chores.redemption(asked.id, as: mia).pointsCost == 15)
            let cancelled = try await chores.resolveRedemption(asked.id, fulfil: false, as: family.mum)
            #expect(cancelled.pointsCost == 15)
            #expect(try await chores.points(in: family.home, as: mia).balance == 100)
            #expect(try await chores.redeem(film.id, as: mia).pointsCost == 40)
            #expect(try await chores.points(in: family.home, as: mia).balance == 60)

            // Only admins; the neighbour does not even see it; bad values name their field.
            let lodger = await serviceError { try await chores.updateReward(film.id, .init(pointsCost: 1), as: family.lodger) }
            #expect(lodger?.code == .forbidden)
            let neighbour = await serviceError { try await chores.updateReward(film.id, .init(pointsCost: 1), as: family.neighbour) }
            #expect(neighbour?.code == .notFound)
            let archiveByLodger = await serviceError { try await chores.setRewardArchived(film.id, true, as: family.lodger) }
            #expect(archiveByLodger?.code == .forbidden)
            let cost = await serviceError { try await chores.updateReward(film.id, .init(pointsCost: 0), as: family.mum) }
            #expect(cost?.field == "points_cost")
            let stock = await serviceError { try await chores.updateReward(film.id, .init(stock: .some(-1)), as: family.mum) }
            #expect(stock?.field == "stock")
            let title = await serviceError { try await chores.updateReward(film.id, .init(title: " "), as: family.mum) }
            #expect(title?.field == "title")
            let audit = try await services.communities.auditLog(family.home, limit: 200, as: family.mum).items.map(\.action)
            #expect(audit.contains("reward.updated"))
        }
    }

    @Test("a hidden reward is off the children's and members' lists and nobody redeems it; shown, it is back; archived, it is off every list")
    func hiddenAndArchived() async throws {
        try await withServices { services, _ in
            let family = try await Cast.Household.make(services)
            let chores = services.chores
            let mia = try await services.signedInChild(family.mia, in: family.home, guardian: family.mum)
            _ = try await chores.adjust(in: family.home, for: family.mia.uuid, delta: 100, reason: "Birthday", as: family.mum)
            _ = try await chores.adjust(in: family.home, for: family.lodger.uuid, delta: 100, reason: "Rent paid", as: family.mum)
            let ice = try await chores.createReward(in: family.home, title: "Ice cream", cost: 10, as: family.mum)
            let pending = try await chores.redeem(ice.id, as: mia)

            // The child's device: the reward, then a delete when hidden, an upsert when shown again.
            let start = try await services.sync.changes(of: family.home, as: mia)
            #expect(start.changes.contains { $0.entity == .reward && $0.id == ice.id.uuid && $0.op == .upsert })
            let hidden = try await chores.updateReward(ice.id, .init(available: false), as: family.mum)
            let gone = try await services.sync.changes(of: family.home, cursor: start.nextCursor, as: mia)
            #expect(gone.changes.contains { $0.entity == .reward && $0.id == ice.id.uuid && $0.op == .delete }, "\(gone.changes.map(\.op))")
            #expect(!gone.changes.contains { $0.entity == .reward && $0.op == .upsert })
            #expect(!hidden.available)
            #expect(try await chores.rewards(in: family.home, as: mia).items.isEmpty)
            #expect(try await chores.rewards(in: family.home, as: .user(family.lodger)).items.isEmpty)
            #expect(try await chores.rewards(in: family.home, as: .user(family.dad)).items.map(\.id) == [ice.id])
            // The child does not see it at all; the lodger sees it is not on offer.
            let childRedeems = await serviceError { try await chores.redeem(ice.id, as: mia) }
            #expect(childRedeems?.code == .notFound)
            let lodgerRedeems = await serviceError { try await chores.redeem(ice.id, as: .user(family.lodger)) }
            #expect(lodgerRedeems?.code == .conflict)
            let shown = try await chores.updateReward(ice.id, .init(available: true), as: family.dad)
            #expect(shown.available)
            #expect(try await chores.rewards(in: family.home, as: mia).items.map(\.id) == [ice.id])
            let back = try await services.sync.changes(of: family.home, cursor: gone.nextCursor, as: mia)
            #expect(back.changes.contains { $0.entity == .reward && $0.id == ice.id.uuid && $0.op == .upsert })

            // Archived: off every list (an admin asks for archived ones), nobody redeems it; the
            // redemption asked for before is still fulfilled.
            let archived = try await chores.setRewardArchived(ice.id, true, as: family.mum)
            #expect(archived.archivedAt != nil)
            #expect(try await chores.rewards(in: family.home, as: .user(family.mum)).items.isEmpty)
            #expect(try await chores.rewards(in: family.home, archived: true, as: .user(family.mum)).items.map(\.id) == [ice.id])
            #expect(try await chores.rewards(in: family.home, archived: true, as: .user(family.lodger)).items.isEmpty)
            #expect(try await chores.rewards(in: family.home, archived: true, as: mia).items.isEmpty)
            let redeemArchived = await serviceError { try await chores.redeem(ice.id, as: .user(family.lodger)) }
            #expect(
                redeemArchived?.code == .conflict && redeemArchived?.message.contains("archived") == true, "\(String(describing: redeemArchived))")
            #expect(try await chores.resolveRedemption(pending.id, fulfil: true, as: family.mum).status == .fulfilled)
            let unarchived = try await chores.setRewardArchived(ice.id, false, as: family.mum)
            #expect(unarchived.archivedAt == nil)
            #expect(try await chores.redeem(ice.id, as: mia).pointsCost == 10)
        }
    }

    @Test("chores, rewards, completions and redemptions are cursor pages: every row once, in order, past any size")
    func pages() async throws {
        try await withServices { services, _ in
            let family = try await Cast.Household.make(services)
            let chores = services.chores
            let mia = try await services.signedInChild(family.mia, in: family.home, guardian: family.mum)
            _ = try await chores.adjust(in: family.home, for: family.mia.uuid, delta: 10_000, reason: "Start", as: family.mum)
            let base = Date().addingTimeInterval(86_400)
            var made: [ChoreID] = []
            for index in 0..<7 {
                // Some due (in an order unlike their creation), some not.
                let due: Date? = index % 3 == 0 ? nil : base.addingTimeInterval(Double(10 - index) * 3600)
                made.append(
                    try await chores.create(
                        .init(title: "Chore \(index)", points: 5, dueAt: due, requiresApproval: false, assignees: [family.mia.uuid]), in: family.home,
                        as: family.mum
                    ).id)
            }
            var rewards: [RewardID] = []
            for index in 0..<5 {
                rewards.append(
                    try await chores.createReward(in: family.home, title: "Reward \(index)", cost: [30, 10, 20, 10, 50][index], as: family.mum).id)
            }
            for chore in made { _ = try await chores.complete(chore, as: mia) }
            for reward in rewards { _ = try await chores.redeem(reward, as: mia) }

            func all<Item>(_ fetch: (String?) async throws -> Page<Item>) async throws -> [Item] {
                var items: [Item] = []
                var cursor: String?
                repeat {
                    let page = try await fetch(cursor)
                    #expect(page.items.count <= 2)
                    items += page.items
                    cursor = page.nextCursor
                } while cursor != nil
                return items
            }
            let whole = try await chores.list(in: family.home, limit: 200, as: mia).items
            #expect(whole.count == 7)
            let due = whole.compactMap(\.dueAt)
            #expect(due == due.sorted() && whole.prefix(due.count).allSatisfy { $0.dueAt != nil }, "due ones first, soonest first")
            #expect(try await all { try await chores.list(in: family.home, limit: 2, cursor: $0, as: mia) }.map(\.id) == whole.map(\.id))
            let shop = try await all { try await chores.rewards(in: family.home, limit: 2, cursor: $0, as: .user(family.mum)) }
            #expect(shop.map(\.pointsCost) == [10, 10, 20, 30, 50] && Set(shop.map(\.id)) == Set(rewards))
            let done = try await all { try await chores.completions(in: family.home, limit: 2, cursor: $0, as: .user(family.dad)) }
            #expect(done.count == 7 && done.map(\.completedAt) == done.map(\.completedAt).sorted(by: >))
            let asked = try await all { try await chores.redemptions(in: family.home, limit: 2, cursor: $0, as: mia) }
            #expect(asked.count == 5 && Set(asked.map(\.rewardID)) == Set(rewards))
            _ = try await chores.resolveRedemption(asked[0].id, fulfil: true, as: family.mum)
            #expect(try await chores.redemptions(in: family.home, requestedOnly: true, as: .user(family.mum)).items.count == 4)

            // A cursor of another list is refused, naming it.
            let rewardsCursor = try await chores.rewards(in: family.home, limit: 1, as: .user(family.mum)).nextCursor
            let mixed = await serviceError { try await chores.list(in: family.home, limit: 2, cursor: rewardsCursor, as: mia) }
            #expect(mixed?.field == "cursor")
            let limit = await serviceError { try await chores.completions(in: family.home, limit: 0, as: mia) }
            #expect(limit?.field == "limit")
        }
    }

    @Test("chores and family members say when they last changed, kept by the database")
    func updatedAt() async throws {
        try await withServices { services, _ in
            let family = try await Cast.Household.make(services)
            let chore = try await services.chores.create(
                .init(title: "Tidy", points: 5, assignees: [family.mia.uuid]), in: family.home, as: family.mum)
            #expect(chore.updatedAt == chore.createdAt)
            let changed = try await services.chores.update(chore.id, .init(points: 6), as: family.mum)
            #expect(changed.updatedAt > chore.updatedAt && changed.createdAt == chore.createdAt)
            let mia = try await services.family.member(family.mia, as: family.mum)
            #expect(mia.updatedAt == mia.createdAt)
            let renamed = try await services.family.rename(family.mia, to: "Mia P.", as: family.mum)
            #expect(renamed.updatedAt > mia.updatedAt)
        }
    }
}
