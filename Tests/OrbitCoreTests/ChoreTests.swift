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
            let mia = try await services.signedInChild(family.mia, in: family.home, guardian: family.mum)
            let leo = try await services.signedInChild(family.leo, in: family.home, guardian: family.mum)
            // Leo cannot do the same occurrence again.
            let again = await serviceError { try await chores.complete(dishes.id, as: leo) }
            #expect(again?.code == .conflict)
            #expect(
                try await chores.points(in: family.home, for: family.mia.uuid, as: .user(family.dad)) == PointsAccount(balance: 0, lifetimeEarned: 0))
            let approved = try await chores.review(done.id, approve: true, as: family.dad)
            #expect(approved.status == .approved && approved.reviewedBy == family.dad)
            let twice = await serviceError { try await chores.review(done.id, approve: true, as: family.mum) }
            #expect(twice?.code == .conflict)
            #expect(try await chores.points(in: family.home, as: mia) == PointsAccount(balance: 20, lifetimeEarned: 20))
            #expect(try await chores.list(in: family.home, as: .user(family.lodger)).first?.nextOccurrenceDone == true)

            let film = try await chores.createReward(in: family.home, title: "Film night", cost: 15, stock: 2, as: family.mum)
            let redemption = try await chores.redeem(film.id, as: mia)
            #expect(redemption.status == .requested && redemption.pointsCost == 15 && redemption.requestedBy == nil)
            let short = await serviceError { try await chores.redeem(film.id, as: mia) }
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
            let mia = try await services.signedInChild(family.mia, in: family.home, guardian: family.mum)
            let leo = try await services.signedInChild(family.leo, in: family.home, guardian: family.mum)
            let nina = try await services.signedInChild(family.nina, in: family.next, guardian: family.neighbour)
            // The lodger may not mark it done for Mia (not their child), nor Mia for the lodger.
            let forChild = await serviceError { try await chores.complete(chore.id, by: family.mia.uuid, as: .user(family.lodger)) }
            #expect(forChild?.code == .forbidden)
            let childForAdult = await serviceError { try await chores.complete(chore.id, by: family.lodger.uuid, as: mia) }
            #expect(childForAdult?.code == .forbidden)
            let neighbourChild = await serviceError { try await chores.complete(chore.id, as: nina) }
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
            #expect(try await chores.list(in: family.home, as: leo).isEmpty)
            #expect(try await chores.list(in: family.home, as: mia).map(\.id) == [chore.id])
            let elsewhere = await serviceError { try await chores.list(in: family.next, as: mia) }
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
            let leo = try await services.signedInChild(family.leo, in: family.home, guardian: family.mum)
            let done = try await chores.complete(chore.id, as: leo)
            #expect(done.occurrenceAt == today)
            let yesterday = today.addingTimeInterval(-86_400)
            #expect(try await chores.complete(chore.id, occurrence: yesterday, as: leo).occurrenceAt == yesterday)
            let notOne = await serviceError { try await chores.complete(chore.id, occurrence: today.addingTimeInterval(60), as: leo) }
            #expect(notOne?.code == .conflict)
            let missing = await serviceError {
                try await chores.create(
                    .init(title: "X", points: 1, recurrenceRule: "FREQ=DAILY", assignees: [family.leo.uuid]), in: family.home, as: family.mum)
            }
            #expect(missing?.field == "due_at")
        }
    }

    @Test("no free points from the past: occurrences up to the chore's window (7 days by default, or its own) can be marked done, older ones not")
    func completionWindow() async throws {
        try await withServices { services, _ in
            let family = try await Family.make(services)
            var clocked = services
            // 2026-03-10 20:00 Berlin; a daily 18:00 chore since 2026-01-01.
            let now = Date(timeIntervalSince1970: 1_773_169_200)
            clocked.now = { now }
            let chores = clocked.chores
            let start = Date(timeIntervalSince1970: 1_767_286_800)  // 2026-01-01 18:00 Berlin
            let today = Date(timeIntervalSince1970: 1_773_162_000)  // 2026-03-10 18:00 Berlin
            let daily = try await chores.create(
                .init(
                    title: "Feed the cat", points: 3, dueAt: start, recurrenceRule: "FREQ=DAILY", requiresApproval: false,
                    assignees: [family.leo.uuid]),
                in: family.home, as: family.mum)
            #expect(daily.completionWindowDays == 7)
            let leo = try await services.signedInChild(family.leo, in: family.home, guardian: family.mum)
            for days in 0...7 {
                _ = try await chores.complete(daily.id, occurrence: today.addingTimeInterval(Double(-days) * 86_400), as: leo)
            }
            for days in [8, 30, 68] {
                let old = await serviceError {
                    try await chores.complete(daily.id, occurrence: today.addingTimeInterval(Double(-days) * 86_400), as: leo)
                }
                #expect(old?.code == .conflict && old?.field == "occurrence", "\(days) days ago: \(String(describing: old))")
                #expect(old?.message.contains("more than 7 days ago") == true)
            }
            // A parent is held to it too; the points are those of the 8 days only.
            let byParent = await serviceError {
                try await chores.complete(daily.id, occurrence: start, by: family.leo.uuid, as: .user(family.mum))
            }
            #expect(byParent?.code == .conflict)
            #expect(try await chores.points(in: family.home, for: family.leo.uuid, as: .user(family.mum)).balance == 24)

            // A chore's own window: today only.
            let strict = try await chores.create(
                .init(
                    title: "Homework", points: 5, dueAt: start, recurrenceRule: "FREQ=DAILY", completionWindowDays: 0, assignees: [family.leo.uuid]),
                in: family.home, as: family.mum)
            _ = try await chores.complete(strict.id, as: leo)
            let yesterday = await serviceError { try await chores.complete(strict.id, occurrence: today.addingTimeInterval(-86_400), as: leo) }
            #expect(yesterday?.code == .conflict && yesterday?.message.contains("on its day only") == true)
            let tooWide = await serviceError {
                try await chores.create(
                    .init(title: "X", points: 1, completionWindowDays: 32, assignees: [family.leo.uuid]), in: family.home, as: family.mum)
            }
            #expect(tooWide?.field == "completion_window_days")
            // A one-off chore due long ago: past its window; one without a due time: any time.
            let overdue = try await chores.create(
                .init(title: "Tidy", points: 2, dueAt: start, assignees: [family.leo.uuid]), in: family.home, as: family.mum)
            #expect(await serviceError { try await chores.complete(overdue.id, as: leo) }?.code == .conflict)
            let whenever = try await services.chores.create(
                .init(title: "Sort Lego", points: 2, assignees: [family.leo.uuid]), in: family.home, as: family.mum)
            var later = services
            later.now = { Date().addingTimeInterval(60 * 86_400) }
            _ = try await later.chores.complete(whenever.id, as: try await later.signedInChild(family.leo, in: family.home, guardian: family.mum))
        }
    }

    @Test("'due soon' expands a series over the next two hours only: a 10,000-day rule set 20 years ago looks at a period or two, not 7,000")
    func dueSoonLooksAhead() async throws {
        try await withServices { services, database in
            let family = try await Family.make(services)
            let now = Date()
            let start = now.addingTimeInterval(-20 * 365 * 86_400 + 3600)  // 20 years ago, an hour later in the day than now
            for rule in ["FREQ=DAILY", "FREQ=DAILY;COUNT=10000", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR,SA,SU;COUNT=10000"] {
                let chore = try await services.chores.create(
                    .init(title: rule, points: 1, dueAt: start, recurrenceRule: rule, assignees: [family.leo.uuid]), in: family.home, as: family.mum)
                var periods = 0
                let due = try ChoreService.dueSoon(of: chore, now: now, periodsVisited: &periods)
                #expect(due.map { abs($0.timeIntervalSince(now) - 3600) < 60 } == true, "\(rule): \(String(describing: due))")
                #expect(periods <= 3, "\(rule): \(periods) periods")
            }
            // A series set before its end was kept: the job finds it, keeps it, and it ends.
            try await database.withConnection { connection in
                try await connection.query("UPDATE chores SET recurrence_ends_at = NULL")
            }
            var clocked = services
            clocked.now = { now }
            #expect(try await clocked.notifications.sendReminders() >= 1)
            let ends = try await database.withConnection { connection in
                try await connection.query("SELECT recurrence_rule, recurrence_ends_at FROM chores ORDER BY recurrence_rule").map {
                    try $0.decode((String, Date?).self)
                }
            }
            #expect(ends.map { $0.1 == nil } == [true, false, false], "\(ends)")
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
            _ = try await clocked.chores.complete(cat.id, as: try await services.signedInChild(family.leo, in: family.home, guardian: family.mum))
            #expect(try await clocked.notifications.sendReminders() == 0)
        }
    }

    @Test("'due soon' follows preferences: a parent who switched chores due off hears of none")
    func dueSoonFollowsPreferences() async throws {
        try await withServices { services, _ in
            let family = try await Family.make(services)
            _ = try await services.members.updateMine(in: family.home, notificationPrefs: [.choreDue: false], as: family.mum)
            var clocked = services
            let start = Date(timeIntervalSince1970: 1_772_557_200)  // 2026-03-03 18:00 Berlin
            let later = start.addingTimeInterval(7 * 86_400 - 3600)  // a week later, due in an hour
            clocked.now = { later }
            _ = try await clocked.chores.create(
                .init(title: "Feed the cat", points: 3, dueAt: start, recurrenceRule: "FREQ=DAILY", assignees: [family.leo.uuid]),
                in: family.home, as: family.mum)
            #expect(try await clocked.notifications.sendReminders() == 0)
        }
    }

    @Test("a child signs in on a paired device with their PIN; 5 wrong PINs lock it for 15 minutes and tell their parent")
    func childSignIn() async throws {
        try await withServices { services, _ in
            let family = try await Family.make(services)
            let parents = services.family
            let notAPIN = await serviceError { try await parents.setPIN("12a4", for: family.mia, in: family.home, as: family.mum) }
            #expect(notAPIN?.field == "pin")
            let notParent = await serviceError { try await parents.setPIN("1234", for: family.mia, in: family.home, as: family.lodger) }
            #expect(notParent?.code == .forbidden)
            try await parents.setPIN("4321", for: family.mia, in: family.home, as: family.mum)
            try await parents.setPIN("9999", for: family.leo, in: family.home, as: family.mum)
            let pairing = try await parents.startPairing(for: family.mia, in: family.home, as: family.mum)
            #expect(pairing.pairingCode.count == 8 && pairing.communityID == family.home)
            let device = try await parents.finishPairing(code: pairing.pairingCode)
            #expect(device.child == family.mia)
            let reused = await serviceError { try await parents.finishPairing(code: pairing.pairingCode) }
            #expect(reused?.code == .unauthenticated)

            let session = ChildSession(child: family.mia, device: pairing.deviceID)
            #expect(try await parents.signInChild(deviceToken: device.deviceToken, pin: "4321") == .signedIn(session, community: family.home))
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
            // Mia's parent hears of it; the household's other admin and the lodger do not: she is not theirs.
            let locked = try await services.notifications.list(limit: 200, as: family.mum).items.filter { $0.type.rawValue == "child_locked_out" }
            #expect(locked.count == 1 && locked.first?.body == "Five wrong PINs: sign-in is locked for 15 minutes.")
            for other in [family.dad, family.lodger] {
                #expect(try await services.notifications.list(limit: 200, as: other).items.allSatisfy { $0.type.rawValue != "child_locked_out" })
            }
            // A new PIN from the parent lifts the lock.
            try await parents.setPIN("2468", for: family.mia, in: family.home, as: family.mum)
            #expect(try await parents.signInChild(deviceToken: device.deviceToken, pin: "2468") == .signedIn(session, community: family.home))
        }
    }

    @Test(
        "a child's sign-in belongs to their parent: another admin of the household or of a club is refused, changes nothing and is audited as refused"
    )
    func onlyTheGuardian() async throws {
        try await withServices { services, database in
            let family = try await Family.make(services)
            let parents = services.family
            // Mum is also in the neighbour's club, where the neighbour is the admin.
            _ = try await services.members.add(family.mum, to: family.next, as: family.neighbour)
            try await parents.setPIN("4321", for: family.mia, in: family.home, as: family.mum)
            let pairing = try await parents.startPairing(for: family.mia, in: family.home, as: family.mum)
            let device = try await parents.finishPairing(code: pairing.pairingCode)

            for (admin, community) in [(family.neighbour, family.next), (family.dad, family.home)] {
                let pin = await serviceError { try await parents.setPIN("0000", for: family.mia, in: community, as: admin) }
                #expect(pin?.code == .forbidden && pin?.rule == "a child's sign-in is managed by the child's own parent only")
                let pair = await serviceError { try await parents.startPairing(for: family.mia, in: community, as: admin) }
                #expect(pair?.code == .forbidden)
                let list = await serviceError { try await parents.devices(of: family.mia, in: community, as: admin) }
                #expect(list?.code == .forbidden)
                let revoke = await serviceError { try await parents.revokeDevices(of: family.mia, in: community, as: admin) }
                #expect(revoke?.code == .forbidden)
            }
            // Nothing changed: the parents' PIN still signs Mia in, and no device was added or revoked.
            guard case .signedIn = try await parents.signInChild(deviceToken: device.deviceToken, pin: "4321") else {
                Issue.record("the parents' PIN no longer signs Mia in")
                return
            }
            let devices = try await database.withConnection { connection in
                try await connection.query("SELECT count(*) AS n, count(revoked_at) AS revoked FROM child_devices").single()
                    .decode((Int64, Int64).self)
            }
            #expect(devices == (1, 0))
            // Audited as refused, never as done.
            let done = try await database.withConnection { connection in
                try await connection.query(
                    "SELECT action FROM audit_log WHERE user_id = ANY(\([family.neighbour.uuid, family.dad.uuid])) AND action LIKE 'child.%' ORDER BY action"
                ).map { try $0.decode("action", as: String.self) }
            }
            #expect(done.allSatisfy { $0.hasSuffix(".refused") } && done.contains("child.pin_set.refused"), "\(done)")
            #expect(done.contains("child.device_pairing.refused") && done.contains("child.device_revoked.refused"))
        }
    }

    @Test(
        "a child's token reaches only the community its device was paired for: the household's child sees nothing of the club, and the other way round"
    )
    func childScopedToTheDevicesCommunity() async throws {
        try await withServices { services, _ in
            let family = try await Family.make(services)
            let chores = services.chores
            // Mum is in the neighbour's club too; Mia has a chore and a reward in each.
            _ = try await services.members.add(family.mum, to: family.next, as: family.neighbour)
            var rewards: [CommunityID: RewardID] = [:]
            for (community, admin) in [(family.home, family.mum), (family.next, family.neighbour)] {
                _ = try await chores.create(
                    .init(title: "Chore", points: 10, requiresApproval: false, assignees: [family.mia.uuid]), in: community, as: admin)
                _ = try await chores.adjust(in: community, for: family.mia.uuid, delta: 50, reason: "Start", as: admin)
                rewards[community] = try await chores.createReward(in: community, title: "Treat", cost: 5, as: admin).id
            }
            let atHome = try await services.signedInChild(family.mia, in: family.home, guardian: family.mum)
            let atClub = try await services.signedInChild(family.mia, in: family.next, guardian: family.mum)
            for (principal, mine, other) in [(atHome, family.home, family.next), (atClub, family.next, family.home)] {
                #expect(try await chores.list(in: mine, as: principal).count == 1)
                #expect(try await chores.points(in: mine, as: principal).balance == 50)
                #expect(try await chores.rewards(in: mine, as: principal).count == 1)
                _ = try await chores.redeem(try #require(rewards[mine]), as: principal)
                let list = await serviceError { try await chores.list(in: other, as: principal) }
                let points = await serviceError { try await chores.points(in: other, as: principal) }
                let shop = await serviceError { try await chores.rewards(in: other, as: principal) }
                let redeem = await serviceError { try await chores.redeem(try #require(rewards[other]), as: principal) }
                let history = await serviceError { try await chores.redemptions(in: other, as: principal) }
                for error in [list, points, shop, redeem, history] { #expect(error?.code == .notFound, "\(String(describing: error))") }
            }
            // Each redeemed once, in its own community.
            #expect(try await chores.points(in: family.home, for: family.mia.uuid, as: .user(family.mum)).balance == 45)
            #expect(try await chores.points(in: family.next, for: family.mia.uuid, as: .user(family.mum)).balance == 45)
        }
    }

    @Test("a parent lists and revokes a child's devices: a revoked device signs in no more and its token reaches nothing at once")
    func revokingDevices() async throws {
        try await withServices { services, _ in
            let family = try await Family.make(services)
            let parents = services.family
            let chore = try await services.chores.create(
                .init(title: "Bins", points: 2, assignees: [family.mia.uuid]), in: family.home, as: family.mum)
            try await parents.setPIN("4321", for: family.mia, in: family.home, as: family.mum)
            let first = try await parents.startPairing(for: family.mia, in: family.home, as: family.mum)
            let second = try await parents.startPairing(for: family.mia, in: family.home, as: family.mum)
            let waiting = try await parents.startPairing(for: family.mia, in: family.home, as: family.mum)
            let tablet = try await parents.finishPairing(code: first.pairingCode).deviceToken
            let phone = try await parents.finishPairing(code: second.pairingCode).deviceToken
            guard case .signedIn(let session, _) = try await parents.signInChild(deviceToken: tablet, pin: "4321") else {
                Issue.record("the tablet does not sign in")
                return
            }
            let listed = try await parents.devices(of: family.mia, in: family.home, as: family.mum)
            #expect(
                Dictionary(uniqueKeysWithValues: listed.map { ($0.id, $0.status) }) == [
                    first.deviceID: .paired, second.deviceID: .paired, waiting.deviceID: .pending,
                ])
            #expect(listed.first { $0.id == first.deviceID }?.lastUsedAt != nil)
            #expect(try await services.chores.get(chore.id, as: .child(session)).id == chore.id)

            try await parents.revokeDevices(of: family.mia, in: family.home, device: first.deviceID, as: family.mum)
            let gone = await serviceError { try await services.chores.get(chore.id, as: .child(session)) }
            #expect(gone?.code == .notFound)
            #expect(try await parents.signInChild(deviceToken: tablet, pin: "4321") == .unknownDevice)
            guard case .signedIn = try await parents.signInChild(deviceToken: phone, pin: "4321") else {
                Issue.record("revoking the tablet revoked the phone")
                return
            }
            // Again: nothing changes. An unknown device: not found.
            try await parents.revokeDevices(of: family.mia, in: family.home, device: first.deviceID, as: family.mum)
            let unknown = await serviceError {
                try await parents.revokeDevices(of: family.mia, in: family.home, device: ChildDeviceID(UUID()), as: family.mum)
            }
            #expect(unknown?.code == .notFound)
            // All: the phone, and the code not used yet.
            try await parents.revokeDevices(of: family.mia, in: family.home, as: family.mum)
            #expect(try await parents.signInChild(deviceToken: phone, pin: "4321") == .unknownDevice)
            let unused = await serviceError { try await parents.finishPairing(code: waiting.pairingCode) }
            #expect(unused?.code == .unauthenticated)
            #expect(
                try await parents.devices(of: family.mia, in: family.home, as: family.mum).allSatisfy {
                    $0.status == .revoked && $0.revokedBy == family.mum
                })
            let audit = try await services.communities.auditLog(family.home, limit: 200, as: family.mum).items.map(\.action)
            #expect(audit.filter { $0 == "child.device_revoked" }.count == 3)
        }
    }

    @Test("lockouts in a row last longer (15 minutes, 1 hour, 24 hours), each told to the parent; a sign-in starts again")
    func escalatingLockouts() async throws {
        try await withServices { services, database in
            let family = try await Family.make(services)
            let parents = services.family
            try await parents.setPIN("4321", for: family.mia, in: family.home, as: family.mum)
            let device = try await parents.finishPairing(
                code: try await parents.startPairing(for: family.mia, in: family.home, as: family.mum).pairingCode)
            func lockOut() async throws -> TimeInterval {
                for _ in 0..<4 { #expect(try await parents.signInChild(deviceToken: device.deviceToken, pin: "0000") == .wrongPIN) }
                guard case .locked(let until) = try await parents.signInChild(deviceToken: device.deviceToken, pin: "0000") else {
                    Issue.record("the fifth wrong PIN did not lock")
                    return 0
                }
                // The lockout ran out (as if the time had passed): its end moves into the past.
                try await database.withConnection { connection in
                    try await connection.query("UPDATE child_credentials SET locked_until = now() - interval '1 second'")
                }
                return until.timeIntervalSinceNow
            }
            let lengths = [try await lockOut(), try await lockOut(), try await lockOut(), try await lockOut()]
            for (length, expected) in zip(lengths, [15 * 60.0, 3600, 86_400, 86_400]) {
                #expect(abs(length - expected) < 120, "\(lengths)")
            }
            let told = try await services.notifications.list(limit: 200, as: family.mum).items.filter { $0.type.rawValue == "child_locked_out" }
            #expect(
                told.map(\.body).sorted() == [
                    "Five wrong PINs: sign-in is locked for 1 hour (the second lockout in a row).",
                    "Five wrong PINs: sign-in is locked for 15 minutes.",
                    "Five wrong PINs: sign-in is locked for 24 hours (lockout 3 in a row).",
                    "Five wrong PINs: sign-in is locked for 24 hours (lockout 4 in a row).",
                ])
            // A right PIN after the lockout starts the count again.
            guard case .signedIn = try await parents.signInChild(deviceToken: device.deviceToken, pin: "4321") else {
                Issue.record("the right PIN after the lockout did not sign in")
                return
            }
            #expect(abs(try await lockOut() - 15 * 60) < 120)
        }
    }

    @Test("ten wrong PINs at once on ten connections are counted exactly: four wrong, the fifth starts the lockout, the rest find it locked")
    func concurrentWrongPINs() async throws {
        try await withServices { services, database in
            let family = try await Family.make(services)
            try await services.family.setPIN("4321", for: family.mia, in: family.home, as: family.mum)
            let pairing = try await services.family.startPairing(for: family.mia, in: family.home, as: family.mum)
            let device = try await services.family.finishPairing(code: pairing.pairingCode).deviceToken
            let pool = database.makePool(maxConnections: 10)
            let wide = OrbitServices(pool: pool)
            // Ten connections open first (each held until all ten are), so the attempts meet in the
            // database, not in the pool's queue.
            let gathering = Gathering(of: 10)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<10 { group.addTask { try await pool.withConnection { _ in await gathering.arrive() } } }
                try await group.waitForAll()
            }
            let outcomes = try await withThrowingTaskGroup(of: ChildSignInOutcome.self) { group in
                for _ in 0..<10 { group.addTask { try await wide.family.signInChild(deviceToken: device, pin: "0000") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            await pool.close()
            let lockEnds = Set(outcomes.compactMap { if case .locked(let until) = $0 { until } else { nil } })
            #expect(outcomes.filter { $0 == .wrongPIN }.count == 4, "\(outcomes)")
            #expect(outcomes.filter { if case .locked = $0 { true } else { false } }.count == 6, "\(outcomes)")
            #expect(lockEnds.count == 1, "one lockout, started by the fifth: \(lockEnds)")
            let state = try await database.withConnection { connection in
                try await connection.query("SELECT failed_attempts, lockouts_in_row FROM child_credentials").single().decode((Int32, Int32).self)
            }
            #expect(state == (0, 1))
            let told = try await services.notifications.list(limit: 200, as: family.mum).items.filter { $0.type.rawValue == "child_locked_out" }
            #expect(told.count == 1)
        }
    }

    @Test("a device unused for 30 days signs in no more; a parent pairs it again and the new pairing signs in; one used within 30 days does")
    func idleDevicesExpire() async throws {
        try await withServices { services, database in
            let family = try await Family.make(services)
            let parents = services.family
            try await parents.setPIN("4321", for: family.mia, in: family.home, as: family.mum)
            let pairing = try await parents.startPairing(for: family.mia, in: family.home, as: family.mum)
            let device = try await parents.finishPairing(code: pairing.pairingCode).deviceToken
            try await database.withConnection { connection in
                try await connection.query(
                    "UPDATE child_devices SET paired_at = now() - interval '31 days', last_used_at = now() - interval '30 days 1 minute'")
            }
            #expect(try await parents.signInChild(deviceToken: device, pin: "4321") == .deviceExpired)
            #expect(try await parents.devices(of: family.mia, in: family.home, as: family.mum).map(\.status) == [.expired])
            // The parent pairs it again: the new pairing signs in, the expired one still does not.
            let again = try await parents.startPairing(for: family.mia, in: family.home, as: family.mum)
            let repaired = try await parents.finishPairing(code: again.pairingCode).deviceToken
            guard case .signedIn = try await parents.signInChild(deviceToken: repaired, pin: "4321") else {
                Issue.record("a device paired again did not sign in")
                return
            }
            #expect(try await parents.signInChild(deviceToken: device, pin: "4321") == .deviceExpired)
            // Used within 30 days: still signs in.
            try await database.withConnection { connection in
                try await connection.query("UPDATE child_devices SET last_used_at = now() - interval '29 days 23 hours'")
            }
            guard case .signedIn = try await parents.signInChild(deviceToken: device, pin: "4321") else {
                Issue.record("a device used within 30 days did not sign in")
                return
            }
        }
    }
}

/// Lets `count` tasks wait for one another: each `arrive()` returns once all have arrived.
private actor Gathering {
    private let count: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(of count: Int) { self.count = count }

    func arrive() async {
        if waiting.count + 1 == count {
            waiting.forEach { $0.resume() }
            waiting.removeAll()
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }
}
