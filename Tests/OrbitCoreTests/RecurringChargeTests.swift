import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Recurring expenses and recurring dues (issue 24, item 4): each day the rule gives, in the
/// community's zone, creates one expense or one set of dues, exactly once with several servers
/// and after downtime; pause, skip one, resume, end.
@Suite("Recurring expenses and dues")
struct RecurringChargeTests {
    static func at(_ text: String) throws -> Date {
        try #require(ISO8601DateFormatter().date(from: text))
    }

    func clock(_ services: OrbitServices, _ text: String) throws -> OrbitServices {
        var moved = services
        let instant = try Self.at(text)
        moved.now = { instant }
        return moved
    }

    func dues(of charge: RecurringChargeID, _ services: OrbitServices, _ cast: Cast) async throws -> [CivilDate] {
        try await services.dues.list(in: cast.community, limit: 200, as: cast.member).items
            .filter { $0.recurringChargeID == charge }.map(\.dueDate).sorted()
    }

    func expenses(of charge: RecurringChargeID, _ services: OrbitServices, _ cast: Cast) async throws -> [Expense] {
        try await services.expenses.expenses(in: cast.community, limit: 200, as: cast.member).items
            .filter { $0.recurringChargeID == charge }.sorted { $0.transactionDate < $1.transactionDate }
    }

    @Test("monthly dues: nothing before the first day; after downtime one run creates each missed month once, dated its own day")
    func catchUp() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let charge = try await clock(services, "2030-01-15T12:00:00Z").recurringCharges.createDues(
                in: cast.community, name: "Monthly dues", amount: try dollars("25.00"), rule: try .parse("FREQ=MONTHLY;BYMONTHDAY=1"),
                startsOn: try day("2030-02-01"), as: cast.admin)
            #expect(charge.nextOn == (try day("2030-02-01")))
            #expect(charge.status == .active)
            #expect(try await clock(services, "2030-01-31T12:00:00Z").recurringCharges.createDue().created == 0)

