import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Chores, points and rewards")
struct ChoreTests {
    @Test("a chore's week: set, done by a child, approved by the other parent, points spent on a reward, a cancellation refunded")
    func week() async throws {
        try await withServices { services, _ in
            let family = try await Cast.Household.make(services)
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
            #expect(try await chores.list(in: family.home, as: .user(family.lodger)).items.first?.nextOccurrenceDone == true)

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
            let family = try await Cast.Household.make(services)
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
            #expect(try await chores.list(in: family.home, as: leo).items.isEmpty)
            #expect(try await chores.list(in: family.home, as: mia).items.map(\.id) == [chore.id])
            let elsewhere = await serviceError { try await chores.list(in: family.next, as: mia) }
            #expect(elsewhere?.code == .notFound)
        }
    }

    @Test("a recurring chore counts today's occurrence, in the community's zone; another day's is named explicitly")
    func recurringOccurrences() async throws {
        try await withServices { services, _ in
            let family = try await Cast.Household.make(services)
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
            let family = try await Cast.Household.make(services)
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
            let family = try await Cast.Household.make(services)
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
            let family = try await Cast.Household.make(services)
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
            let family = try await Cast.Household.make(services)
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
}
