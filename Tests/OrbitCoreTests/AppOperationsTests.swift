import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// The operations the app needs that only the CLI or the spec had: the subscription (operators),
/// an admin's restore, settling a split, editing dues and listing their payments, who is coming
/// and withdrawing an answer, one's own membership settings, a co-member's profile, poll
/// results in the post, and cursor pages for every list that can grow.
@Suite("Operations of the whole app")
struct AppOperationsTests {
    @Test("only an operator sets the subscription; a member's attempt is refused and audit-logged; orbit_app cannot make an operator")
    func subscription() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            let refused = await serviceError {
                try await services.communities.setSubscription(cast.community, status: .active, expiresAt: nil, as: cast.admin)
            }
            #expect(refused?.code == .forbidden)
            let outsider = await serviceError {
                try await services.communities.setSubscription(cast.community, status: .active, expiresAt: nil, as: cast.outsider)
            }
            #expect(outsider?.code == .notFound)
            let operatorID = try await services.users.create(email: "ops@example.com", displayName: "Ops").id
            _ = try await services.users.setOperator(operatorID, true, as: cast.admin)
            let changed = try await services.communities.setSubscription(cast.community, status: .pastDue, expiresAt: nil, as: operatorID)
            #expect(changed.subscriptionStatus == .pastDue)
            let actions = (try await services.communities.auditLog(cast.community, as: cast.admin)).items.map(\.action)
            #expect(actions.prefix(2) == ["subscription.changed", "subscription.changed.refused"])
            // A request can never make anyone an operator.
            let escalation = await #expect(throws: PostgresError.self) {
                try await database.withConnection { connection in
                    try await connection.asApp(cast.member.uuid) {
                        try await $0.query("UPDATE users SET is_operator = true WHERE id = \(cast.member)")
                    }
                }
            }
            #expect(escalation?.sqlState == "42501")
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

    @Test("settling a split: the debtor, the payer or an admin; it stays in the balances as settled")
    func settleSplit() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let expense = try await services.expenses.addExpense(
                in: cast.community, description: "Pizza", total: try dollars("20.00"), paidBy: cast.admin, split: .equal([cast.admin, cast.member]),
                as: cast.admin)
            let split = try #require(expense.splits.first { $0.userID == cast.member })
            let outsider = await serviceError { try await services.settlements.settleSplit(split.id, via: "cash", as: cast.outsider) }
            #expect(outsider?.code == .notFound)
            let settled = try await services.settlements.settleSplit(split.id, via: "cash", as: cast.member)
            #expect(settled.splits.first { $0.id == split.id }?.isSettled == true)
            #expect(settled.splits.first { $0.id == split.id }?.settledVia == "cash")
        }
    }

    @Test("editing dues: admins; never below what a member already paid; payments listed newest first")
    func dues() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let dues = try await services.dues.create(
                in: cast.community, name: "Season", amount: try dollars("50.00"), dueDate: try day("2030-01-31"), as: cast.admin)
            for amount in ["10.00", "15.00"] {
                _ = try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars(amount), as: cast.admin)
            }
            let byMember = await serviceError { try await services.dues.update(dues.id, name: "Mine", as: cast.member) }
            #expect(byMember?.code == .forbidden)
            let tooLow = await serviceError { try await services.dues.update(dues.id, amount: try dollars("20.00"), as: cast.admin) }
            #expect(tooLow?.code == .conflict)
            let updated = try await services.dues.update(
                dues.id, name: "Season 2030", amount: try dollars("40.00"), dueDate: try day("2030-02-28"), as: cast.admin)
            let newDueDate = try day("2030-02-28")
            #expect(updated.name == "Season 2030" && updated.amount == 4000 && updated.dueDate == newDueDate)
            let first = try await services.dues.payments(of: dues.id, limit: 1, as: cast.member)
            let second = try await services.dues.payments(of: dues.id, limit: 1, cursor: first.nextCursor, as: cast.member)
            #expect((first.items + second.items).map(\.amountPaid) == [1500, 1000])
            #expect(second.nextCursor == nil)
        }
    }

    @Test("who is coming lists answers with names and family members; an answer can be withdrawn")
    func rsvps() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let event = try await services.events.create(
                in: cast.community, EventDraft(title: "Game", startsAt: Date().addingTimeInterval(86_400)), as: cast.admin)
            let kid = try await services.family.add(name: "Tim", as: cast.member)
            _ = try await services.events.rsvp(event.id, status: .yes, plusOnes: 1, note: "Bringing snacks", as: cast.member)
            _ = try await services.events.rsvp(event.id, status: .yes, familyMember: kid.id, as: cast.member)
            _ = try await services.events.rsvp(event.id, status: .no, as: cast.admin)
            let answers = try await services.events.rsvps(event.id, as: cast.admin).items
            #expect(answers.count == 3)
            let tim = try #require(answers.first { $0.rsvp.familyMemberID == kid.id })
            #expect(tim.familyMemberName == "Tim" && tim.displayName == "Max Member")
            #expect(answers.contains { $0.rsvp.plusOnes == 1 && $0.rsvp.note == "Bringing snacks" })
            try await services.events.withdrawRSVP(event.id, familyMember: kid.id, as: cast.member)
            #expect(try await services.events.rsvps(event.id, as: cast.admin).items.count == 2)
            let again = await serviceError { try await services.events.withdrawRSVP(event.id, familyMember: kid.id, as: cast.member) }
            #expect(again?.code == .notFound)
        }
    }

    @Test("one's own membership: a nickname and notification types turned off, which then are not sent")
    func membershipSettings() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let mine = try await services.members.updateMine(
                in: cast.community, nickname: .some("Maxi"), notificationPrefs: [.newPost: false], as: cast.member)
            #expect(mine.member.nickname == "Maxi" && mine.notificationPrefs == ["new_post": false])
            _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Hello"), as: cast.admin)
            #expect((try await services.notifications.list(as: cast.member)).items.isEmpty)
            let cleared = try await services.members.updateMine(in: cast.community, nickname: .some(nil), as: cast.member)
            #expect(cleared.member.nickname == nil && cleared.notificationPrefs == ["new_post": false])
        }
    }

    @Test("a co-member's public profile shows name and avatar, never the email; strangers see nothing")
    func profile() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let profile = try await services.users.profile(cast.member, as: cast.admin)
            #expect(profile.displayName == "Max Member")
            let json = String(decoding: try JSONEncoder().encode(profile), as: UTF8.self)
            #expect(!json.contains("@example.com"))
            let stranger = await serviceError { try await services.users.profile(cast.member, as: cast.outsider) }
            #expect(stranger?.code == .notFound)
        }
    }

    @Test("a poll's post carries its results, per option")
    func pollResults() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let post = try await services.feed.createPost(
                in: cast.community, PostDraft(type: .poll, poll: Poll(question: "When?", options: ["Sat", "Sun", "Mon"])), as: cast.admin)
            #expect(post.pollResults == [0, 0, 0])
            _ = try await services.feed.vote(on: post.id, option: 2, as: cast.member)
            _ = try await services.feed.vote(on: post.id, option: 2, as: cast.admin)
            #expect(try await services.feed.post(post.id, as: cast.member).pollResults == [0, 0, 2])
            let text = try await services.feed.createPost(in: cast.community, PostDraft(content: "Hi"), as: cast.admin)
            #expect(text.pollResults == nil)
        }
    }

    @Test(
        "every list that can grow pages by cursor: no row twice, none skipped, a cursor of another list refused",
        arguments: ["expenses", "media-free lists"])
    func cursorPages(kind: String) async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            for index in 0..<7 {
                _ = try await services.expenses.addExpense(
                    in: cast.community, description: "E\(index)", total: try dollars("1.00"), paidBy: cast.admin, split: .equal([cast.admin]),
                    category: index % 2 == 0 ? .food : .travel, as: cast.admin)
                _ = try await services.invites.create(to: cast.community, as: cast.admin)
                _ = try await services.dues.create(
                    in: cast.community, name: "D\(index)", amount: try dollars("1.00"), dueDate: try day("2030-01-0\(index + 1)"), as: cast.admin)
            }
            func walk<Item>(_ page: (String?) async throws -> Page<Item>) async throws -> [Item] {
                var items: [Item] = []
                var cursor: String?
                repeat {
                    let next = try await page(cursor)
                    items += next.items
                    cursor = next.nextCursor
                } while cursor != nil
                return items
            }
            if kind == "expenses" {
                let all = try await walk { try await services.expenses.expenses(in: cast.community, limit: 2, cursor: $0, as: cast.member) }
                #expect(all.count == 7 && Set(all.map(\.id)).count == 7)
                let food = try await walk {
                    try await services.expenses.expenses(
                        in: cast.community, filter: ExpenseFilter(category: .food), limit: 2, cursor: $0, as: cast.member)
                }
                #expect(food.count == 4 && food.allSatisfy { $0.category == .food })
                let none = try await services.expenses.expenses(
                    in: cast.community, filter: ExpenseFilter(member: cast.member), as: cast.member)
                #expect(none.items.isEmpty)
                let wrongList = await serviceError {
                    let invites = try await services.invites.list(of: cast.community, limit: 1, as: cast.admin)
                    return try await services.expenses.expenses(in: cast.community, cursor: invites.nextCursor, as: cast.member)
                }
                #expect(wrongList?.field == "cursor")
            } else {
                let invites = try await walk { try await services.invites.list(of: cast.community, limit: 3, cursor: $0, as: cast.admin) }
                #expect(invites.count == 7 && Set(invites.map(\.id)).count == 7)
                let dues = try await walk { try await services.dues.list(in: cast.community, limit: 3, cursor: $0, as: cast.member) }
                #expect(dues.map(\.name) == (0..<7).reversed().map { "D\($0)" })
                let members = try await walk {
                    try await services.members.list(of: cast.community, includeFormer: true, limit: 1, cursor: $0, as: cast.member)
                }
                #expect(members.map(\.userID) == [cast.admin, cast.member, cast.former])
                #expect(members.last?.leftAt != nil && members.last?.displayName == nil)
                let log = try await walk { try await services.communities.auditLog(cast.community, limit: 4, cursor: $0, as: cast.admin) }
                #expect(Set(log.map(\.id)).count == log.count && log.count > 14)
            }
        }
    }
}
