import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// A household: two parents (admins), a grown-up member, two children of `mum`, and a
/// neighbouring family with its own child.
private struct Family {
    var mum: UserID
    var dad: UserID
    var lodger: UserID
    var home: CommunityID
    var mia: FamilyMemberID
    var leo: FamilyMemberID
    var neighbour: UserID
    var next: CommunityID
    var nina: FamilyMemberID

    static func make(_ services: OrbitServices) async throws -> Family {
        let mum = try await services.users.create(email: "mum@example.com", displayName: "Mum").id
        let dad = try await services.users.create(email: "dad@example.com", displayName: "Dad").id
        let lodger = try await services.users.create(email: "lodger@example.com", displayName: "Lou").id
        let neighbour = try await services.users.create(email: "neighbour@example.com", displayName: "Ned").id
        let home = try await services.communities.create(
            name: "The Parkers", settings: CommunitySettings(timezone: "Europe/Berlin"), as: mum
        ).id
        _ = try await services.members.add(dad, to: home, role: .admin, as: mum)
        _ = try await services.members.add(lodger, to: home, as: mum)
        let mia = try await services.family.add(name: "Mia", as: mum).id
        let leo = try await services.family.add(name: "Leo", as: mum).id
        let next = try await services.communities.create(name: "Next door", as: neighbour).id
        let nina = try await services.family.add(name: "Nina", as: neighbour).id
        return Family(mum: mum, dad: dad, lodger: lodger, home: home, mia: mia, leo: leo, neighbour: neighbour, next: next, nina: nina)
    }
}

@Suite("Chores, points and rewards")
struct ChoreTests {
    @Test("a chore's week: set, done by a child, approved by the other parent, points spent on a reward, a cancellation refunded")
    func week() async throws {
        try await withServices { services, _ in
            let family = try await Family.make(services)
            let chores = services.chores
            let dishes = try await chores.create(
                .init(title: "Dishes", points: 20, difficulty: .medium, assignees: [family.mia.uuid, family.leo.uuid]), in: family.home,
                as: family.mum)
            #expect(dishes.assignees.count == 2 && dishes.nextOccurrenceDone == false)
            let done = try await chores.complete(dishes.id, by: family.mia.uuid, as: .user(family.mum))
            #expect(done.status == .pending && done.holder == .familyMember(family.mia) && done.points == 20)
            // Leo cannot do the same occurrence again.
            let again = await serviceError { try await chores.complete(dishes.id, as: .child(family.leo)) }
            #expect(again?.code == .conflict)
            #expect(
                try await chores.points(in: family.home, for: family.mia.uuid, as: .user(family.dad)) == PointsAccount(balance: 0, lifetimeEarned: 0))
            let approved = try await chores.review(done.id, approve: true, as: family.dad)
            #expect(approved.status == .approved && approved.reviewedBy == family.dad)
            let twice = await serviceError { try await chores.review(done.id, approve: true, as: family.mum) }
            #expect(twice?.code == .conflict)
            #expect(try await chores.points(in: family.home, as: .child(family.mia)) == PointsAccount(balance: 20, lifetimeEarned: 20))
            #expect(try await chores.list(in: family.home, as: .user(family.lodger)).first?.nextOccurrenceDone == true)

            let film = try await chores.createReward(in: family.home, title: "Film night", cost: 15, stock: 2, as: family.mum)
            let redemption = try await chores.redeem(film.id, as: .child(family.mia))
            #expect(redemption.status == .requested && redemption.pointsCost == 15 && redemption.requestedBy == nil)
            let short = await serviceError { try await chores.redeem(film.id, as: .child(family.mia)) }
            #expect(short?.code == .conflict && short?.message == "Not enough points for that.")
            let cancelled = try await chores.resolveRedemption(redemption.id, fulfil: false, as: family.dad)
            #expect(cancelled.status == .cancelled)
            #expect(
                try await chores.points(in: family.home, for: family.mia.uuid, as: .user(family.mum))
                    == PointsAccount(balance: 20, lifetimeEarned: 20))
            let adjusted = try await chores.adjust(in: family.home, for: family.mia.uuid, delta: -5, reason: "Broke a plate", as: family.mum)
            #expect(adjusted == PointsAccount(balance: 15, lifetimeEarned: 20))

