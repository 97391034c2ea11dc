import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("A community's own categories: a name and an emoji, added, renamed, archived", .serialized)
struct CategoryTests {
    @Test("any member adds one; its creator or an admin renames and archives it; names in use are unique; strangers see none")
    func categories() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let camp = try await services.expenses.addCategory(named: "  Camp ", emoji: "🏕️", to: cast.community, as: cast.member)
            #expect(camp.name == "Camp" && camp.emoji == "🏕️" && camp.createdBy == cast.member && camp.archivedAt == nil)
            // A flag and a family are one emoji of several code points.
            let flag = try await services.expenses.addCategory(named: "Trip to Prague", emoji: "🇨🇿", to: cast.community, as: cast.admin)
            _ = try await services.expenses.addCategory(named: "Kids", emoji: "👨‍👩‍👧‍👦", to: cast.community, as: cast.admin)
            #expect(
                try await services.expenses.categories(of: cast.community, as: cast.member).items.map(\.name) == ["Camp", "Trip to Prague", "Kids"])

            // A name in use (case aside) is taken; bad names and emoji name their field.
            let taken = await serviceError { try await services.expenses.addCategory(named: "CAMP", emoji: "⛺", to: cast.community, as: cast.admin) }
            #expect(taken?.code == .conflict && taken?.field == "name", "\(String(describing: taken))")
            let blank = await serviceError { try await services.expenses.addCategory(named: " ", emoji: "⛺", to: cast.community, as: cast.admin) }
            #expect(blank?.code == .invalidInput && blank?.field == "name")
            let long = await serviceError {
                try await services.expenses.addCategory(named: "Gear", emoji: String(repeating: "⛺", count: 17), to: cast.community, as: cast.admin)
            }
            #expect(long?.code == .invalidInput && long?.field == "emoji", "\(String(describing: long))")

            // Only its creator or an admin changes it; an outsider does not even see it.
            let notYours = await serviceError { try await services.expenses.updateCategory(flag.id, name: "Prague", as: cast.member) }
            #expect(notYours?.code == .forbidden, "\(String(describing: notYours))")
            let hidden = await serviceError { try await services.expenses.updateCategory(camp.id, name: "Mine", as: cast.outsider) }
            #expect(hidden?.code == .notFound)
            let strangers = await serviceError { try await services.expenses.categories(of: cast.community, as: cast.outsider) }
            #expect(strangers?.code == .notFound)
            let renamed = try await services.expenses.updateCategory(camp.id, name: "Summer camp", emoji: "⛺", as: cast.member)
            #expect(renamed.name == "Summer camp" && renamed.emoji == "⛺")
            _ = try await services.expenses.updateCategory(flag.id, name: "Prague", as: cast.admin)

            // Expenses take one; the built-in category is then `other`. A filter finds them.
            let tent = try await services.expenses.addExpense(
                in: cast.community, description: "Tent", total: try dollars("80.00"), split: .equal([cast.admin, cast.member]),
                category: .equipment, customCategory: camp.id, as: cast.member)
            #expect(tent.categoryID == camp.id && tent.category == .other)
            let bus = try await services.expenses.addExpense(
                in: cast.community, description: "Bus", total: try dollars("20.00"), split: .equal([cast.admin, cast.member]),
                category: .transport, as: cast.member)
            let inCamp = try await services.expenses.expenses(in: cast.community, filter: ExpenseFilter(categoryID: camp.id), as: cast.admin)
            #expect(inCamp.items.map(\.id) == [tent.id])
            // An edit moves an expense to a community's category, and back to a built-in one.
            let moved = try await services.expenses.updateExpense(bus.id, customCategory: .some(flag.id), as: cast.member)
            #expect(moved.categoryID == flag.id && moved.category == .other)
            let back = try await services.expenses.updateExpense(bus.id, category: .travel, as: cast.member)
            #expect(back.categoryID == nil && back.category == .travel)
            let history = try await services.expenses.history(in: cast.community, transaction: bus.id, as: cast.admin)
            #expect(history.items.contains { $0.after?.categoryID == flag.id }, "\(history.items.map(\.after))")

            // Another community's category is not found.
            let other = try await services.communities.create(name: "Elsewhere", as: cast.admin).id
            let theirs = try await services.expenses.addCategory(named: "Theirs", emoji: "🎲", to: other, as: cast.admin)
            let foreign = await serviceError {
                try await services.expenses.addExpense(
                    in: cast.community, description: "Dice", total: try dollars("5.00"), split: .equal([cast.admin]), customCategory: theirs.id,
                    as: cast.admin)
            }
            #expect(foreign?.code == .notFound, "\(String(describing: foreign))")

            // Archived: the tent keeps it, no new expense or edit takes it, and its name is free.
            let archived = try await services.expenses.updateCategory(camp.id, archived: true, as: cast.admin)
            #expect(archived.archivedAt != nil)
            #expect(try await services.expenses.categories(of: cast.community, as: cast.member).items.map(\.name) == ["Prague", "Kids"])
            #expect(try await services.expenses.categories(of: cast.community, archived: true, as: cast.member).items.count == 3)
            #expect(try await services.expenses.expense(tent.id, as: cast.member).categoryID == camp.id)
            let refused = await serviceError {
                try await services.expenses.addExpense(
                    in: cast.community, description: "Stove", total: try dollars("30.00"), split: .equal([cast.member]), customCategory: camp.id,
                    as: cast.member)
            }
            #expect(refused?.code == .conflict && refused?.field == "category_id", "\(String(describing: refused))")
            let edit = await serviceError { try await services.expenses.updateExpense(bus.id, customCategory: .some(camp.id), as: cast.member) }
            #expect(edit?.code == .conflict && edit?.field == "category_id")
            // An edit of something else keeps the archived category.
            #expect(try await services.expenses.updateExpense(tent.id, description: "Big tent", as: cast.member).categoryID == camp.id)
            let again = try await services.expenses.addCategory(named: "Summer Camp", emoji: "🔥", to: cast.community, as: cast.member)
            // Unarchiving takes the name back only if it is free.
            let clash = await serviceError { try await services.expenses.updateCategory(camp.id, archived: false, as: cast.member) }
            #expect(clash?.code == .conflict && clash?.field == "name")
            _ = try await services.expenses.updateCategory(again.id, archived: true, as: cast.member)
            #expect(try await services.expenses.updateCategory(camp.id, archived: false, as: cast.member).archivedAt == nil)

            // The change feed carries them; the export names the community's category.
            let feed = try await services.sync.changes(of: cast.community, as: cast.member)
            #expect(feed.changes.filter { $0.entity == .expenseCategory }.count == 4, "\(feed.changes.map(\.entity))")
            let export = try await services.exports.export(in: cast.community, as: cast.member)
            #expect(export.rows.contains { $0.description == "Big tent" && $0.category == "Summer camp" }, "\(export.rows.map(\.category))")
        }
    }
}
