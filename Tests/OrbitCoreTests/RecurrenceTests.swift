import Foundation
import OrbitCore
import Testing

struct RecurrenceFixture: Decodable, Sendable, CustomTestStringConvertible {
    var rule: String
    var start: String
    var zone: String
    var limit: Int
    var expected: [String]

    var testDescription: String { "\(rule) from \(start) \(zone)" }

    static let all: [RecurrenceFixture] = {
        struct File: Decodable { var cases: [RecurrenceFixture] }
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "Fixtures/recurrence.json")
        guard let data = try? Data(contentsOf: url), let file = try? JSONDecoder().decode(File.self, from: data) else { return [] }
        return file.cases
    }()
}

func utc(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: date)
}

@Suite("Recurrence rules (RFC 5545), checked against python-dateutil")
struct RecurrenceTests {
    @Test("the fixtures are there")
    func fixturesLoaded() {
        #expect(RecurrenceFixture.all.count >= 50)
    }

    @Test("occurrences equal python-dateutil's, in UTC", arguments: RecurrenceFixture.all)
    func matchesDateutil(fixture: RecurrenceFixture) throws {
        let rule = try RecurrenceRule(parsing: fixture.rule)
        let start = try #require(LocalDateTime(parsing: fixture.start))
        let zone = try #require(TimeZone(identifier: fixture.zone))
        let occurrences = RecurringSeries(rule: rule, start: start, timeZone: zone).occurrences(limit: fixture.limit)
        #expect(occurrences.map(utc) == fixture.expected)
    }

    @Test("a 6 pm weekly practice stays at 6 pm New York time across the March DST change")
    func sixPMAcrossDST() throws {
        let series = RecurringSeries(
            rule: try RecurrenceRule(parsing: "FREQ=WEEKLY;BYDAY=TU"), start: try #require(LocalDateTime(parsing: "2026-03-03T18:00")),
            timeZone: try #require(TimeZone(identifier: "America/New_York"))
        )
        #expect(series.occurrences(limit: 2).map(utc) == ["2026-03-03T23:00:00Z", "2026-03-10T22:00:00Z"])
    }

    @Test("a time in the spring-forward gap takes the offset before the gap; a repeated time is the first one")
    func gapAndOverlap() throws {
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        let gap = RecurringSeries.instant(for: try #require(LocalDateTime(parsing: "2026-03-08T02:30")), in: newYork)
        #expect(utc(gap) == "2026-03-08T07:30:00Z")
        let overlap = RecurringSeries.instant(for: try #require(LocalDateTime(parsing: "2026-11-01T01:30")), in: newYork)
        #expect(utc(overlap) == "2026-11-01T05:30:00Z")
    }

    @Test("windows, limits and exceptions bound the expansion")
    func bounded() throws {
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let start = try #require(LocalDateTime(parsing: "2026-01-05T19:00"))
        let endless = RecurringSeries(rule: try RecurrenceRule(parsing: "FREQ=DAILY"), start: start, timeZone: zone)
        #expect(endless.occurrences(limit: 100).count == 100)
        let from = RecurringSeries.instant(for: try #require(LocalDateTime(parsing: "2026-02-01T00:00")), in: zone)
        let to = RecurringSeries.instant(for: try #require(LocalDateTime(parsing: "2026-02-28T23:59")), in: zone)
        #expect(endless.occurrences(from: from, to: to, limit: 1000).count == 28)

        var skipping = RecurringSeries(rule: try RecurrenceRule(parsing: "FREQ=WEEKLY;COUNT=4"), start: start, timeZone: zone)
        let second = RecurringSeries.instant(for: try #require(LocalDateTime(parsing: "2026-01-12T19:00")), in: zone)
        skipping.exceptions = [second]
        // EXDATE removes an occurrence after COUNT has counted it.
        #expect(skipping.occurrences(limit: 10).map(utc) == ["2026-01-05T18:00:00Z", "2026-01-19T18:00:00Z", "2026-01-26T18:00:00Z"])

        let never = RecurringSeries(rule: try RecurrenceRule(parsing: "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"), start: start, timeZone: zone)
        #expect(never.occurrences(limit: 10).isEmpty)
    }

    @Test(
        "unsupported or invalid rules name the part",
        arguments: [
            ("FREQ=HOURLY", "FREQ"), ("BYDAY=MO", "FREQ"), ("FREQ=WEEKLY;BYDAY=XX", "BYDAY"), ("FREQ=WEEKLY;BYDAY=2MO", "BYDAY"),
            ("FREQ=MONTHLY;BYDAY=6MO", "BYDAY"), ("FREQ=MONTHLY;BYMONTHDAY=32", "BYMONTHDAY"), ("FREQ=MONTHLY;BYMONTHDAY=0", "BYMONTHDAY"),
            ("FREQ=YEARLY;BYMONTH=13", "BYMONTH"), ("FREQ=DAILY;COUNT=0", "COUNT"), ("FREQ=DAILY;INTERVAL=-1", "INTERVAL"),
            ("FREQ=DAILY;COUNT=3;UNTIL=20261224T000000Z", "COUNT"), ("FREQ=DAILY;UNTIL=tomorrow", "UNTIL"), ("FREQ=DAILY;BYHOUR=9", "BYHOUR"),
            ("FREQ=YEARLY;BYWEEKNO=20", "BYWEEKNO"), ("FREQ=DAILY;COLOR=RED", "COLOR"), ("FREQ=DAILY;FREQ=WEEKLY", "FREQ"),
            ("FREQ=WEEKLY;BYMONTHDAY=1", "BYMONTHDAY"), ("FREQ=DAILY;BYSETPOS=1", "BYSETPOS"), ("FREQ=WEEKLY;WKST=XY", "WKST"), ("", "RRULE"),
        ])
    func invalidRules(text: String, part: String) {
        #expect {
            try RecurrenceRule(parsing: text)
        } throws: { error in
            (error as? RecurrenceError)?.part == part
        }
    }

    @Test("rules print in a canonical form that parses back to the same rule")
    func canonicalForm() throws {
        let rule = try RecurrenceRule(parsing: "rrule:freq=monthly;byday=-1fr,2MO;interval=2;until=20261224T000000Z;wkst=su")
        #expect(rule.description == "FREQ=MONTHLY;INTERVAL=2;UNTIL=20261224T000000Z;BYDAY=-1FR,2MO;WKST=SU")
        #expect(try RecurrenceRule(parsing: rule.description) == rule)
    }
}
