import Foundation
import OrbitTestSupport
import Testing

@Suite("orbitctl calendar")
struct CalendarCommandTests {
    @Test(
        "url shows the same webcal:// address until rotate; feed prints the iCalendar; revoke; a stranger's community and a bad --public-url are refused"
    )
    func calendar() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
            _ = try await cli.json("user", "create", "--email", "olga@example.com", "--name", "Olga")
            let community = try #require(
                try await cli.json(
                    "community", "create", "--name", "Tigers", "--settings", #"{"timezone": "Europe/Berlin"}"#, "--as", "ada@example.com"
                )["id"] as? String)
            let olgas = try #require(try await cli.json("community", "create", "--name", "Chess", "--as", "olga@example.com")["id"] as? String)
            _ = try await cli.json(
                "event", "create", "--community", community, "--title", "Practice", "--starts-at", "2027-03-02T18:00:00+01:00",
                "--rrule", "FREQ=WEEKLY;BYDAY=TU", "--as", "ada@example.com")

            let link = try await cli.json("calendar", "url", "--public-url", "https://api.example.com", "--as", "ada@example.com")
            let url = try #require(link["url"] as? String)
            #expect(url.hasPrefix("webcal://api.example.com/calendar/") && url.hasSuffix(".ics"), "\(url)")
            #expect(link["https_url"] as? String == "https" + url.dropFirst("webcal".count))
            // Asked again: the server keeps only the token's digest, and says so.
            let again = try await cli.run("calendar", "url", "--public-url", "https://api.example.com", "--as", "ada@example.com")
            #expect(again.succeeded && again.output.contains("shown then") && !again.output.contains("webcal://"), "\(again.output)")
            let one = try await cli.json(
                "calendar", "url", "--community", community, "--public-url", "https://api.example.com", "--as", "ada@example.com")
            #expect(one["url"] is NSNull && one["community_id"] as? String == community, "\(one)")

            let feed = try await cli.run("calendar", "feed", "--as", "ada@example.com")
            #expect(feed.succeeded, "\(feed.errors)")
            #expect(feed.output.hasPrefix("BEGIN:VCALENDAR\r\n") && feed.output.contains("RRULE:FREQ=WEEKLY;BYDAY=TU\r\n"))
            #expect(feed.output.contains("DTSTART;TZID=Europe/Berlin:20270302T180000\r\n") && feed.output.contains("TZID:Europe/Berlin\r\n"))

            let rotated = try await cli.json("calendar", "rotate", "--public-url", "https://api.example.com", "--as", "ada@example.com")
            #expect((rotated["url"] as? String).map { $0 != url && $0.hasPrefix("webcal://api.example.com/calendar/") } == true)
            #expect(try await cli.json("calendar", "revoke", "--as", "ada@example.com")["revoked"] as? Bool == true)
            let twice = try await cli.run("calendar", "revoke", "--as", "ada@example.com")
            #expect(twice.succeeded && twice.output.contains("no calendar feed address"), "\(twice.output)")

            let stranger = try await cli.run("calendar", "url", "--community", olgas, "--as", "ada@example.com")
            #expect(!stranger.succeeded && stranger.errors.contains("not found"), "\(stranger.errors)")
            let badURL = try await cli.run("calendar", "url", "--public-url", "ftp://example.com", "--as", "ada@example.com")
            #expect(!badURL.succeeded && badURL.errors.contains("--public-url"), "\(badURL.errors)")
        }
    }
}
