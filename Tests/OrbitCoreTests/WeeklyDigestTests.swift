import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("The weekly digest: Monday morning in the user's own zone, once, the week's money across their communities", .serialized)
struct WeeklyDigestTests {
    /// The next Monday at `hour`:`minute` in `zone`, within the coming week.
    static func monday(hour: Int, minute: Int = 0, in zone: String) throws -> Date {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = try #require(TimeZone(identifier: zone))
        return try #require(
            calendar.nextDate(after: Date(), matching: DateComponents(hour: hour, minute: minute, weekday: 2), matchingPolicy: .nextTime))
    }

    @Test("in the user's zone, once a week with three servers at once; nothing for someone without money or who switched it off")
    func digest() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            for user in [cast.member, cast.outsider] {
                _ = try await services.users.updateProfile(timezone: "Asia/Kolkata", as: user)
            }
            _ = try await services.expenses.addExpense(
                in: cast.community, description: "Pitch", total: try dollars("30.00"), paidBy: cast.admin, split: .equal([cast.admin, cast.member]),
                as: cast.admin)
            _ = try await services.expenses.addExpense(
                in: cast.community, description: "Bus", total: try Money(parsing: "10.00", currency: try #require(Currency("EUR"))),
                paidBy: cast.admin, split: .equal([cast.admin, cast.member]), as: cast.admin)
            func run(at instant: Date) async throws -> Int {
                var later = services
                later.now = { instant }
                return try await later.notifications.sendWeeklyDigests()
            }
            // 07:59 in Kolkata is not yet the morning; 09:00 is (03:30 UTC: not yet the admin's, in UTC).
            #expect(try await run(at: try Self.monday(hour: 7, minute: 59, in: "Asia/Kolkata")) == 0)
            let monday = try Self.monday(hour: 9, in: "Asia/Kolkata")
            #expect(try await run(at: monday) == 1)
            #expect(try await run(at: monday.addingTimeInterval(3600)) == 0)
            let digest = try #require(try await services.notifications.list(as: cast.member).items.first { $0.type == .weeklyDigest })
            #expect(digest.communityID == nil && digest.title == "Your week in money")
            #expect(digest.body == "Your week in money: 2 new expenses, your share €5.00 and $15.00. You owe €5.00 and $15.00.", "\(digest.body)")

            // A week later, three servers at once: one digest, a quiet one, in the member's language.
            _ = try await services.users.updateProfile(language: "de", as: cast.member)
            let next = monday.addingTimeInterval(7 * 86_400)
            let servers = (0..<3).map { _ in database.makePool(maxConnections: 2) }
            let created = try await withThrowingTaskGroup(of: Int.self) { group in
                for pool in servers {
                    group.addTask {
                        var server = OrbitServices(pool: pool)
                        server.now = { next }
                        return try await server.notifications.sendWeeklyDigests()
                    }
                }
                return try await group.reduce(0, +)
            }
            for pool in servers { await pool.close() }
            #expect(created == 1)
            let digests = try await services.notifications.list(as: cast.member).items.filter { $0.type == .weeklyDigest }
            #expect(digests.count == 2)
            #expect(
                digests.first?.body == "Deine Woche: keine neuen Ausgaben. Du schuldest 5,00\u{00A0}€ und 15,00\u{00A0}$.", "\(digests.map(\.body))")

            // Switched off: none.
            _ = try await services.users.updateNotificationPreferences(weeklyDigest: false, as: cast.member)
            #expect(try await run(at: next.addingTimeInterval(7 * 86_400)) == 0)
            // The outsider, in the same zone, has no money: never one.
            #expect(try await services.notifications.list(as: cast.outsider).items.allSatisfy { $0.type != .weeklyDigest })
            let bad = await serviceError { try await services.users.updateProfile(timezone: "Mars/Olympus", as: cast.member) }
            #expect(bad?.field == "timezone")
        }
    }
}
