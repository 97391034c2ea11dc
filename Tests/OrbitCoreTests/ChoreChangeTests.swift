import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Chores change: edited, ended, archived, deleted while nobody did them", .serialized)
struct ChoreChangeTests {
    @Test(
        "an admin edits a chore; points already earned stay; a recurring one ends; only admins; archive and unarchive; delete only without completions"
    )
    func changes() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let chores = services.chores
            let daily = try await chores.create(
                .init(
                    title: "Feed the cat", points: 10, dueAt: Date().addingTimeInterval(-86_400), recurrenceRule: "FREQ=DAILY",
                    assignees: [cast.member.uuid]), in: cast.community, as: cast.admin)
            let done = try await chores.complete(daily.id, as: .user(cast.member))
            _ = try await chores.review(done.id, approve: true, as: cast.admin)
            #expect(try await chores.points(in: cast.community, as: .user(cast.member)).balance == 10)

            // New title, points, difficulty, assignees: earned points stay as credited.
            let changed = try await chores.update(
                daily.id,
                .init(
                    title: "Feed the cats", description: .some("Both bowls"), points: 25, difficulty: .medium,
                    assignees: [cast.admin.uuid, cast.member.uuid]),
                as: cast.admin)
            #expect(changed.title == "Feed the cats" && changed.description == "Both bowls" && changed.points == 25 && changed.difficulty == .medium)
            #expect(Set(changed.assignees) == [.user(cast.admin), .user(cast.member)])
            #expect(try await chores.points(in: cast.community, as: .user(cast.member)).balance == 10)
            // It ends: the rule gets its last day.
            let ends = try await chores.update(daily.id, .init(description: .some(nil), endsOn: try day("2030-06-30")), as: cast.admin)
            #expect(ends.recurrenceRule == "FREQ=DAILY;UNTIL=20300630" && ends.description == nil && ends.recurrenceEndsAt != nil, "\(ends)")

            // Only admins; strangers do not even see it; bad values name their field.
            let member = await serviceError { try await chores.update(daily.id, .init(points: 1000), as: cast.member) }
            #expect(member?.code == .forbidden)
            let stranger = await serviceError { try await chores.update(daily.id, .init(points: 5), as: cast.outsider) }
            #expect(stranger?.code == .notFound)
            let points = await serviceError { try await chores.update(daily.id, .init(points: 0), as: cast.admin) }
            #expect(points?.field == "points")
            let once = try await chores.create(.init(title: "Tidy", points: 5, assignees: [cast.member.uuid]), in: cast.community, as: cast.admin)
            let notRecurring = await serviceError { try await chores.update(once.id, .init(endsOn: try day("2030-01-01")), as: cast.admin) }
            #expect(notRecurring?.code == .conflict && notRecurring?.field == "ends_on")

            // Archived: off the list, back when unarchived.
            _ = try await chores.setArchived(daily.id, true, as: cast.admin)
            #expect(!(try await chores.list(in: cast.community, as: .user(cast.member))).items.contains { $0.id == daily.id })
            _ = try await chores.setArchived(daily.id, false, as: cast.admin)
            #expect(try await chores.list(in: cast.community, as: .user(cast.member)).items.contains { $0.id == daily.id })

            // Deleted only while nobody has done it: the answer says to archive.
            let refused = await serviceError { try await chores.delete(daily.id, as: cast.admin) }
            #expect(refused?.code == .conflict && refused?.message.contains("archive") == true, "\(String(describing: refused))")
            let byMember = await serviceError { try await chores.delete(once.id, as: cast.member) }
            #expect(byMember?.code == .forbidden)
            try await chores.delete(once.id, as: cast.admin)
            let gone = await serviceError { try await chores.get(once.id, as: .user(cast.admin)) }
            #expect(gone?.code == .notFound)
        }
    }
}

