import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Notifications")
struct NotificationTests {
    private func types(_ services: OrbitServices, _ user: UserID) async throws -> [String] {
        (try await services.notifications.list(as: user)).items.map(\.type.rawValue).sorted()
    }

    @Test("created with their cause, once, for members only, never for the author, following preferences")
    func causes() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            // The member switches new-post notifications off.
            try await database.withConnection { connection in
                try await connection.query(
                    "UPDATE members SET notification_prefs = '{\"new_post\": false}' WHERE community_id = \(cast.community) AND user_id = \(cast.member)"
                )
            }
            _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Hello @Max Member"), as: cast.admin)
            #expect(try await types(services, cast.member) == ["mention"])
            #expect(try await types(services, cast.admin) == [])
            _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "From a member"), as: cast.member)
            #expect(try await types(services, cast.admin) == ["new_post"])
            _ = try await services.events.create(
                in: cast.community, EventDraft(title: "Game", startsAt: Date().addingTimeInterval(86_400 * 10)), as: cast.admin)
            _ = try await services.dues.create(
                in: cast.community, name: "Season", amount: try dollars("10.00"), dueDate: try day("2099-01-01"), as: cast.admin)
            #expect(try await types(services, cast.member) == ["mention", "payment_request", "rsvp_request"])
            // Outsiders and former members never hear about the community.
            #expect(try await types(services, cast.outsider).isEmpty)
            #expect(try await types(services, cast.former).isEmpty)
            // A cause that fails leaves no notification.
            let failed = await serviceError {
                try await services.events.create(in: cast.community, EventDraft(title: "x", startsAt: Date(), locationLat: 99), as: cast.admin)
            }
            #expect(failed != nil)
            #expect(try await services.notifications.unreadCount(as: cast.member) == 3)
        }
    }

    @Test("read one, read all, unread count, newest first with a cursor")
    func reading() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            for index in 0..<5 {
                _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Post \(index)"), as: cast.admin)
            }
            let all = (try await services.notifications.list(as: cast.member)).items
            #expect(all.count == 5 && zip(all, all.dropFirst()).allSatisfy { $0.createdAt >= $1.createdAt })
            // Pages of two: the second starts after the second notification.
            let first = try await services.notifications.list(limit: 2, as: cast.member)
            let page = (try await services.notifications.list(limit: 2, cursor: first.nextCursor, as: cast.member)).items
            #expect(page.map(\.id) == Array(all[2...3]).map(\.id))
            try await services.notifications.markRead(all[0].id, as: cast.member)
            #expect(try await services.notifications.unreadCount(as: cast.member) == 4)
            let notMine = await serviceError { try await services.notifications.markRead(all[0].id, as: cast.admin) }
            #expect(notMine?.code == .notFound)
            #expect(try await services.notifications.markRead(as: cast.member) == 4)
            #expect(try await services.notifications.unreadCount(as: cast.member) == 0)
        }
    }

    @Test("event reminders: within the reminder window, for occurrences of series, across DST, never twice, not for a 'no'")
    func reminders() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            _ = try await services.communities.update(
                cast.community, settings: CommunitySettings(defaultReminderHours: 24, timezone: "America/New_York"), as: cast.admin
            )
            // Weekly at 6 pm New York from March 3, 2026; DST starts March 8.
            let formatter = ISO8601DateFormatter()
            let series = try await services.events.create(
                in: cast.community,
                EventDraft(title: "Practice", startsAt: formatter.date(from: "2026-03-03T23:00:00Z")!, recurrenceRule: "FREQ=WEEKLY;BYDAY=TU"),
                as: cast.admin
            )
            var clock = services
            let nearly = formatter.date(from: "2026-03-09T23:30:00Z")!
            clock.now = { nearly }  // 22.5 h before March 10, 6 pm EDT (22:00Z)
            _ = try await services.events.rsvp(series.id, occurrence: formatter.date(from: "2026-03-10T22:00:00Z")!, status: .no, as: cast.admin)
            #expect(try await clock.notifications.sendReminders() == 1)  // the member; the admin said no
            #expect(try await clock.notifications.sendReminders() == 0)
            let reminder = try #require((try await services.notifications.list(as: cast.member)).items.first { $0.type == .eventReminder })
            #expect(reminder.body.contains("2026-03-10T22:00:00Z"))
            var earlier = services
            let tooEarly = formatter.date(from: "2026-03-08T23:30:00Z")!
            earlier.now = { tooEarly }  // more than 24 h before
            #expect(try await earlier.notifications.sendReminders() == 0)
        }
    }

    @Test("event reminders follow preferences: a member who switched them off gets none, for a one-off event or a series")
    func remindersFollowPreferences() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            _ = try await services.members.updateMine(in: cast.community, notificationPrefs: [.eventReminder: false], as: cast.member)
            let now = Date()
            _ = try await services.events.create(
                in: cast.community, EventDraft(title: "Match", startsAt: now.addingTimeInterval(3 * 3600)), as: cast.admin)
            _ = try await services.events.create(
                in: cast.community,
                EventDraft(title: "Practice", startsAt: now.addingTimeInterval(5 * 3600 - 7 * 86_400), recurrenceRule: "FREQ=WEEKLY"),
                as: cast.admin)
            #expect(try await services.notifications.sendReminders() == 2)  // the admin's two; the member's none
            #expect(try await types(services, cast.member).filter { $0 == "event_reminder" }.isEmpty)
            #expect(try await types(services, cast.admin).filter { $0 == "event_reminder" }.count == 2)
        }
    }

    @Test("dues reminders: three days before the due date, only for members who still owe, once")
    func duesReminders() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let dues = try await services.dues.create(
                in: cast.community, name: "Season", amount: try dollars("10.00"), dueDate: try day("2030-06-10"), as: cast.admin)
            _ = try await services.dues.recordPayment(to: dues.id, by: cast.admin, amount: try dollars("10.00"), as: cast.admin)
            var early = services
            early.now = { ISO8601DateFormatter().date(from: "2030-06-01T12:00:00Z")! }
            #expect(try await early.notifications.sendReminders() == 0)
            var near = services
            near.now = { ISO8601DateFormatter().date(from: "2030-06-08T12:00:00Z")! }
            #expect(try await near.notifications.sendReminders() == 1)
            #expect(try await near.notifications.sendReminders() == 0)
            let reminders = (try await services.notifications.list(as: cast.member)).items.filter { $0.title.hasPrefix("Reminder") }
            #expect(reminders.count == 1)
        }
    }

    @Test("pending notifications are handed out once, and each goes to every device of its user once")
    func delivery() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            for digit in ["a", "b"] {
                _ = try await services.devices.register(
                    token: String(repeating: digit, count: 64), environment: .production, bundleID: "app.orbitcove.ios", locale: nil,
                    as: cast.admin)
            }
            _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Hi"), as: cast.member)
            let recorder = Recorder()
            let first = try await services.notifications.deliverPending(using: recorder)
            #expect((first.notifications, first.queued, first.sent) == (1, 2, 2))
            let second = try await services.notifications.deliverPending(using: recorder)
            #expect((second.notifications, second.queued, second.sent) == (0, 0, 0))
            #expect(await recorder.tokens.sorted() == [String(repeating: "a", count: 64), String(repeating: "b", count: 64)])
            #expect(await recorder.badges == [1, 1])
        }
    }
}

actor Recorder: PushSender {
    var tokens: [String] = []
    var badges: [Int] = []
    func send(_ push: Push) async -> PushOutcome {
        tokens.append(push.token)
        badges.append(push.badge)
        return .sent(id: nil)
    }
}
