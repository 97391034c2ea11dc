import Foundation
import OrbitCore
import OrbitTestSupport
import Testing

/// Itemised expenses (issue 24, item 3): items each with their own split, tax and tip shared in
/// proportion to what each person's items come to, the items kept for edits.
@Suite("Itemised expenses: items with their own splits, tax and tip in proportion")
struct ItemisedExpenseTests {
    static let ann = Holder.user(UserID(UUID(uuidString: "00000000-0000-4000-8000-000000000001") ?? UUID()))
    static let bob = Holder.user(UserID(UUID(uuidString: "00000000-0000-4000-8000-000000000002") ?? UUID()))

    /// Pizza 24.00 equally, wine 18.00 as 10.00 and 8.00; tax 3.40 and tip 6.00 on 42.00.
    static let dinner = Itemised(
        items: [
            Itemised.Item(description: "Pizza", amount: 2400, split: .equal([ann, bob])),
            Itemised.Item(description: "Wine", amount: 1800, split: .exact([ann: 1000, bob: 800])),
        ],
        tax: 340, tip: 600)

    @Test("items 22.00 and 20.00 of 42.00 take 9.40 of tax and tip as 4.92 (+0) and 4.47 (+1, the larger remainder)")
    func proportional() throws {
        let splits = try SplitCalculator.splits(of: 5140, .items(Self.dinner))
        #expect(splits.map(\.participant) == [Self.ann, Self.bob])
        // 940 × 2200 / 4200 = 492.38…, 940 × 2000 / 4200 = 447.61…: the unit left goes to Bob.
        #expect(splits.map(\.amount) == [2692, 2448])
        // Someone with no items pays no tax: Cal's item is 0.00 of an exact split.
        let cal = Holder.user(UserID(UUID(uuidString: "00000000-0000-4000-8000-000000000003") ?? UUID()))
        let none = Itemised(items: [Itemised.Item(description: "Cake", amount: 1000, split: .exact([Self.ann: 1000, cal: 0]))], tax: 99)
        #expect(try SplitCalculator.splits(of: 1099, .items(none)).map(\.amount) == [1099, 0])
    }

    @Test("the total is items + tax + tip; an item's split is checked against the item, and named by its place")
    func refusals() {
        func refusal(_ total: Int64, _ itemised: Itemised) -> String? {
            do {
                _ = try SplitCalculator.splits(of: total, .items(itemised))
                return nil
            } catch let error as ServiceError {
                return error.field
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal(5000, Self.dinner) == "items")
        var badWine = Self.dinner
        badWine.items[1].split = .exact([Self.ann: 1000, Self.bob: 700])
        #expect(refusal(5140, badWine) == "items[1].parts")
        var nested = Self.dinner
        nested.items[0].split = .items(Itemised(items: [Itemised.Item(description: "Slice", amount: 2400, split: .equal([Self.ann]))]))
        #expect(refusal(5140, nested) == "items[0].split")
        #expect(refusal(1, Itemised(items: [])) == "items")
        var negative = Self.dinner
        negative.tip = -600
        #expect(refusal(4540, negative) == "tax")
    }

    @Test("stored as entered, children's items owed by their parent; a new total alone needs the items again; recurring itemised bills")
    func storedAndEdited() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let tim = try await services.family.add(name: "Tim", as: cast.member).id
            let entered = Itemised(
                items: [
                    Itemised.Item(description: "Burger", amount: 1500, split: .equal([.user(cast.admin)])),
                    Itemised.Item(description: "Kids' menu", amount: 800, split: .equal([.familyMember(tim)])),
                    Itemised.Item(
                        description: "Fries", amount: 600, split: .shares([.user(cast.admin): 1, .user(cast.member): 1, .familyMember(tim): 1])),
                ],
                tax: 0, tip: 290)
            let expense = try await services.expenses.addExpense(
                in: cast.community, description: "Diner", total: try dollars("31.90"), paidBy: cast.admin, split: .items(entered), as: cast.admin)
            #expect(expense.splitInput == .items(entered))
            #expect(try await services.expenses.expense(expense.id, as: cast.member).splitInput == .items(entered))
            // Admin 17.00, Tim 10.00 (owed by his parent, shown for him), member 2.00; tip 2.90 in proportion 17:10:2.
            let byHolder = Dictionary(uniqueKeysWithValues: expense.splits.map { ($0.participant, $0.amount) })
            #expect(byHolder == [.user(cast.admin): 1870, .familyMember(tim): 1100, .user(cast.member): 220])
            #expect(expense.splits.first { $0.familyMemberID == tim }?.userID == cast.member)

            let refused = await serviceError { try await services.expenses.updateExpense(expense.id, total: try dollars("40.00"), as: cast.admin) }
            #expect(refused?.code == .invalidInput && refused?.field == "split")
            var more = entered
            more.items.append(Itemised.Item(description: "Shake", amount: 810, split: .equal([.user(cast.member)])))
            let edited = try await services.expenses.updateExpense(
                expense.id, total: try dollars("40.00"), split: .items(more), as: cast.admin)
            #expect(edited.splitInput == .items(more) && edited.splits.map(\.amount).reduce(0, +) == 4000)
            // A new description alone keeps the items.
            #expect(try await services.expenses.updateExpense(expense.id, description: "Diner night", as: cast.admin).splitInput == .items(more))

            let bill = try await services.recurringCharges.createExpense(
                in: cast.community, description: "Internet and TV", amount: try dollars("60.00"), paidBy: cast.admin,
                split: .items(
                    Itemised(items: [
                        Itemised.Item(description: "Internet", amount: 4000, split: .equal([.user(cast.admin), .user(cast.member)])),
                        Itemised.Item(description: "TV", amount: 2000, split: .equal([.user(cast.member)])),
                    ])),
                rule: try .parse("FREQ=MONTHLY"), as: cast.admin)
            let occurrences = try await services.expenses.expenses(in: cast.community, as: cast.admin).items.filter {
                $0.recurringChargeID == bill.id
            }
            #expect(occurrences.count == 1)
            #expect(occurrences.first?.splits.map(\.amount).sorted() == [2000, 4000])
        }
    }
}
