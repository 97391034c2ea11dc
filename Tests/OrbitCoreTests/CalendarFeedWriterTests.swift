import Foundation
import Testing

@testable import OrbitCore

/// The iCalendar text itself (RFC 5545): folding, escaping, time zones and all-day series, without
/// a database. CalendarFeedTests (OrbitAPITests) reads whole feeds with a real iCalendar library.
@Suite("iCalendar writing: folded lines, escaped text, VTIMEZONE, all-day series")
struct CalendarFeedWriterTests {
    @Test("lines fold at 75 octets without splitting a UTF-8 character; TEXT escapes backslash, ; , and line breaks and drops control characters")
    func foldingAndEscaping() {
        var writer = ICalendarWriter()
        let summary = String(repeating: "é", count: 50) + "🏉" + String(repeating: "x", count: 40)
        writer.line("SUMMARY", ICalendarWriter.escaped(summary))
        let lines = writer.text.components(separatedBy: "\r\n").dropLast()
        #expect(lines.count > 1)
        #expect(lines.allSatisfy { $0.utf8.count <= 75 })
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix(" ") })
        // Unfolded (CRLF + space removed), the value is whole again.
        #expect(writer.text.replacingOccurrences(of: "\r\n ", with: "") == "SUMMARY:\(summary)\r\n")
        #expect(ICalendarWriter.escaped("a\\b;c,d\r\ne\nf\rg\u{7}h\ti") == "a\\\\b\\;c\\,d\\ne\\nf\\ng" + "h\ti")
    }

    @Test("a zone without daylight-saving time has one observance; New York's rules repeat without end; Lord Howe's half-hour change too")
    func timeZones() throws {
        func component(_ zone: String, from: String, through: String) throws -> String {
            var writer = ICalendarWriter()
            let iso = ISO8601DateFormatter()
            VTimeZone(
                zone: try #require(TimeZone(identifier: zone)), from: try #require(iso.date(from: from)),
                through: try #require(iso.date(from: through))
            ).write(into: &writer)
            return writer.text
        }
        let tokyo = try component("Asia/Tokyo", from: "2026-01-01T00:00:00Z", through: "2027-01-01T00:00:00Z")
        #expect(tokyo.components(separatedBy: "BEGIN:STANDARD").count == 2 && !tokyo.contains("DAYLIGHT"))
        #expect(tokyo.contains("TZOFFSETFROM:+0900\r\nTZOFFSETTO:+0900"))
        let newYork = try component("America/New_York", from: "2026-03-01T00:00:00Z", through: "2026-12-01T00:00:00Z")
        #expect(newYork.contains("RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU\r\n"))
        #expect(newYork.contains("RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU\r\n"))
        let lordHowe = try component("Australia/Lord_Howe", from: "2026-01-01T00:00:00Z", through: "2026-12-01T00:00:00Z")
        #expect(lordHowe.contains("TZOFFSETFROM:+1030\r\nTZOFFSETTO:+1100"))
    }

    @Test("an all-day series is dates throughout: DTSTART, DTEND, UNTIL and EXDATE")
    func allDaySeries() throws {
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let start = RecurringSeries.instant(for: try #require(LocalDateTime(parsing: "2026-06-01T00:00")), in: zone)
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        let community = CommunityID.random()
        let seriesID = UUID().uuidString.lowercased()
        let iso = ISO8601DateFormatter()
        /// An event row as the database would give it (Event is decoded, as from a GET).
        func event(_ fields: [String: Any]) throws -> Event {
            var row: [String: Any] = [
                "id": UUID().uuidString.lowercased(), "community_id": community.description, "created_by": UUID().uuidString.lowercased(),
                "title": "Camp", "starts_at": iso.string(from: start), "ends_at": iso.string(from: start.addingTimeInterval(2 * 86_400)),
                "all_day": true, "category": "social", "recurrence_timezone": "Europe/Berlin", "created_at": iso.string(from: now),
                "updated_at": iso.string(from: now),
            ]
            row.merge(fields) { $1 }
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(Event.self, from: try JSONSerialization.data(withJSONObject: row))
        }
        let series = try event(["id": seriesID, "recurrence_rule": "FREQ=WEEKLY;UNTIL=20260630T120000Z"])
        let cancelled = try event([
            "recurrence_parent_id": seriesID, "original_starts_at": iso.string(from: start.addingTimeInterval(7 * 86_400)),
            "deleted_at": iso.string(from: now),
        ])
        let text = try CalendarFeedDocument(
            name: "Camp", communities: [community: .init(name: "Scouts", zone: zone)], single: [], series: [series], instances: [cancelled],
            answers: [:], now: now
        ).write()
        #expect(text.contains("DTSTART;VALUE=DATE:20260601\r\nDTEND;VALUE=DATE:20260603\r\n"), "\(text)")
        #expect(text.contains("RRULE:FREQ=WEEKLY;UNTIL=20260630\r\n"))
        #expect(text.contains("EXDATE;VALUE=DATE:20260608\r\n"))
        #expect(!text.contains("VTIMEZONE"))
    }

    @Test("a series whose first occurrence falls in a spring-forward gap keeps its time of day in DTSTART; GEO is written without exponents")
    func gapAndGeo() throws {
        let zone = try #require(TimeZone(identifier: "America/New_York"))
        let iso = ISO8601DateFormatter()
        // Saturday 7 March 2026, 2:30 am; weekly on Sundays: the first occurrence is Sunday the
        // 8th at 2:30, which does not exist that night (the clocks jump from 2 to 3).
        let start = RecurringSeries.instant(for: try #require(LocalDateTime(parsing: "2026-03-07T02:30")), in: zone)
        let community = CommunityID.random()
        let row: [String: Any] = [
            "id": UUID().uuidString.lowercased(), "community_id": community.description, "created_by": UUID().uuidString.lowercased(),
            "title": "Night shift", "starts_at": iso.string(from: start), "all_day": false, "category": "other",
            "ends_at": iso.string(from: start.addingTimeInterval(5400)),
            "recurrence_rule": "FREQ=WEEKLY;BYDAY=SU", "recurrence_timezone": "America/New_York", "location_lat": 0.00001,
            "location_lng": -71.5, "created_at": iso.string(from: start), "updated_at": iso.string(from: start),
        ]
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let series = try decoder.decode(Event.self, from: try JSONSerialization.data(withJSONObject: row))
        let text = try CalendarFeedDocument(
            name: "Shifts", communities: [community: .init(name: "Ward", zone: zone)], single: [], series: [series], instances: [],
            answers: [:], now: start
        ).write()
        #expect(text.contains("DTSTART;TZID=America/New_York:20260308T023000\r\n"), "\(text)")
        // An hour and a half, as a length: a DTEND in local time (05:00) less a DTSTART the gap
        // skips (02:30) would read two and a half hours (issue 52, item 7).
        #expect(text.contains("DURATION:PT5400S\r\n"), "\(text)")
        #expect(!text.contains("DTEND"), "\(text)")
        #expect(text.contains("GEO:0.000010;-71.500000\r\n"))
    }
}