            let audit = try await services.communities.auditLog(family.home, limit: 200, as: family.mum).items.map(\.action)
            for action in ["chore.created", "chore.approved", "reward.created", "reward.cancelled", "points.adjusted"] {
                #expect(audit.contains(action), "\(action) in \(audit)")
            }
            let notices = try await services.notifications.list(limit: 200, as: family.mum).items.map(\.type.rawValue)
            for kind in ["chore_assigned", "chore_completed", "chore_approved", "reward_redeemed"] {
                #expect(notices.contains(kind), "\(kind) in \(notices)")
            }
        }
    }

    @Test("the permission matrix: only admins set chores, review and adjust; people act for themselves, parents for their children")
    func permissions() async throws {
        try await withServices { services, _ in
            let family = try await Family.make(services)
            let chores = services.chores
            let notAdmin = await serviceError {
                try await chores.create(.init(title: "Mow", points: 5, assignees: [family.lodger.uuid]), in: family.home, as: family.lodger)
            }
            #expect(notAdmin?.code == .forbidden)
            let outsider = await serviceError {
                try await chores.create(.init(title: "Mow", points: 5, assignees: [family.mia.uuid]), in: family.home, as: family.neighbour)
            }
            #expect(outsider?.code == .notFound)
            let stranger = await serviceError {
                try await chores.create(.init(title: "Mow", points: 5, assignees: [family.nina.uuid]), in: family.home, as: family.mum)
            }
            #expect(stranger?.code == .conflict)
            let chore = try await chores.create(
                .init(title: "Mow", points: 5, requiresApproval: false, assignees: [family.lodger.uuid, family.mia.uuid]), in: family.home,
                as: family.mum)
            // The lodger may not mark it done for Mia (not their child), nor Mia for the lodger.
            let forChild = await serviceError { try await chores.complete(chore.id, by: family.mia.uuid, as: .user(family.lodger)) }
            #expect(forChild?.code == .forbidden)
            let childForAdult = await serviceError { try await chores.complete(chore.id, by: family.lodger.uuid, as: .child(family.mia)) }
            #expect(childForAdult?.code == .forbidden)
            let neighbourChild = await serviceError { try await chores.complete(chore.id, as: .child(family.nina)) }
            #expect(neighbourChild?.code == .notFound)
            // No approval needed: credited at once.
            let done = try await chores.complete(chore.id, as: .user(family.lodger))
            #expect(done.status == .approved)
            #expect(try await chores.points(in: family.home, as: .user(family.lodger)) == PointsAccount(balance: 5, lifetimeEarned: 5))
            let review = await serviceError { try await chores.review(done.id, approve: false, as: family.lodger) }
            #expect(review?.code == .forbidden)
            let adjust = await serviceError {
                try await chores.adjust(in: family.home, for: family.lodger.uuid, delta: 100, reason: "Me", as: family.lodger)
            }
            #expect(adjust?.code == .forbidden)
            let refusals = try await services.communities.auditLog(family.home, limit: 200, as: family.mum).items.map(\.action)
            #expect(refusals.contains("chore.created.refused") && refusals.contains("points.adjusted.refused"))
            // A child sees their own chores only, and nothing of the neighbours.
            #expect(try await chores.list(in: family.home, as: .child(family.leo)).isEmpty)
            #expect(try await chores.list(in: family.home, as: .child(family.mia)).map(\.id) == [chore.id])
            let elsewhere = await serviceError { try await chores.list(in: family.next, as: .child(family.mia)) }
            #expect(elsewhere?.code == .notFound)
        }
    }

    @Test("a recurring chore counts today's occurrence, in the community's zone; another day's is named explicitly")
    func recurringOccurrences() async throws {
        try await withServices { services, _ in
            let family = try await Family.make(services)
            var clocked = services
            // 2026-03-10 20:00 Berlin (19:00 UTC): the daily 18:00 chore of today is late, still today's.
            let now = Date(timeIntervalSince1970: 1_773_169_200)
            clocked.now = { now }
            let chores = clocked.chores
            let start = Date(timeIntervalSince1970: 1_772_557_200)  // 2026-03-03 18:00 Berlin (17:00 UTC)
            let chore = try await chores.create(
                .init(title: "Feed the cat", points: 3, dueAt: start, recurrenceRule: "FREQ=DAILY", assignees: [family.leo.uuid]),
                in: family.home, as: family.mum)
            #expect(chore.recurrenceTimezone == "Europe/Berlin")
            let today = Date(timeIntervalSince1970: 1_773_162_000)  // 2026-03-10 17:00 UTC
            #expect(chore.nextOccurrenceAt == today)
            let done = try await chores.complete(chore.id, as: .child(family.leo))
            #expect(done.occurrenceAt == today)
            let yesterday = today.addingTimeInterval(-86_400)
            #expect(try await chores.complete(chore.id, occurrence: yesterday, as: .child(family.leo)).occurrenceAt == yesterday)
            let notOne = await serviceError { try await chores.complete(chore.id, occurrence: today.addingTimeInterval(60), as: .child(family.leo)) }
            #expect(notOne?.code == .conflict)
            let missing = await serviceError {
                try await chores.create(
                    .init(title: "X", points: 1, recurrenceRule: "FREQ=DAILY", assignees: [family.leo.uuid]), in: family.home, as: family.mum)
            }
            #expect(missing?.field == "due_at")
        }
    }

    @Test("'due soon' reaches a child's parent two hours ahead, once for all servers, and not for an occurrence already done")
    func dueSoon() async throws {
        try await withServices { services, _ in
            let family = try await Family.make(services)
            var clocked = services
            let start = Date(timeIntervalSince1970: 1_772_557_200)  // 2026-03-03 18:00 Berlin
            var now = start.addingTimeInterval(7 * 86_400 - 3600)  // 2026-03-10 17:00 Berlin: today's is due in an hour
            clocked.now = { [now] in now }
            let cat = try await clocked.chores.create(
                .init(title: "Feed the cat", points: 3, dueAt: start, recurrenceRule: "FREQ=DAILY", assignees: [family.leo.uuid]),
                in: family.home, as: family.mum)
            #expect(try await clocked.notifications.sendReminders() == 1)
            #expect(try await clocked.notifications.sendReminders() == 0)
            let due = try await services.notifications.list(limit: 200, as: family.mum).items.filter { $0.type == .choreDue }
            #expect(due.count == 1 && due.first?.title == "Due soon: Feed the cat")
            // Tomorrow, done early in the day: no reminder for it.
            now = now.addingTimeInterval(86_400)
            clocked.now = { [now] in now }
            _ = try await clocked.chores.complete(cat.id, as: .child(family.leo))
            #expect(try await clocked.notifications.sendReminders() == 0)
        }
    }

    @Test("a child signs in on a paired device with their PIN; 5 wrong PINs lock it for 15 minutes and tell the parents")
    func childSignIn() async throws {
        try await withServices { services, _ in
            let family = try await Family.make(services)
            let parents = services.family
            let notAPIN = await serviceError { try await parents.setPIN("12a4", for: family.mia, in: family.home, as: family.mum) }
            #expect(notAPIN?.field == "pin")
            let notParent = await serviceError { try await parents.setPIN("1234", for: family.mia, in: family.home, as: family.lodger) }
            #expect(notParent?.code == .forbidden)
            try await parents.setPIN("4321", for: family.mia, in: family.home, as: family.dad)
            try await parents.setPIN("9999", for: family.leo, in: family.home, as: family.mum)
            let pairing = try await parents.startPairing(for: family.mia, in: family.home, as: family.mum)
            #expect(pairing.pairingCode.count == 8)
            let device = try await parents.finishPairing(code: pairing.pairingCode)
            #expect(device.child == family.mia)
            let reused = await serviceError { try await parents.finishPairing(code: pairing.pairingCode) }
            #expect(reused?.code == .unauthenticated)

            #expect(try await parents.signInChild(deviceToken: device.deviceToken, pin: "4321") == .signedIn(family.mia))
            // Leo's PIN on Mia's device is just a wrong PIN: never looked up across children.
            #expect(try await parents.signInChild(deviceToken: device.deviceToken, pin: "9999") == .wrongPIN)
            for _ in 0..<3 { #expect(try await parents.signInChild(deviceToken: device.deviceToken, pin: "0000") == .wrongPIN) }
            guard case .locked(let until) = try await parents.signInChild(deviceToken: device.deviceToken, pin: "1111") else {
                Issue.record("the fifth wrong PIN locks")
                return
            }
            #expect(until > Date().addingTimeInterval(14 * 60))
            // Locked: even the right PIN is refused.
            #expect(try await parents.signInChild(deviceToken: device.deviceToken, pin: "4321") == .locked(until: until))
            #expect(try await parents.signInChild(deviceToken: "unknown-token", pin: "4321") == .unknownDevice)
            for parent in [family.mum, family.dad] {
                let locked = try await services.notifications.list(limit: 200, as: parent).items.filter { $0.type.rawValue == "child_locked_out" }
                #expect(locked.count == 1)
            }
            #expect(try await services.notifications.list(limit: 200, as: family.lodger).items.allSatisfy { $0.type.rawValue != "child_locked_out" })
            // A new PIN from a parent lifts the lock.
            try await parents.setPIN("2468", for: family.mia, in: family.home, as: family.mum)
            #expect(try await parents.signInChild(deviceToken: device.deviceToken, pin: "2468") == .signedIn(family.mia))
        }
    }
}
