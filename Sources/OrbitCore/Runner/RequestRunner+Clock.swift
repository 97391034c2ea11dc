import Foundation
import OrbitPostgres

/// Each community's own clock: every civil-date rule (what is overdue, the days of a dues
/// reminder, an expense's default date) uses the day in the community's `settings.timezone`,
/// by the services' clock, not the UTC day.
extension RequestRunner {
    /// Today in `community`'s time zone (UTC when it has none set); with `instant`, its day there.
    func today(in community: CommunityID, at instant: Date? = nil, on connection: PostgresConnection) async throws -> CivilDate {
        let zone = try await connection.query("SELECT settings ->> 'timezone' AS timezone FROM communities WHERE id = \(community)")
            .first?.decode("timezone", as: String?.self)
        return CivilDate(containing: instant ?? now(), in: CommunitySettings(timezone: zone ?? nil).timeZone)
    }

    /// `day`, or when nil the day of `instant` (default now) in `community`'s time zone.
    func day(_ day: CivilDate?, in community: CommunityID, at instant: Date? = nil, on connection: PostgresConnection) async throws -> CivilDate {
        if let day { return day }
        return try await today(in: community, at: instant, on: connection)
    }
}
