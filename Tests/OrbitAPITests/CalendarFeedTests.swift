import Foundation
import HTTPTypes
import LocalPostgres
import OrbitAPI
import OrbitCore
import OrbitTestSupport
import Testing

/// Python with icalendar and recurring_ical_events (scripts/ensure-deps.sh makes it):
/// `ORBIT_ICAL_PYTHON`, else the package's .build/ical-python.
enum ICalendarPython {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var path: String {
        if let path = ProcessInfo.processInfo.environment["ORBIT_ICAL_PYTHON"], !path.isEmpty { return path }
        return root.appending(path: ".build/ical-python/bin/python3").path
    }

    /// scripts/ical-expand.py over `feed`: the occurrences in [from, to) and each VTIMEZONE's
    /// check, hour by hour from a year before `from` to `zoneYears` years after `to`.
    static func expand(_ feed: Data, from: String, to: String, zoneYears: Int = 1) async throws -> [String: Any] {
        try #require(
            FileManager.default.isExecutableFile(atPath: path),
            "No Python with icalendar at \(path): run scripts/ensure-deps.sh (scripts/test.sh does), or set ORBIT_ICAL_PYTHON")
        let file = FileManager.default.temporaryDirectory.appending(path: "orbit-feed-\(UUID()).ics")
        try feed.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await Subprocess.run(
            path, [root.appending(path: "scripts/ical-expand.py").path, file.path, from, to, String(zoneYears)], separateErrors: true)
        try #require(result.succeeded, "ical-expand.py failed: \(result.errors)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
    }
}

@Suite("Calendar feeds: what a phone's calendar subscribes to")
struct CalendarFeedTests {
    /// The feed's path (and query) from its owner's link.
    /// The server's public address in these tests (links are built from `--public-url` only).
    static func configured(_ configuration: inout APIConfiguration) {
        configuration.publicURL = "https://orbit.example.com/"
    }

    static func path(of link: TestResponse) throws -> String {
        let https = try link.string("https_url")
        let url = try #require(URL(string: https))
        return url.path + (url.query.map { "?" + $0 } ?? "")
    }