            // The servers were down from January to May 10th: the first run catches up.
            let report = try await clock(services, "2030-05-10T12:00:00Z").recurringCharges.createDue()
            #expect(report == RecurringChargeService.Report(created: 4))
            let months = try ["2030-02-01", "2030-03-01", "2030-04-01", "2030-05-01"].map(day)
            #expect(try await dues(of: charge.id, services, cast) == months)
            #expect(try await clock(services, "2030-05-10T12:00:00Z").recurringCharges.createDue().created == 0)
            let now = try await services.recurringCharges.get(charge.id, as: cast.member)
            #expect(now.nextOn == (try day("2030-06-01")))
            // Every member owes each month's dues.
            let may = try #require(try await services.dues.list(in: cast.community, as: cast.member).items.first)
            #expect(try await services.dues.report(may.id, as: cast.admin).map(\.userID).sorted() == [cast.admin, cast.member].sorted())
        }
    }

    @Test("several servers running the job at the same moment create each occurrence once")
    func severalServers() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            var charges: [RecurringChargeID] = []
            for index in 0..<4 {
                charges.append(
                    try await clock(services, "2030-01-01T12:00:00Z").recurringCharges.createExpense(
                        in: cast.community, description: "Pitch \(index)", amount: try dollars("30.00"), paidBy: cast.admin,
                        split: .equal([cast.admin, cast.member]), rule: try .parse("FREQ=WEEKLY"), startsOn: try day("2030-01-02"), as: cast.member
                    ).id)
            }
            // Four servers, each with a pool of its own, catch up eight weeks at once.
            let servers = (0..<4).map { _ in database.makePool(maxConnections: 2) }
            let instant = try Self.at("2030-02-25T12:00:00Z")
            let reports = try await withThrowingTaskGroup(of: RecurringChargeService.Report.self) { group in
                for pool in servers {
                    group.addTask {
                        var server = OrbitServices(pool: pool)
                        server.now = { instant }
                        return try await server.recurringCharges.createDue()
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for pool in servers { await pool.close() }
            #expect(reports.map(\.failed).reduce(0, +) == 0)
            // Jan 2 … Feb 20: eight Wednesdays each.
            #expect(reports.map(\.created).reduce(0, +) == 4 * 8)
            for charge in charges {
                let days = try await expenses(of: charge, services, cast).map(\.transactionDate)
                #expect(days.count == 8)
                #expect(Set(days).count == 8)
            }
        }
    }

    @Test(
        "an occurrence is due on its day in the community's zone",
        arguments: [
            // Auckland (UTC+13 in March): 23:30 on March 1st there is not yet the 2nd.
            ("Pacific/Auckland", "2030-03-01T10:30:00Z", 0),
            // 00:30 on the 2nd there, still the 1st in UTC.
            ("Pacific/Auckland", "2030-03-01T11:30:00Z", 1),
            // Los Angeles: 23:00 on the 1st there is the 2nd in UTC: not yet.
            ("America/Los_Angeles", "2030-03-02T07:00:00Z", 0),
        ])
    func zone(zone: String, instant: String, created: Int) async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            _ = try await services.communities.update(cast.community, settings: CommunitySettings(timezone: zone), as: cast.admin)
            _ = try await clock(services, "2030-02-10T12:00:00Z").recurringCharges.createDues(
                in: cast.community, name: "Dues", amount: try dollars("10.00"), rule: try .parse("FREQ=MONTHLY;BYMONTHDAY=2"),
                startsOn: try day("2030-03-01"), as: cast.admin)
            #expect(try await clock(services, instant).recurringCharges.createDue().created == created)
        }
    }

    @Test("a recurring expense: each occurrence split as entered (a child's share to their parent), dated its day, in balances")
    func expense() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let tim = try await services.family.add(name: "Tim", as: cast.member).id
            let charge = try await clock(services, "2030-01-01T12:00:00Z").recurringCharges.createExpense(
                in: cast.community, description: "Pitch rental", amount: try dollars("90.00"), paidBy: cast.admin,
                split: .shares([.user(cast.admin): 1, .user(cast.member): 1, .familyMember(tim): 1]), category: .equipment,
                rule: try .parse("FREQ=MONTHLY;BYMONTHDAY=1"), as: cast.admin)
            // Created at once: today is a day of the rule.
            #expect(charge.split == .shares([.user(cast.admin): 1, .user(cast.member): 1, .familyMember(tim): 1]))
            #expect(charge.nextOn == (try day("2030-02-01")))
            _ = try await clock(services, "2030-03-01T12:00:00Z").recurringCharges.createDue()
            let made = try await expenses(of: charge.id, services, cast)
            let months = try ["2030-01-01", "2030-02-01", "2030-03-01"].map(day)
            #expect(made.map(\.transactionDate) == months)
            for expense in made {
                #expect(expense.totalAmount == 9000 && expense.category == .equipment && expense.createdBy == cast.admin)
                #expect(expense.splits.filter { $0.familyMemberID == tim }.map(\.userID) == [cast.member])
            }
            let balances = Dictionary(
                try await services.settlements.balances(in: cast.community, as: cast.member).map { ($0.userID, $0.balance) }, uniquingKeysWith: +)
            #expect(balances == [cast.admin: 3 * 6000, cast.member: -3 * 6000])
            // History records each creation, by the template's creator.
            let history = try await services.expenses.history(in: cast.community, as: cast.member).items
            #expect(history.filter { $0.action == .created }.count == 3)
        }
    }

    @Test("pause leaves out the days that pass; resume starts from today; skip leaves out one day; end stops for good")
    func pauseSkipResumeEnd() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let start = try clock(services, "2030-01-01T12:00:00Z")
            let charge = try await start.recurringCharges.createDues(
                in: cast.community, name: "Dues", amount: try dollars("10.00"), rule: try .parse("FREQ=MONTHLY;BYMONTHDAY=1"), as: cast.admin)
            let first = try day("2030-01-01")
            #expect(try await dues(of: charge.id, services, cast) == [first])

            _ = try await start.recurringCharges.pause(charge.id, as: cast.admin)
            #expect(try await clock(services, "2030-03-15T12:00:00Z").recurringCharges.createDue().created == 0)
            let resumed = try await clock(services, "2030-03-15T12:00:00Z").recurringCharges.resume(charge.id, as: cast.admin)
            let april = try day("2030-04-01")
            #expect(resumed.status == .active && resumed.nextOn == april)

            // Skip May; a day already created, a day not of the rule and a skipped day again are refused.
            let skipped = try await services.recurringCharges.skip(charge.id, on: try day("2030-05-01"), as: cast.admin)
            let may = try day("2030-05-01")
            #expect(skipped.skipped == [may])
            #expect(
                await serviceError { try await services.recurringCharges.skip(charge.id, on: try day("2030-01-01"), as: cast.admin) }?.code
                    == .conflict)
            // A well-formed day the stored series does not give: the state refuses it (409, naming the date).
            let notADay = await serviceError { try await services.recurringCharges.skip(charge.id, on: try day("2030-05-02"), as: cast.admin) }
            #expect(notADay?.code == .conflict && notADay?.field == "date")
            #expect(
                await serviceError { try await services.recurringCharges.skip(charge.id, on: try day("2030-05-01"), as: cast.admin) }?.code
                    == .conflict)

            _ = try await clock(services, "2030-06-10T12:00:00Z").recurringCharges.createDue()
            let created = try ["2030-01-01", "2030-04-01", "2030-06-01"].map(day)
            #expect(try await dues(of: charge.id, services, cast) == created)

            let ended = try await services.recurringCharges.end(charge.id, as: cast.admin)
            #expect(ended.status == .ended)
            #expect(try await clock(services, "2030-09-10T12:00:00Z").recurringCharges.createDue().created == 0)
            #expect(await serviceError { try await services.recurringCharges.resume(charge.id, as: cast.admin) }?.code == .conflict)
        }
    }

    @Test("a rule with COUNT ends by itself after its last day")
    func countEnds() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let charge = try await clock(services, "2030-01-01T12:00:00Z").recurringCharges.createDues(
                in: cast.community, name: "Camp instalments", amount: try dollars("100.00"), rule: try .parse("FREQ=MONTHLY;COUNT=3"), as: cast.admin)
            _ = try await clock(services, "2030-12-01T12:00:00Z").recurringCharges.createDue()
            #expect(try await dues(of: charge.id, services, cast).count == 3)
            let now = try await services.recurringCharges.get(charge.id, as: cast.member)
            #expect(now.status == .ended && now.nextOn == nil)
        }
    }

    @Test("when an occurrence cannot be made (its payer left) the template pauses with the reason, nothing half-written")
    func pausesWithReason() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let third = try await services.users.create(email: "t@example.com", displayName: "Third").id
            _ = try await services.members.add(third, to: cast.community, as: cast.admin)
            let charge = try await clock(services, "2030-01-01T12:00:00Z").recurringCharges.createExpense(
                in: cast.community, description: "Snacks", amount: try dollars("20.00"), paidBy: third,
                split: .equal([cast.admin, cast.member]), rule: try .parse("FREQ=MONTHLY"), as: cast.member)
            try await services.members.leave(cast.community, as: third)
            let report = try await clock(services, "2030-03-05T12:00:00Z").recurringCharges.createDue()
            #expect(report == RecurringChargeService.Report(created: 0, paused: 1))
            let paused = try await services.recurringCharges.get(charge.id, as: cast.member)
            #expect(paused.status == .paused)
            #expect(paused.statusReason?.contains("\(third)") == true)
            #expect(paused.nextOn == (try day("2030-02-01")))
            #expect(try await expenses(of: charge.id, services, cast).count == 1)
        }
    }

    @Test("who may do what: a member sets up a recurring expense, only admins recurring dues; creator or admin change it")
    func permissions() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let third = try await services.users.create(email: "t@example.com", displayName: "Third").id
            _ = try await services.members.add(third, to: cast.community, as: cast.admin)
            let refused = await serviceError {
                try await services.recurringCharges.createDues(
                    in: cast.community, name: "Dues", amount: try dollars("10.00"), rule: try .parse("FREQ=MONTHLY"), as: cast.member)
            }
            #expect(refused?.code == .forbidden)
            #expect(
                await serviceError {
                    try await services.recurringCharges.createDues(
                        in: cast.community, name: "Dues", amount: try dollars("10.00"), rule: try .parse("FREQ=MONTHLY"), as: cast.outsider)
                }?.code == .notFound)
            #expect(
                await serviceError {
                    try await services.recurringCharges.createDues(
                        in: cast.community, name: "Dues", amount: try dollars("10.00"), rule: try .parse("FREQ=FORTNIGHTLY"), as: cast.admin)
                }?.field == "recurrence_rule")
            let charge = try await services.recurringCharges.createExpense(
                in: cast.community, description: "Snacks", amount: try dollars("20.00"), split: .equal([cast.admin, cast.member]),
                rule: try .parse("FREQ=WEEKLY"), as: cast.member)
            #expect(charge.paidBy == cast.member)
            #expect(await serviceError { try await services.recurringCharges.pause(charge.id, as: third) }?.code == .forbidden)
            #expect(await serviceError { try await services.recurringCharges.pause(charge.id, as: cast.outsider) }?.code == .notFound)
            #expect(try await services.recurringCharges.pause(charge.id, as: cast.admin).status == .paused)
            #expect(try await services.recurringCharges.resume(charge.id, as: cast.member).status == .active)
            #expect(try await services.recurringCharges.list(in: cast.community, as: third).items.map(\.id) == [charge.id])
        }
    }
}
