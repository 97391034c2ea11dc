import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Debt reminders: once a week, to whoever has owed more than the threshold for longer than the days", .serialized)
struct DebtReminderTests {
    /// Monday 10:00 UTC at least `days` days from now (the money below is entered now).
    static func monday(afterDays days: Double, hour: Int = 10) throws -> Date {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = .gmt
        let start = Date().addingTimeInterval(days * 86_400)
        var parts = DateComponents()
        parts.weekday = 2
        parts.hour = hour
        return try #require(calendar.nextDate(after: start, matching: parts, matchingPolicy: .nextTime))
    }

    static func reminders(_ database: TestDatabase, of user: UserID) async throws -> [(String, String)] {
        try await database.withConnection { connection in
            try await connection.query(
                "SELECT body, dedupe_key FROM notifications WHERE type = 'debt_reminder' AND user_id = \(user) ORDER BY created_at, dedupe_key"
            ).map { try $0.decode((String, String).self) }
        }
    }

    @Test(
        "off unless the community turns it on; the part of a debt older than the days, above the threshold; once a week, with three servers at once")
    func weekly() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            _ = try await services.expenses.addExpense(
                in: cast.community, description: "Pitch", total: try dollars("30.00"), paidBy: cast.admin, split: .equal([cast.admin, cast.member]),
                as: cast.admin)
            func run(at instant: Date) async throws -> Int {
                var later = services
                later.now = { instant }
                return try await later.settlements.sendDebtReminders()
            }
            let week3 = try Self.monday(afterDays: 15)
            // Off: nobody is reminded.
            #expect(try await run(at: week3) == 0)
            _ = try await services.communities.update(
                cast.community, settings: CommunitySettings(remindOldDebts: true, remindOldDebtsDays: 14, remindOldDebtsThreshold: 10), as: cast.admin
            )
            // Too young: five days from now the debt is five days old, not fourteen.
            #expect(try await run(at: try Self.monday(afterDays: 1).addingTimeInterval(4 * 86_400)) == 0)
            // Monday before 09:00 in the community's zone (UTC here) is still last week's turn.
            #expect(try await run(at: try Self.monday(afterDays: 15, hour: 8)) == 0)
            #expect(try await run(at: week3) == 1)
            #expect(try await run(at: week3.addingTimeInterval(3 * 86_400)) == 0)
            let sent = try await Self.reminders(database, of: cast.member)
            #expect(sent.map(\.0) == ["You have owed 15.00 USD for more than 14 days: settle up"], "\(sent)")
            // The admin is owed, not owing: nothing for them.
            #expect(try await Self.reminders(database, of: cast.admin).isEmpty)

            // The next week, three servers at once: one reminder.
            let week4 = week3.addingTimeInterval(7 * 86_400)
            let servers = (0..<3).map { _ in database.makePool(maxConnections: 2) }
            let created = try await withThrowingTaskGroup(of: Int.self) { group in
                for pool in servers {
                    group.addTask {
                        var server = OrbitServices(pool: pool)
                        server.now = { week4 }
                        return try await server.settlements.sendDebtReminders()
                    }
                }
                return try await group.reduce(0, +)
            }
            for pool in servers { await pool.close() }
            #expect(created == 1)
            #expect(try await Self.reminders(database, of: cast.member).count == 2)

            // A threshold above the debt: none; the member's own switch off: none.
            _ = try await services.communities.update(cast.community, settings: CommunitySettings(remindOldDebtsThreshold: 15), as: cast.admin)
            #expect(try await run(at: week4.addingTimeInterval(7 * 86_400)) == 0)
            _ = try await services.communities.update(cast.community, settings: CommunitySettings(remindOldDebtsThreshold: 14), as: cast.admin)
            _ = try await services.users.updateNotificationPreferences(reminders: false, as: cast.member)
            #expect(try await run(at: week4.addingTimeInterval(14 * 86_400)) == 0)
            _ = try await services.users.updateNotificationPreferences(reminders: true, as: cast.member)
            #expect(try await run(at: week4.addingTimeInterval(21 * 86_400)) == 1)
        }
    }

    @Test("settings: the days and the threshold are bounded")
    func bounds() throws {
        for json in [#"{"remindOldDebtsDays": 0}"#, #"{"remindOldDebtsDays": 366}"#, #"{"remindOldDebtsThreshold": -1}"#, #"{"remindOldDebts": 1}"#] {
            #expect(throws: ServiceError.self, "\(json)") { try CommunitySettings.parse(json: json) }
        }
        #expect(try CommunitySettings.parse(json: #"{"remindOldDebts": true, "remindOldDebtsDays": 7}"#).remindOldDebtsDays == 7)
    }
}
