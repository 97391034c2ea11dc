import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Archived communities: read-only, their money kept, listed on request")
struct ArchiveTests {
    @Test(
        "an admin archives a community: every write is refused, reads and balances stay, my groups lists it only on request; unarchiving restores writes"
    )
    func archive() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let expense = try await services.expenses.addExpense(
                in: cast.community, description: "Balls", total: try dollars("40.00"), split: .equal([cast.admin, cast.member]), as: cast.admin)
            let post = try await services.feed.createPost(in: cast.community, PostDraft(content: "Season's over"), as: cast.member)
            let charge = try await services.recurringCharges.createDues(
                in: cast.community, name: "Monthly dues", amount: try dollars("25.00"), rule: try .parse("FREQ=MONTHLY;BYMONTHDAY=1"),
                startsOn: CivilDate(containing: Date().addingTimeInterval(40 * 86_400), in: .gmt), as: cast.admin)
            let before = try await services.settlements.balances(in: cast.community, as: cast.member)

            let notAdmin = await serviceError { try await services.communities.archive(cast.community, as: cast.member) }
            #expect(notAdmin?.code == .forbidden)
            let archived = try await services.communities.archive(cast.community, as: cast.admin)
            #expect(archived.archivedAt != nil)
            // Archiving again changes nothing.
            #expect(try await services.communities.archive(cast.community, as: cast.admin).archivedAt == archived.archivedAt)

            // Every write is refused, whoever writes it; reads stay as they were.
            let refusals: [(String, () async throws -> Void)] = [
                (
                    "add an expense",
                    {
                        _ = try await services.expenses.addExpense(
                            in: cast.community, description: "Late", total: try dollars("5.00"), split: .equal([cast.member]), as: cast.member)
                    }
                ),
                ("edit an expense", { _ = try await services.expenses.updateExpense(expense.id, description: "Edited", as: cast.admin) }),
                ("delete an expense", { try await services.expenses.deleteExpense(expense.id, as: cast.admin) }),
                (
                    "settle up",
                    {
                        _ = try await services.settlements.recordSettlement(
                            in: cast.community, from: cast.member, to: cast.admin, amount: try dollars("20.00"), as: cast.member)
                    }
                ),
                ("post", { _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Hello?"), as: cast.member) }),
                ("comment", { _ = try await services.feed.addComment(to: post.id, content: "Anyone?", as: cast.admin) }),
                ("add a category", { _ = try await services.expenses.addCategory(named: "Camp", emoji: "⛺", to: cast.community, as: cast.member) }),
                ("add a guest", { _ = try await services.members.addGuest(named: "Gina", to: cast.community, as: cast.member) }),
                ("add a member", { _ = try await services.members.add(cast.outsider, to: cast.community, as: cast.admin) }),
                ("rename it", { _ = try await services.communities.update(cast.community, name: "Renamed", as: cast.admin) }),
            ]
            for (what, write) in refusals {
                let error = await serviceError(write)
                #expect(error?.code == .conflict && error?.message.contains("archived") == true, "\(what): \(String(describing: error))")
            }
            #expect(try await services.settlements.balances(in: cast.community, as: cast.member) == before)
            #expect(try await services.expenses.expense(expense.id, as: cast.member).description == "Balls")
            #expect(try await services.feed.page(of: cast.community, as: cast.member).items.map(\.id) == [post.id])
            // The recurring charges' job leaves it alone: its days come, nothing is created or failed.
            var later = services
            let instant = Date().addingTimeInterval(70 * 86_400)
            later.now = { instant }
            #expect(try await later.recurringCharges.createDue() == RecurringChargeService.Report())
            #expect(try await services.recurringCharges.get(charge.id, as: cast.admin).status == .active)

            // "My groups" leaves it out unless asked.
            #expect(try await services.communities.mine(as: cast.member).isEmpty)
            let all = try await services.communities.mine(archived: true, as: cast.member)
            #expect(all.map(\.community.id) == [cast.community] && all.first?.community.archivedAt != nil)

            let unarchived = try await services.communities.unarchive(cast.community, as: cast.admin)
            #expect(unarchived.archivedAt == nil)
            #expect(try await services.communities.mine(as: cast.member).map(\.community.id) == [cast.community])
            _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Back for the spring"), as: cast.member)
        }
    }
}