@Suite("A parent who is not an admin sets, changes and approves their own children's chores; nobody else", .serialized)
struct ParentChoreTests {
    @Test(
        "a member sets a chore for their own child, changes it, approves it and resolves the child's redemption; not for another's child or an adult")
    func parentSetsOwnChildrensChores() async throws {
        try await withServices { services, _ in
            let family = try await Cast.Household.make(services)
            let chores = services.chores
            // Ned, Nina's father, joins the Parkers' household as a member (not an admin).
            _ = try await services.members.add(family.neighbour, to: family.home, as: family.mum)
            let ned = family.neighbour
            let piano = try await chores.create(
                .init(title: "Piano practice", points: 10, assignees: [family.nina.uuid]), in: family.home, as: ned)
            #expect(piano.assignees == [.familyMember(family.nina)])
            // Not for another's child, not with an adult among the assignees, not for the lodger (no children).
            for (who, assignees) in [(ned, [family.mia.uuid]), (ned, [family.nina.uuid, ned.uuid]), (family.lodger, [family.nina.uuid])] {
                let refused = await serviceError {
                    try await chores.create(.init(title: "Nope", points: 5, assignees: assignees), in: family.home, as: who)
                }
                #expect(refused?.code == .forbidden, "\(who) for \(assignees)")
            }
            // Ned changes, archives and unarchives his child's chore; not to take Mia in.
            #expect(try await chores.update(piano.id, .init(points: 12), as: ned).points == 12)
            let takeMia = await serviceError { try await chores.update(piano.id, .init(assignees: [family.nina.uuid, family.mia.uuid]), as: ned) }
            #expect(takeMia?.code == .forbidden)
            _ = try await chores.setArchived(piano.id, true, as: ned)
            _ = try await chores.setArchived(piano.id, false, as: ned)
            // Nor Mia's chores, which Mum set.
            let dishes = try await chores.create(.init(title: "Dishes", points: 5, assignees: [family.mia.uuid]), in: family.home, as: family.mum)
            let notHis = await serviceError { try await chores.update(dishes.id, .init(points: 50), as: ned) }
            #expect(notHis?.code == .forbidden)
            let notHisToDelete = await serviceError { try await chores.delete(dishes.id, as: ned) }
            #expect(notHisToDelete?.code == .forbidden)

            // Ned approves Nina's completion; Mia's he may not; the admins may approve anyone's.
            let ninasDone = try await chores.complete(piano.id, by: family.nina.uuid, as: .user(ned))
            #expect(try await chores.review(ninasDone.id, approve: true, as: ned).status == .approved)
            let miasDone = try await chores.complete(dishes.id, by: family.mia.uuid, as: .user(family.mum))
            let reviewMia = await serviceError { try await chores.review(miasDone.id, approve: true, as: ned) }
            #expect(reviewMia?.code == .forbidden)
            #expect(try await chores.review(miasDone.id, approve: true, as: family.dad).status == .approved)
            let lodgersReview = await serviceError { try await chores.review(ninasDone.id, approve: false, as: family.lodger) }
            #expect(lodgersReview?.code == .forbidden)

            // Redemptions: Ned resolves Nina's, not Mia's.
            let treat = try await chores.createReward(in: family.home, title: "Treat", cost: 5, as: family.mum)
            let ninas = try await chores.redeem(treat.id, by: family.nina.uuid, as: .user(ned))
            #expect(try await chores.resolveRedemption(ninas.id, fulfil: true, as: ned).status == .fulfilled)
            let mias = try await chores.redeem(treat.id, by: family.mia.uuid, as: .user(family.mum))
            let notNeds = await serviceError { try await chores.resolveRedemption(mias.id, fulfil: false, as: ned) }
            #expect(notNeds?.code == .forbidden)

            // A new chore of his, done by nobody yet, Ned deletes.
            let spare = try await chores.create(.init(title: "Spare", points: 1, assignees: [family.nina.uuid]), in: family.home, as: ned)
            try await chores.delete(spare.id, as: ned)
        }
    }

