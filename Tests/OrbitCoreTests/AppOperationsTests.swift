import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Paging across the app: every list that can grow (expenses, invites, dues, members, the audit
/// log) pages by cursor.
@Suite("Operations of the whole app: cursor pages for every list that can grow")
struct AppOperationsTests {
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
