import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Communities: creation, deletion and restore, settings, and the community's own clock")
struct CommunityTests {
    @Test("the creator is the first admin and member_count comes from the database")
    func creation() async throws {
        try await withServices { services, _ in
            let creator = try await services.users.create(email: "c@example.com", displayName: "Cleo").id
            let community = try await services.communities.create(name: "Family", description: "Us", as: creator)
            #expect(community.memberCount == 1 && community.createdBy == creator)
            let members = (try await services.members.list(of: community.id, as: creator)).items
            #expect(members.map(\.role) == [.admin] && members.map(\.userID) == [creator])
            let log = (try await services.communities.auditLog(community.id, as: creator)).items
            #expect(log.map(\.action) == ["community.created"])
        }
    }

    @Test("only the creator deletes a community, even among admins")
    func onlyCreatorDeletes() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            _ = try await services.members.setRole(.admin, of: cast.member, in: cast.community, as: cast.admin)
            let error = await serviceError { try await services.communities.delete(cast.community, as: cast.member) }
            #expect(error?.code == .forbidden)
            #expect(error?.rule == "only the community's creator can delete it")
        }
    }

    @Test(
        "my groups: each with my role, balances, pin and last activity; pinned first by position, then the most recent; a pin is mine alone and no activity"
    )
    func myGroups() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            let (me, friend) = (cast.member, cast.admin)
            var clubs = [cast.community]
            for name in ["Book club", "Flat"] {
                let club = try await services.communities.create(name: name, as: friend).id
                _ = try await services.members.add(me, to: club, as: friend)
                clubs.append(club)
            }
            // Activity, oldest first: an expense in the first, a post in the second, a post in the third.
            _ = try await services.expenses.addExpense(
                in: clubs[0], description: "Pizza", total: try dollars("20.00"), paidBy: friend, split: .equal([friend, me]), as: friend)
            _ = try await services.feed.createPost(in: clubs[1], PostDraft(content: "Next book?"), as: friend)
            _ = try await services.feed.createPost(in: clubs[2], PostDraft(content: "Rent is due"), as: friend)
            var mine = try await services.communities.mine(as: me)
            #expect(mine.map(\.community.id) == [clubs[2], clubs[1], clubs[0]])
            #expect(mine.allSatisfy { $0.my.role == .member && !$0.my.pinned && $0.my.position == nil })
            #expect(mine.last?.my.balances == [CurrencyBalance(currency: "USD", balance: -1000)] && mine.first?.my.balances == [])
            let lastActivity = mine.map(\.my.lastActivityAt)
            #expect(lastActivity == lastActivity.sorted(by: >))
            #expect(try await services.communities.mine(as: friend).allSatisfy { $0.my.role == .admin })

            // Pinned first, by position; then the rest by activity. Pinning is not activity.
            _ = try await services.members.updateMine(in: clubs[0], pinned: true, position: 2, as: me)
            _ = try await services.members.updateMine(in: clubs[1], pinned: true, position: 1, as: me)
            mine = try await services.communities.mine(as: me)
            #expect(mine.map(\.community.id) == [clubs[1], clubs[0], clubs[2]])
            #expect(mine.map(\.my.position) == [1, 2, nil] && mine.map(\.my.lastActivityAt) == [lastActivity[1], lastActivity[2], lastActivity[0]])
            // Only mine: the friend's list is as it was.
            #expect(try await services.communities.mine(as: friend).allSatisfy { !$0.my.pinned })
            // Unpinning clears the position; it goes back among the rest, by activity.
            let unpinned = try await services.members.updateMine(in: clubs[1], pinned: false, as: me)
            #expect(!unpinned.pinned && unpinned.position == nil)
            #expect(try await services.communities.mine(as: me).map(\.community.id) == [clubs[0], clubs[2], clubs[1]])
            #expect(await serviceError { try await services.members.updateMine(in: clubs[0], position: 10_000, as: me) }?.code == .invalidInput)
            // Unpinning with a position: the position goes all the same.
            let cleared = try await services.members.updateMine(in: clubs[0], pinned: false, position: 3, as: me)
            #expect(!cleared.pinned && cleared.position == nil)
            #expect(await serviceError { try await services.members.updateMine(in: clubs[0], pinned: true, as: cast.outsider) }?.code == .notFound)

            // An admin may update any member's row, but not their pin (sql/110_communities.sql).
            try await database.withConnection { connection in
                await #expect(throws: PostgresError.self) {
                    try await connection.withTransaction(
                        TransactionOptions(localSettings: ["role": "orbit_app", "app.current_user_id": friend.description])
                    ) { connection in
                        try await connection.query("UPDATE members SET pinned = true WHERE community_id = \(clubs[0]) AND user_id = \(me)")
                    }
                }
            }
        }
    }

    @Test("a deleted community disappears for its members; an operator restores it within 30 days, not after")
    func deleteAndRestore() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            try await services.communities.delete(cast.community, as: cast.admin)
            let hidden = await serviceError { try await services.communities.get(cast.community, as: cast.member) }
            #expect(hidden?.code == .notFound)
            #expect(try await services.communities.mine(as: cast.member).isEmpty)

            let restored = try await services.communities.restore(cast.community, as: cast.admin)
            #expect(restored.deletedAt == nil)
            let visible = try await services.communities.get(cast.community, as: cast.member)
            #expect(visible.id == cast.community)

            try await services.communities.delete(cast.community, as: cast.admin)
            try await database.withConnection { connection in
                try await connection.query("UPDATE communities SET deleted_at = now() - interval '31 days' WHERE id = \(cast.community)")
            }
            let tooLate = await serviceError { try await services.communities.restore(cast.community, as: cast.admin) }
            #expect(tooLate?.code == .conflict)
        }
    }

    @Test("an admin restores a deleted community within 30 days; a member cannot")
    func adminRestore() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            try await services.communities.delete(cast.community, as: cast.admin)
            let byMember = await serviceError { try await services.communities.restore(cast.community, as: cast.member) }
            #expect(byMember?.code == .forbidden)
            let byOutsider = await serviceError { try await services.communities.restore(cast.community, as: cast.outsider) }
            #expect(byOutsider?.code == .notFound)
            let notDeleted = await serviceError {
                _ = try await services.communities.restore(cast.community, as: cast.admin)
                return try await services.communities.restore(cast.community, as: cast.admin)
            }
            #expect(notDeleted?.code == .conflict)
            let restored = try await services.communities.get(cast.community, as: cast.admin)
            #expect(restored.deletedAt == nil)
            #expect(try await services.communities.get(cast.community, as: cast.member).id == cast.community)
        }
    }

    @Test(
        "settings are validated: types, ranges, real time zones, no unknown keys",
        arguments: [
            #"{"allowMemberPosts": "yes"}"#, #"{"defaultReminderHours": 169}"#, #"{"defaultReminderHours": 1.5}"#,
            #"{"timezone": "Mars/Olympus_Mons"}"#, #"{"colour": "red"}"#, #"[1, 2]"#, "not json",
        ])
    func invalidSettings(json: String) {
        #expect(throws: ServiceError.self) { try CommunitySettings.parse(json: json) }
    }

    @Test("valid settings parse and merge over the current ones")
    func validSettings() throws {
        let parsed = try CommunitySettings.parse(json: #"{"timezone": "Europe/Berlin", "defaultReminderHours": 48}"#)
        let merged = CommunitySettings(allowMemberEvents: false, timezone: "UTC").merging(parsed)
        #expect(merged == CommunitySettings(allowMemberEvents: false, defaultReminderHours: 48, timezone: "Europe/Berlin"))
    }

    // The community's own clock: "today" is the day in the community's `settings.timezone`, not
    // the UTC day, for what is overdue, when a dues reminder is due and an expense's default date.
    // Each case sits near midnight, where the two days differ.
    static func at(_ text: String) throws -> Date {
        try #require(ISO8601DateFormatter().date(from: text))
    }

    /// The cast's community in `zone`, and the services with the clock at `instant`.
    func setUp(_ services: OrbitServices, zone: String) async throws -> Cast {
        let cast = try await Cast.make(services)
        _ = try await services.communities.update(cast.community, settings: CommunitySettings(timezone: zone), as: cast.admin)
        return cast
    }

    func clock(_ services: OrbitServices, _ instant: Date) -> OrbitServices {
        var moved = services
        moved.now = { instant }
        return moved
    }

    @Test(
        "dues are overdue from the day after the due date in the community's zone",
        arguments: [
            // Los Angeles, due June 10: 18:00 on the 10th there is the 11th in UTC.
            ("America/Los_Angeles", "2030-06-11T01:00:00Z", false),
            ("America/Los_Angeles", "2030-06-11T07:30:00Z", true),
            // Tokyo: 01:00 on the 11th there is still the 10th in UTC.
            ("Asia/Tokyo", "2030-06-10T14:30:00Z", false),
            ("Asia/Tokyo", "2030-06-10T16:00:00Z", true),
        ])
    func overdue(zone: String, instant: String, overdue: Bool) async throws {
        try await withServices { services, _ in
            let cast = try await setUp(services, zone: zone)
            let dues = try await services.dues.create(
                in: cast.community, name: "Season", amount: try dollars("10.00"), dueDate: try day("2030-06-10"), as: cast.admin)
            let report = try await clock(services, try Self.at(instant)).dues.report(dues.id, as: cast.member)
            let line = try #require(report.first { $0.userID == cast.member })
            #expect(line.overdue == overdue)
        }
    }

    @Test(
        "an expense without a date is dated today in the community's zone",
        arguments: [
            ("Pacific/Auckland", "2026-11-24T12:00:00Z", "2026-11-25"),  // 01:00 on the 25th there
            ("America/New_York", "2026-11-25T03:00:00Z", "2026-11-24"),  // 22:00 on the 24th there
        ])
    func expenseDate(zone: String, instant: String, expected: String) async throws {
        try await withServices { services, _ in
            let cast = try await setUp(services, zone: zone)
            let expense = try await clock(services, try Self.at(instant)).expenses.addExpense(
                in: cast.community, description: "Pizza", total: try dollars("20.00"), paidBy: cast.admin,
                split: .equal([cast.admin, cast.member]), as: cast.admin)
            #expect(expense.transactionDate == (try day(expected)))
            let settlement = try await clock(services, try Self.at(instant)).settlements.recordSettlement(
                in: cast.community, from: cast.member, to: cast.admin, amount: try dollars("10.00"), as: cast.member)
            #expect(settlement.transactionDate == (try day(expected)))
        }
    }

    @Test(
        "dues reminders start three days before the due date and last through it, in the community's zone",
        arguments: [
            // Los Angeles, 20:00 on the due date there (the 11th in UTC): still due today.
            ("America/Los_Angeles", "2030-06-11T03:00:00Z", 1),
            // Tokyo, 01:00 on the 7th there (the 6th in UTC): three days before.
            ("Asia/Tokyo", "2030-06-06T16:00:00Z", 1),
            // Tokyo, 23:00 on the 6th there: four days before, too early.
            ("Asia/Tokyo", "2030-06-06T14:00:00Z", 0),
        ])
    func duesReminders(zone: String, instant: String, created: Int) async throws {
        try await withServices { services, _ in
            let cast = try await setUp(services, zone: zone)
            let dues = try await services.dues.create(
                in: cast.community, name: "Season", amount: try dollars("10.00"), dueDate: try day("2030-06-10"), as: cast.admin)
            _ = try await services.dues.recordPayment(to: dues.id, by: cast.admin, amount: try dollars("10.00"), as: cast.admin)
            #expect(try await clock(services, try Self.at(instant)).notifications.sendReminders() == created)
        }
    }
}