    @Test(
        "a real iCalendar library expands the feed to orbitctl event expand's instants: series across DST changes, moved and cancelled occurrences, three zones"
    )
    func expandedByARealLibrary() async throws {
        try await withAPI(configure: Self.configured) { harness in
            let services = harness.services
            let cast = try await APICast.make(harness)
            // Next year's autumn: New York's clocks go back on the first Sunday of November,
            // Berlin's on the last Sunday of October; Sydney's went forward in early October.
            let year = CivilDate(containing: Date()).year + 1
            let from = "\(year)-10-15T00:00:00Z", to = "\(year)-11-15T00:00:00Z"
            var communities: [String: CommunityID] = [:]
            for zone in ["America/New_York", "Europe/Berlin", "Australia/Sydney"] {
                let community = try await services.communities.create(
                    name: "Club \(zone)", settings: CommunitySettings(timezone: zone), as: cast.admin
                ).id
                _ = try await services.members.add(cast.member, to: community, as: cast.admin)
                communities[zone] = community
            }
            func local(_ text: String, _ zone: String) throws -> Date {
                let parsed = try #require(LocalDateTime(parsing: text))
                return RecurringSeries.instant(for: parsed, in: try #require(TimeZone(identifier: zone)))
            }
            struct Series {
                var rule: String
                var start: String
                var zone: String
                var id: EventID
            }
            var series: [Series] = []
            // Weekly on Tuesdays at 6 pm, from October 1st (not a Tuesday: the first occurrence is
            // the rule's first).
            for (rule, start, zone) in [
                ("FREQ=WEEKLY;BYDAY=TU", "\(year)-10-01T18:00", "America/New_York"),
                ("FREQ=DAILY;COUNT=14", "\(year)-10-20T07:30", "Europe/Berlin"),
                ("FREQ=WEEKLY;INTERVAL=2;BYDAY=SA", "\(year)-09-05T09:00", "Australia/Sydney"),
            ] {
                let event = try await services.events.create(
                    in: try #require(communities[zone]),
                    EventDraft(
                        title: "Practice, \(zone); bring water", description: "Field 3,\nbehind the school",
                        startsAt: try local(start, zone), endsAt: try local(start, zone).addingTimeInterval(5400),
                        locationName: "Riverside Park", locationAddress: "1 River Rd, Springfield", recurrenceRule: rule),
                    as: cast.admin)
                series.append(Series(rule: rule, start: start, zone: zone, id: event.id))
            }
            // orbitctl event expand: the instants of each rule in the month.
            func expand(_ series: Series, exdates: [Date] = []) async throws -> [String] {
                let arguments =
                    [
                        "event", "expand", "--rrule", series.rule, "--start", series.start, "--tz", series.zone, "--from", from, "--to",
                        "\(year)-11-14T23:59:59Z", "--json",
                    ]
                    + exdates.flatMap { ["--exdate", ISO8601DateFormatter().string(from: $0)] }
                let result = try await Subprocess.run(OrbitctlProcess.path, arguments, separateErrors: true)
                try #require(result.succeeded, "\(result.errors)")
                return try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String])
            }
            let iso = ISO8601DateFormatter()
            let fractional = ISO8601DateFormatter()
            fractional.formatOptions.insert(.withFractionalSeconds)
            func date(_ text: String) throws -> Date { try #require(iso.date(from: text) ?? fractional.date(from: text)) }

            // New York: the first occurrence of the month moves a day and an hour later, the third
            // is cancelled, the member answers the second; the last comes after the clocks went back.
            let newYork = series[0]
            let occurrences = try await expand(newYork)
            try #require(occurrences.count >= 4)
            let moved = try date(occurrences[0]), cancelled = try date(occurrences[2])
            let movedTo = moved.addingTimeInterval(25 * 3600)
            _ = try await services.events.update(
                newYork.id, occurrence: moved, EventDraft(startsAt: movedTo, endsAt: movedTo.addingTimeInterval(5400)), as: cast.admin)
            try await services.events.delete(newYork.id, occurrence: cancelled, scope: .occurrence, as: cast.admin)
            _ = try await services.events.rsvp(newYork.id, occurrence: try date(occurrences[1]), status: .yes, as: cast.member)
            // Berlin: one morning cancelled.
            let berlin = series[1]
            let berlinCancelled = try date(try await expand(berlin)[3])
            try await services.events.delete(berlin.id, occurrence: berlinCancelled, scope: .occurrence, as: cast.admin)
            // A one-off match the member won't go to, and an all-day tournament.
            let match = try await services.events.create(
                in: try #require(communities["Europe/Berlin"]),
                EventDraft(title: "Away match", startsAt: try local("\(year)-10-24T15:00", "Europe/Berlin"), category: .game), as: cast.admin)
            _ = try await services.events.rsvp(match.id, status: .no, as: cast.member)
            _ = try await services.events.create(
                in: try #require(communities["America/New_York"]),
                EventDraft(title: "Tournament", startsAt: try local("\(year)-11-07T00:00", "America/New_York"), allDay: true), as: cast.admin)

            let link = try await harness.request(.get, "/users/me/calendar", token: cast.memberToken)
            #expect(link.status == 200, "\(link.text)")
            let feed = try await harness.request(.get, try Self.path(of: link))
            #expect(feed.status == 200)
            #expect(feed.headers[.contentType] == "text/calendar; charset=utf-8")
            let expanded = try await ICalendarPython.expand(feed.body, from: from, to: to)

            // Every VTIMEZONE, read as a zone of its own, has the system zone's offsets hour by hour.
            let zones = try #require(expanded["timezones"] as? [String: String])
            #expect(zones == ["America/New_York": "ok", "Europe/Berlin": "ok", "Australia/Sydney": "ok"])

            let found = try #require(expanded["occurrences"] as? [[String: Any]])
            func starts(_ id: EventID) -> [String] {
                found.filter { $0["uid"] as? String == "\(id)@orbitcove" }.compactMap { $0["start"] as? String }.sorted()
            }
            // The series as orbitctl expands them, less the cancelled and moved occurrences, plus
            // where the moved one went.
            let newYorkExpected = try await expand(newYork, exdates: [cancelled, moved]) + [iso.string(from: movedTo)]
            #expect(starts(newYork.id) == newYorkExpected.sorted())
            #expect(try await expand(berlin, exdates: [berlinCancelled]) == starts(berlin.id))
            #expect(try await expand(series[2]) == starts(series[2].id))
            #expect(starts(newYork.id).count >= 3 && starts(berlin.id).count == 13 && !starts(series[2].id).isEmpty)

            // The moved occurrence keeps its duration and names its original start; the answered
            // one carries the member's answer and links back into the app.
            let movedEntry = try #require(found.first { $0["recurrence_id"] as? String == iso.string(from: moved) })
            #expect(movedEntry["start"] as? String == iso.string(from: movedTo))
            #expect(movedEntry["end"] as? String == iso.string(from: movedTo.addingTimeInterval(5400)))
            let answered = try #require(found.first { $0["start"] as? String == occurrences[1] })
            #expect(answered["rsvp"] as? String == "yes")
            #expect((answered["url"] as? String)?.hasPrefix("orbitcove://events/\(newYork.id)?occurrence=") == true)
            #expect(
                (found.first { $0["uid"] as? String == "\(newYork.id)@orbitcove" })?["summary"] as? String
                    == "Practice, America/New_York; bring water")
            let matchEntry = try #require(found.first { $0["uid"] as? String == "\(match.id)@orbitcove" })
            #expect(matchEntry["rsvp"] as? String == "no")
            let tournament = try #require(found.first { $0["summary"] as? String == "Tournament" })
            #expect(tournament["start"] as? String == "\(year)-11-07" && tournament["end"] as? String == "\(year)-11-08")

            // The same month as the app shows it (GET /communities/{id}/events), series by series.
            for (zone, id) in communities {
                let window = try await harness.request(.get, "/communities/\(id)/events?from=\(from)&to=\(to)", token: cast.memberToken)
                let appStarts = try window.items.filter { $0["all_day"] as? Bool == false }.compactMap { $0["starts_at"] as? String }.map {
                    try date($0)
                }
                let feedStarts = try found.filter { entry in
                    (entry["start"] as? String)?.count == 20 && series.contains { $0.zone == zone && entry["uid"] as? String == "\($0.id)@orbitcove" }
                        || (entry["uid"] as? String == "\(match.id)@orbitcove" && zone == "Europe/Berlin")
                }.compactMap { $0["start"] as? String }.map { try date($0) }
                let end = try date(to)
                #expect(appStarts.filter { $0 < end }.sorted() == feedStarts.sorted(), "\(zone)")
            }
        }
    }

    @Test(
        "zones whose rule is not the n-th weekday of a month (Jerusalem) and the southern hemisphere (Santiago): each VTIMEZONE matches the system zone hour by hour for nine years"
    )
    func irregularZones() async throws {
        try await withAPI(configure: Self.configured) { harness in
            let cast = try await APICast.make(harness)
            let start = Date().addingTimeInterval(86_400)
            for zone in ["Asia/Jerusalem", "America/Santiago"] {
                let community = try await harness.services.communities.create(
                    name: zone, settings: CommunitySettings(timezone: zone), as: cast.admin
                ).id
                _ = try await harness.services.events.create(
                    in: community, EventDraft(title: "Weekly", startsAt: start, recurrenceRule: "FREQ=WEEKLY"), as: cast.admin)
            }
            let link = try await harness.request(.get, "/users/me/calendar", token: cast.adminToken)
            let feed = try await harness.request(.get, try Self.path(of: link))
            let iso = ISO8601DateFormatter()
            let expanded = try await ICalendarPython.expand(
                feed.body, from: iso.string(from: start), to: iso.string(from: start.addingTimeInterval(86_400)), zoneYears: 9)
            #expect(expanded["timezones"] as? [String: String] == ["Asia/Jerusalem": "ok", "America/Santiago": "ok"])
        }
    }

    @Test("the owner's link: webcal://, one community by choice, ETag and 304, a rotation or revocation is 404 at once, strangers get nothing")
    func linkAndCaching() async throws {
        try await withAPI(configure: Self.configured) { harness in
            let services = harness.services
            let cast = try await APICast.make(harness)
            let event = try await services.events.create(
                in: cast.community, EventDraft(title: "Team photo", startsAt: Date().addingTimeInterval(86_400)), as: cast.admin)
            let elsewhere = try await services.events.create(
                in: cast.otherCommunity, EventDraft(title: "Not for members of Tigers", startsAt: Date().addingTimeInterval(86_400)),
                as: cast.outsider)

            let link = try await harness.request(.get, "/users/me/calendar", token: cast.memberToken)
            #expect(link.status == 200)
            let url = try link.string("url"), https = try link.string("https_url")
            #expect(url.hasPrefix("webcal://orbit.example.com/calendar/") && url.hasSuffix(".ics"), "\(url)")
            #expect(https == "https" + url.dropFirst("webcal".count))
            #expect(try link.json["community_id"] is NSNull)
            // Asked again: the server no longer knows the address (it keeps the token's digest),
            // only when it was made.
            let asked = try await harness.request(.get, "/users/me/calendar", token: cast.memberToken)
            #expect(asked.status == 200)
            let askedJSON = try asked.json
            #expect(askedJSON["url"] is NSNull && askedJSON["https_url"] is NSNull, "\(asked.text)")
            #expect(try asked.string("created_at") == (try link.string("created_at")))
            let path = try Self.path(of: link)

            let first = try await harness.request(.get, path)
            #expect(first.status == 200)
            let etag = try #require(first.headers[.eTag])
            #expect(first.text.contains("SUMMARY:Team photo") && !first.text.contains("Not for members"))
            #expect(first.text.hasPrefix("BEGIN:VCALENDAR\r\n") && first.text.hasSuffix("END:VCALENDAR\r\n"))
            let again = try await harness.request(.get, path, headers: ["If-None-Match": etag])
            #expect(again.status == 304 && again.body.isEmpty)
            _ = try await services.events.update(event.id, EventDraft(title: "Team photo, 9 am sharp"), as: cast.admin)
            let changed = try await harness.request(.get, path, headers: ["If-None-Match": etag])
            #expect(changed.status == 200 && changed.headers[.eTag] != etag && changed.text.contains("Team photo\\, 9 am sharp"))

            // One community by choice; one that is not the user's is 404, for the link and the feed.
            let one = try await harness.request(.get, "/users/me/calendar?community=\(cast.community)", token: cast.memberToken)
            let oneJSON = try one.json
            #expect(one.status == 200 && oneJSON["url"] is NSNull && oneJSON["community_id"] as? String == cast.community.description)
            #expect(try await harness.request(.get, path + "?community=\(cast.community)").status == 200)
            #expect(try await harness.request(.get, "/users/me/calendar?community=\(cast.otherCommunity)", token: cast.memberToken).status == 404)
            #expect(try await harness.request(.get, path + "?community=\(cast.otherCommunity)").status == 404)
            #expect(try await harness.request(.get, "/users/me/calendar?community=nope", token: cast.memberToken).status == 400)
            // The outsider's own feed has their event and not the Tigers'.
            let outsiders = try await harness.request(
                .get, try Self.path(of: try await harness.request(.get, "/users/me/calendar", token: cast.outsiderToken)))
            #expect(outsiders.text.contains("SUMMARY:Not for members of Tigers") && !outsiders.text.contains("Team photo"))
            _ = elsewhere

            // Rotation: the old address is 404 at once, the new one works.
            let rotated = try await harness.request(.post, "/users/me/calendar/rotate", token: cast.memberToken)
            let rotatedURL = try rotated.string("url")
            #expect(rotated.status == 200 && rotatedURL != url)
            #expect(try await harness.request(.get, path).status == 404)
            #expect(try await harness.request(.get, try Self.path(of: rotated)).status == 200)
            // Revocation: 404, and no address until one is asked for again.
            #expect(try await harness.request(.delete, "/users/me/calendar", token: cast.memberToken).status == 204)
            #expect(try await harness.request(.get, try Self.path(of: rotated)).status == 404)
            let renewed = try await harness.request(.get, "/users/me/calendar", token: cast.memberToken)
            #expect(try renewed.string("url") != rotatedURL)

            // A member who leaves: the community's events leave their feed.
            try await services.members.leave(cast.community, as: cast.member)
            let afterLeaving = try await harness.request(.get, try Self.path(of: renewed))
            #expect(afterLeaving.status == 200 && !afterLeaving.text.contains("Team photo"))

            // Nothing for guesses, malformed addresses or anonymous owners.
            #expect(try await harness.request(.get, "/calendar/\(String(repeating: "A", count: 43)).ics").status == 404)
            let notAFeed = try await harness.request(.get, "/calendar/not-a-token")
            // (The router answers 405 for a path under /calendar/ that is not a feed's.)
            #expect((400..<500).contains(notAFeed.status) && !notAFeed.text.contains("VCALENDAR"), "\(notAFeed.status)")
            #expect(try await harness.request(.get, "/calendar/%27%3B--.ics").status == 404)
            #expect(try await harness.request(.get, "/users/me/calendar").status == 401)
            #expect(try await harness.request(.post, "/users/me/calendar/rotate").status == 401)
        }
    }

    @Test("links come from --public-url: outside dev a request's Host header never makes one (501, and no address is made)")
    func publicURLOnly() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let answer = try await harness.request(.get, "/users/me/calendar", token: cast.memberToken, headers: ["Host": "evil.example"])
            #expect(answer.status == 501, "\(answer.text)")
            #expect(answer.text.contains("--public-url"))
            #expect(try await harness.request(.post, "/users/me/calendar/rotate", token: cast.memberToken).status == 501)
            let feeds = try await harness.database.withConnection { connection in
                try await connection.query("SELECT count(*) AS n FROM calendar_feeds").single().decode("n", as: Int64.self)
            }
            #expect(feeds == 0)
        }
        // `orbitctl dev` (dev auth, on localhost): the request's address.
        try await withAPI(configure: { $0.devAuth = true }) { harness in
            let cast = try await APICast.make(harness)
            let answer = try await harness.request(.get, "/users/me/calendar", token: cast.memberToken)
            #expect(try answer.string("https_url").hasPrefix("http://localhost/calendar/"), "\(answer.text)")
        }
    }

    @Test("the token is kept as its SHA-256 digest: the database holds no address, and the shown one works")
    func digestOnly() async throws {
        try await withAPI(configure: Self.configured) { harness in
            let cast = try await APICast.make(harness)
            let link = try await harness.request(.get, "/users/me/calendar", token: cast.memberToken)
            let path = try Self.path(of: link)
            let token = String(path.dropFirst("/calendar/".count).dropLast(".ics".count))
            let (digests, plain) = try await harness.database.withConnection { connection in
                try await connection.query(
                    """
                    SELECT count(*) FILTER (WHERE token_hash = sha256(convert_to(\(token), 'UTF8'))) AS digests,
                        count(*) FILTER (WHERE position(convert_to(\(token), 'UTF8') IN token_hash) > 0
                                         OR to_jsonb(f)::text LIKE '%' || \(token) || '%') AS plain
                    FROM calendar_feeds f
                    """
                ).single().decode((Int64, Int64).self)
            }
            #expect(digests == 1 && plain == 0)
            #expect(try await harness.request(.get, path).status == 200)
        }
    }
}
