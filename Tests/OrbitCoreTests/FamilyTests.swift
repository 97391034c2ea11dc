import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Family members: one's own, and their shares owed by their parent")
struct FamilyTests: MoneyScenarios {
    @Test("family members: one's own to add, rename and remove; visible to people one shares a community with")
    func family() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let kid = try await services.family.add(name: "Tommy", as: cast.member)
            _ = try await services.family.rename(kid.id, to: "Tom", as: cast.member)
            #expect(try await services.family.list(of: cast.member, as: cast.admin).map(\.name) == ["Tom"])
            #expect(try await services.family.list(of: cast.member, as: cast.outsider).isEmpty)
            let notYours = await serviceError { try await services.family.remove(kid.id, as: cast.admin) }
            #expect(notYours?.code == .notFound)
            try await services.family.remove(kid.id, as: cast.member)
            #expect(try await services.family.list(as: cast.member).isEmpty)
        }
    }

    @Test("a child's share is owed by their parent and shown as theirs; a family member of no member is refused")
    func familyShares() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let tim = try await services.family.add(name: "Tim", as: cast.member)
            let stray = try await services.family.add(name: "Stray", as: cast.outsider)
            let tickets = try await services.expenses.addExpense(
                in: cast.community, description: "Zoo tickets", total: try dollars("30.00"), paidBy: cast.admin,
                split: .equal([.user(cast.admin), .user(cast.member), .familyMember(tim.id)]), as: cast.admin)
            let forTim = try #require(tickets.splits.first { $0.familyMemberID == tim.id })
            #expect(forTim.userID == cast.member && forTim.familyMemberName == "Tim" && forTim.amount == 1000)
            #expect(try await balance(services, cast, cast.member) == -2000)
            #expect(try await services.expenses.expense(tickets.id, as: cast.admin).splits == tickets.splits)

            await #expect(throws: ServiceError.self) {
                try await services.expenses.addExpense(
                    in: cast.community, description: "X", total: try dollars("10.00"), paidBy: cast.admin,
                    split: .equal([.user(cast.admin), .familyMember(stray.id)]), as: cast.admin)
            }
            // Shares by weight count a child like anyone; an edit can start from what was entered.
            let edited = try await services.expenses.updateExpense(
                tickets.id, split: .shares([.user(cast.member): 2, .familyMember(tim.id): 1]), as: cast.admin)
            #expect(edited.splits.map(\.amount).sorted() == [1000, 2000])
            #expect(try await balance(services, cast, cast.member) == -3000)
            // Removing Tim leaves his share with his parent.
            try await services.family.remove(tim.id, as: cast.member)
            #expect(try await services.expenses.expense(tickets.id, as: cast.admin).splits.allSatisfy { $0.familyMemberID == nil })
            #expect(try await balance(services, cast, cast.member) == -3000)
        }
    }
}
