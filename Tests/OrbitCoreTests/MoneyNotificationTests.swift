import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Who hears about money: an expense added, changed or deleted, a settlement recorded")
struct MoneyNotificationTests {
    /// `user`'s notifications of `type`, as (expense id, share, currency).
    static func told(_ user: UserID, _ type: NotificationType, _ services: OrbitServices) async throws -> [String] {
        try await services.notifications.list(limit: 200, as: user).items.filter { $0.type == type }.map { notification in
            let data = try JSONSerialization.jsonObject(with: Data(notification.data.utf8)) as? [String: Any] ?? [:]
            return "\(data["expense_id"] as? String ?? "?") \(data["share"] as? String ?? "?") \(data["currency"] as? String ?? "?")"
        }
    }

    @Test(
        "an expense tells everyone with a share but its author; an edit those whose share changed; a delete all of them; a settlement its other party"
    )
    func moneyNotifications() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let third = try await services.users.create(email: "zoe@example.com", displayName: "Zoe").id
            _ = try await services.members.add(third, to: cast.community, as: cast.admin)
            let guest = try await services.members.addGuest(named: "Gina", to: cast.community, as: cast.admin)

            let dinner = try await services.expenses.addExpense(
                in: cast.community, description: "Dinner", total: try dollars("90.00"),
                split: .equal([cast.admin, cast.member, third, guest.userID]), as: cast.admin)
            let id = dinner.id.description
            #expect(try await Self.told(cast.member, .expenseAdded, services) == ["\(id) 2250 USD"])
            #expect(try await Self.told(third, .expenseAdded, services) == ["\(id) 2250 USD"])
            #expect(try await Self.told(cast.admin, .expenseAdded, services).isEmpty, "the author is not told")
            #expect(try await Self.told(cast.outsider, .expenseAdded, services).isEmpty)
            let notification = try #require(try await services.notifications.list(as: cast.member).items.first { $0.type == .expenseAdded })
            #expect(
                notification.title == "Dinner" && notification.body == "Ada Admin added an expense you share in: your share is $22.50",
                "\(notification)")

            // Max moves his share onto Zoe: both hear of it, Ada (the author of the change) and the guest do not.
            _ = try await services.expenses.updateExpense(
                dinner.id, split: .exact([cast.admin: 2250, third: 4500, guest.userID: 2250]), as: cast.admin)
            #expect(try await Self.told(cast.member, .expenseEdited, services) == ["\(id) 0 USD"])
            #expect(try await Self.told(third, .expenseEdited, services) == ["\(id) 4500 USD"])
            // A new description alone changes nobody's share.
            _ = try await services.expenses.updateExpense(dinner.id, description: "Dinner at Luigi's", as: cast.admin)
            #expect(try await Self.told(third, .expenseEdited, services).count == 1)

            // A member who switched the type off in the community hears nothing of it.
            _ = try await services.members.updateMine(in: cast.community, notificationPrefs: [.expenseDeleted: false], as: third)
            try await services.expenses.deleteExpense(dinner.id, as: cast.admin)
            #expect(try await Self.told(third, .expenseDeleted, services).isEmpty)
            _ = try await services.expenses.restoreExpense(dinner.id, as: cast.admin)

            // A settlement Max records tells Ada, and not Max.
            let paid = try await services.settlements.recordSettlement(
                in: cast.community, from: cast.member, to: cast.admin, amount: try dollars("10.00"), as: cast.member)
            #expect(try await Self.told(cast.admin, .settlementRecorded, services) == ["\(paid.id) 1000 USD"])
            #expect(try await Self.told(cast.member, .settlementRecorded, services).isEmpty)
            #expect(try await Self.told(third, .settlementRecorded, services).isEmpty)
        }
    }

    @Test("a nudge: only who is owed asks who owes them, never a guest or oneself; once a day per pair, then allowed again")
    func nudges() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let guest = try await services.members.addGuest(named: "Gina", to: cast.community, as: cast.admin)
            _ = try await services.expenses.addExpense(
                in: cast.community, description: "Pizza", total: try dollars("30.00"), paidBy: cast.admin,
                split: .equal([cast.admin, cast.member, guest.userID]), as: cast.admin)

            let nudge = try await services.settlements.nudge(cast.member, in: cast.community, as: cast.admin)
            #expect(nudge.owed == [CurrencyBalance(currency: "USD", balance: 1000)] && nudge.toUserID == cast.member)
            let told = try await services.notifications.list(as: cast.member).items.filter { $0.type == .nudge }
            #expect(told.count == 1 && told.first?.body == "Ada Admin asks you to settle up: you owe $10.00", "\(told)")
            #expect(told.first?.data.contains("\"owed\"") == true)

            let owesNothing = await serviceError { try await services.settlements.nudge(cast.admin, in: cast.community, as: cast.member) }
            #expect(owesNothing?.code == .conflict && owesNothing?.field == "member", "\(String(describing: owesNothing))")
            let oneself = await serviceError { try await services.settlements.nudge(cast.admin, in: cast.community, as: cast.admin) }
            #expect(oneself?.code == .conflict)
            let aGuest = await serviceError { try await services.settlements.nudge(guest.userID, in: cast.community, as: cast.admin) }
            #expect(aGuest?.code == .conflict && aGuest?.message.contains("guest") == true, "\(String(describing: aGuest))")
            let stranger = await serviceError { try await services.settlements.nudge(cast.outsider, in: cast.community, as: cast.admin) }
            #expect(stranger?.code == .notFound)

            // Again within the day: too soon, with the seconds left; a day later, allowed.
            let again = await serviceError { try await services.settlements.nudge(cast.member, in: cast.community, as: cast.admin) }
            #expect(again?.code == .tooSoon && (again?.retryAfter ?? 0) > 86_000, "\(String(describing: again))")
            var tomorrow = services
            let instant = Date().addingTimeInterval(86_400 + 60)
            tomorrow.now = { instant }
            _ = try await tomorrow.settlements.nudge(cast.member, in: cast.community, as: cast.admin)
            #expect(try await services.notifications.list(as: cast.member).items.filter { $0.type == .nudge }.count == 2)
        }
    }

    @Test("a user's own switches hold in every community; a community's switch of a type overrides them there")
    func preferencesPerUser() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let second = try await services.communities.create(name: "Book club", as: cast.admin).id
            _ = try await services.members.add(cast.member, to: second, as: cast.admin)
            #expect(try await services.users.notificationPreferences(as: cast.member) == NotificationPreferences())
            let off = try await services.users.updateNotificationPreferences(expenses: false, as: cast.member)
            #expect(off == NotificationPreferences(expenses: false))
            // Switched on again for one community only, by type.
            _ = try await services.members.updateMine(in: second, notificationPrefs: [.expenseAdded: true], as: cast.member)
            for community in [cast.community, second] {
                _ = try await services.expenses.addExpense(
                    in: community, description: "Snacks", total: try dollars("10.00"), split: .equal([cast.admin, cast.member]), as: cast.admin)
            }
            let told = try await services.notifications.list(as: cast.member).items.filter { $0.type == .expenseAdded }
            #expect(told.map(\.communityID) == [second], "\(told)")
            // Settlements are another switch, still on.
            _ = try await services.settlements.recordSettlement(
                in: cast.community, from: cast.admin, to: cast.member, amount: try dollars("1.00"), as: cast.admin)
            #expect(try await services.notifications.list(as: cast.member).items.contains { $0.type == .settlementRecorded })
        }
    }
}
