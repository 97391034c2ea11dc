import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// The split as entered is kept (issue 24, item 3): an edit starts from it, and a new total
/// alone is divided again by the same method and inputs.
@Suite("Splits as entered, kept for edits")
struct SplitInputTests {
    @Test("shares 2:1 with a child: kept; a new total alone is divided 2:1 again; exact amounts need the split again")
    func keptForEdits() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let tim = try await services.family.add(name: "Tim", as: cast.member).id
            let entered: SplitMethod = .shares([.user(cast.admin): 2, .familyMember(tim): 1])
            let expense = try await services.expenses.addExpense(
                in: cast.community, description: "Kit", total: try dollars("30.00"), paidBy: cast.admin, split: entered, as: cast.admin)
            #expect(expense.splitInput == entered)
            #expect(try await services.expenses.expense(expense.id, as: cast.member).splitInput == entered)

            let edited = try await services.expenses.updateExpense(expense.id, total: try dollars("60.00"), as: cast.admin)
            #expect(edited.splitInput == entered)
            #expect(edited.splits.map(\.amount).sorted() == [2000, 4000])

            let exact: SplitMethod = .exact([.user(cast.admin): 1000, .user(cast.member): 5000])
            let resplit = try await services.expenses.updateExpense(expense.id, split: exact, as: cast.admin)
            #expect(resplit.splitInput == exact)
            let refused = await serviceError { try await services.expenses.updateExpense(expense.id, total: try dollars("40.00"), as: cast.admin) }
            #expect(refused?.field == "split")
            // An attendance fee keeps its heads; a settlement keeps none.
            let settlement = try await services.settlements.recordSettlement(
                in: cast.community, from: cast.member, to: cast.admin, amount: try dollars("5.00"), as: cast.member)
            #expect(settlement.splitInput == nil)
        }
    }
}
