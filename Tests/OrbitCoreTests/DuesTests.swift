import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Dues: payments, edits, dues per attendee, their history")
struct DuesTests: MoneyScenarios {
    @Test("dues: partial payments, overpayment refused (also when two are recorded at once), the report")
    func dues() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let dues = try await services.dues.create(
                in: cast.community, name: "Season", amount: try dollars("50.00"), dueDate: try day("2000-01-31"), as: cast.admin)
            #expect(dues.amount == 5000 && dues.currency == "USD")
            let byMember = await serviceError {
                try await services.dues.create(
                    in: cast.community, name: "X", amount: try dollars("1"), dueDate: try day("2030-01-01"), as: cast.member)
            }
            #expect(byMember?.code == .forbidden)
            _ = try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("20.00"), method: "cash", as: cast.admin)
            let over = await serviceError {
                try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("30.01"), as: cast.admin)
            }
            #expect(over?.code == .conflict)
            let notAdmin = await serviceError {
                try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("1.00"), as: cast.member)
            }
            #expect(notAdmin?.code == .forbidden)

            // Two payments of 20.00 against 30.00 outstanding, at the same moment: one is refused,
            // as a conflict (a pool timeout or any other failure would not count).
            let refusals = await withTaskGroup(of: ServiceError.Code?.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        await serviceError {
                            try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("20.00"), as: cast.admin)
                        }?.code
                    }
                }
                return await group.reduce(into: [ServiceError.Code?]()) { $0.append($1) }
            }
            #expect(refusals.filter { $0 == nil }.count == 1)
            #expect(refusals.filter { $0 == .conflict }.count == 1)

            let report = try await services.dues.report(dues.id, as: cast.member)
            let member = try #require(report.first { $0.userID == cast.member })
            #expect(member.amountPaid == 4000 && member.outstanding == 1000 && member.status == .partial && member.overdue)
            let admin = try #require(report.first { $0.userID == cast.admin })
            #expect(admin.status == .unpaid)
            // The former member left before these dues existed and owes nothing.
            #expect(!report.contains { $0.userID == cast.former })
        }
    }

    @Test("editing dues: admins; never below what a member already paid; payments listed newest first")
    func editing() async throws {
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

    @Test("dues per attendee: owed by who came only, per head (plus-ones and children to who answered); payments, edits and notices follow")
    func attendanceDues() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let (third, tim, game) = try await Self.awayGame(services, cast)
            let refused = await serviceError { try await services.dues.chargeAttendees(of: game.id, perHead: try dollars("15.00"), as: cast.member) }
            #expect(refused?.code == .forbidden)

            let dues = try await services.dues.chargeAttendees(of: game.id, perHead: try dollars("15.00"), as: cast.admin)
            #expect(dues.linkedEventID == game.id && dues.name == "Away game (attendance)" && dues.amount == 1500)
            let report = Dictionary(uniqueKeysWithValues: try await services.dues.report(dues.id, as: cast.member).map { ($0.userID, $0.amountDue) })
            #expect(report == [cast.admin: 3000, cast.member: 3000])

            // Who did not come owes nothing; a payment is at most amount × heads less what was paid.
            let notOwed = await serviceError {
                try await services.dues.recordPayment(to: dues.id, by: third, amount: try dollars("15.00"), as: cast.admin)
            }
            #expect(notOwed?.code == .conflict)
            _ = try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("25.00"), as: cast.admin)
            let over = await serviceError {
                try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("5.01"), as: cast.admin)
            }
            #expect(over?.code == .conflict)
            // 25.00 paid for 2 heads: the amount per head cannot go below 12.50.
            let tooLow = await serviceError { try await services.dues.update(dues.id, amount: try dollars("12.49"), as: cast.admin) }
            #expect(tooLow?.code == .conflict)
            _ = try await services.dues.update(dues.id, amount: try dollars("12.50"), as: cast.admin)
            let paid = try await services.dues.report(dues.id, as: cast.admin).first { $0.userID == cast.member }
            #expect(paid?.status == .paid && paid?.amountDue == 2500)

            // Only who owes them is told about them.
            let thirdsNotices = try await services.notifications.list(as: third).items
            #expect(!thirdsNotices.contains { $0.data.contains(dues.id.description) })
            #expect(try await services.notifications.list(as: cast.member).items.contains { $0.data.contains(dues.id.description) })
        }
    }

    @Test("dues in money's history: created, changed, paid (before and after what each member paid) and deactivated, for every member")
    func duesHistory() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let dues = try await services.dues.create(
                in: cast.community, name: "Season", amount: try dollars("40.00"), dueDate: try CivilDate.parse("2030-03-01", field: "d"),
                as: cast.admin)
            _ = try await services.dues.update(dues.id, amount: try dollars("45.00"), as: cast.admin)
            _ = try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("20.00"), as: cast.admin)
            _ = try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("5.00"), as: cast.admin)
            _ = try await services.dues.deactivate(dues.id, as: cast.admin)

            let history = try await services.expenses.history(in: cast.community, dues: dues.id, as: cast.member).items
            #expect(history.map(\.action) == [.edited, .paid, .paid, .edited, .created])
            #expect(history.allSatisfy { $0.entity == "dues" && $0.entityID == dues.id.uuid && $0.actorID == cast.admin })
            #expect(history[4].before == nil && history[4].after?.description == "Season" && history[4].after?.totalAmount == 4000)
            #expect(history[3].before?.totalAmount == 4000 && history[3].after?.totalAmount == 4500)
            #expect(history[2].before?.payers == [] && history[2].after?.payers == [Payer(userID: cast.member, amount: 2000)])
            #expect(history[1].before?.payers == [Payer(userID: cast.member, amount: 2000)])
            #expect(history[1].after?.payers == [Payer(userID: cast.member, amount: 2500)])
            #expect(history[0].before?.deleted == false && history[0].after?.deleted == true && history[0].after?.paidBy == nil)
            #expect(try await services.expenses.history(in: cast.community, as: cast.member).items.count == 5)
        }
    }
}