    @Test("a parent who is not an admin sets a reward for their own children: theirs to redeem and change; the admins' are everyone's")
    func parentSetsOwnChildrensRewards() async throws {
        try await withServices { services, _ in
            let family = try await Cast.Household.make(services)
            let chores = services.chores
            _ = try await services.members.add(family.neighbour, to: family.home, as: family.mum)
            let ned = family.neighbour
            let nina = try await services.signedInChild(family.nina, in: family.home, guardian: ned)
            let mia = try await services.signedInChild(family.mia, in: family.home, guardian: family.mum)
            for (child, parent) in [(family.nina, ned), (family.mia, family.mum)] {
                _ = try await chores.adjust(in: family.home, for: child.uuid, delta: 100, reason: "Start", as: family.mum)
                _ = parent
            }
            let lego = try await chores.createReward(in: family.home, title: "Lego", cost: 30, as: ned)
            #expect(lego.familyOf == ned)
            let film = try await chores.createReward(in: family.home, title: "Film", cost: 10, as: family.mum)
            #expect(film.familyOf == nil)
            // Nina sees both and redeems Lego; Mia sees only the community's and may not redeem Lego.
            #expect(Set(try await chores.rewards(in: family.home, as: nina).items.map(\.id)) == [lego.id, film.id])
            #expect(try await chores.rewards(in: family.home, as: mia).items.map(\.id) == [film.id])
            // So do the grown-ups: Ned his family's and the community's, the lodger the community's; the admins all.
            #expect(Set(try await chores.rewards(in: family.home, as: .user(ned)).items.map(\.id)) == [lego.id, film.id])
            #expect(try await chores.rewards(in: family.home, as: .user(family.lodger)).items.map(\.id) == [film.id])
            #expect(Set(try await chores.rewards(in: family.home, as: .user(family.dad)).items.map(\.id)) == [lego.id, film.id])
            #expect(try await chores.redeem(lego.id, as: nina).pointsCost == 30)
            let miaRedeems = await serviceError { try await chores.redeem(lego.id, as: mia) }
            #expect(miaRedeems?.code == .notFound)
            let mumRedeemsForMia = await serviceError { try await chores.redeem(lego.id, by: family.mia.uuid, as: .user(family.mum)) }
            #expect(mumRedeemsForMia?.code == .conflict, "\(String(describing: mumRedeemsForMia))")
            // Ned changes his; not the community's. The lodger (no children) sets none.
            #expect(try await chores.updateReward(lego.id, .init(pointsCost: 35), as: ned).pointsCost == 35)
            let notHis = await serviceError { try await chores.updateReward(film.id, .init(pointsCost: 1), as: ned) }
            #expect(notHis?.code == .forbidden)
            let lodger = await serviceError { try await chores.createReward(in: family.home, title: "Beer", cost: 5, as: family.lodger) }
            #expect(lodger?.code == .forbidden)
            // The admins change anyone's.
            #expect(try await chores.setRewardArchived(lego.id, true, as: family.dad).archivedAt != nil)
        }
    }

    @Test("the child's device syncs what a parent who is not an admin set for them, and a photo proof; another child's device gets none of it")
    func childDevicesSync() async throws {
        try await withMediaServices { services, _ in
            let family = try await Cast.Household.make(services)
            let chores = services.chores
            _ = try await services.members.add(family.neighbour, to: family.home, as: family.mum)
            let ned = family.neighbour
            let nina = try await services.signedInChild(family.nina, in: family.home, guardian: ned)
            let mia = try await services.signedInChild(family.mia, in: family.home, guardian: family.mum)
            let ninaStart = try await services.sync.changes(of: family.home, as: nina)
            let miaStart = try await services.sync.changes(of: family.home, as: mia)

            let piano = try await chores.create(
                .init(title: "Piano practice", points: 10, assignees: [family.nina.uuid], requiresPhoto: true), in: family.home, as: ned)
            let lego = try await chores.createReward(in: family.home, title: "Lego", cost: 30, as: ned)
            let photo = try await services.media.upload(
                to: family.home, filename: "piano.jpg", mimeType: "image/jpeg", data: Data([0xFF, 0xD8, 0xFF, 0x00]), width: 8, height: 8, as: nina)
            let done = try await chores.complete(piano.id, photo: photo.id, as: nina)

            let ninas = try await services.sync.changes(of: family.home, cursor: ninaStart.nextCursor, as: nina).changes
            func upserted(_ entity: SyncEntity, _ id: UUID, in changes: [Change]) -> Bool {
                changes.contains { $0.entity == entity && $0.id == id && $0.op == .upsert }
            }
            #expect(upserted(.chore, piano.id.uuid, in: ninas) && upserted(.reward, lego.id.uuid, in: ninas), "\(ninas.map(\.entity))")
            #expect(upserted(.choreCompletion, done.id.uuid, in: ninas))
            let completion = try #require(ninas.first { $0.entity == .choreCompletion && $0.id == done.id.uuid }?.data as? ChoreCompletion)
            #expect(completion.photoMediaID == photo.id)
            let mias = try await services.sync.changes(of: family.home, cursor: miaStart.nextCursor, as: mia).changes
            #expect(!mias.contains { [piano.id.uuid, lego.id.uuid, done.id.uuid].contains($0.id) && $0.op == .upsert }, "\(mias.map(\.entity))")
        }
    }
}
