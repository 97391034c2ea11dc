package import Foundation

/// A user's calendar feed address (docs/calendar-feeds.md): `webcal://HOST/calendar/TOKEN.ics`,
/// for a phone's calendar to subscribe to. The token is its only credential, and the server keeps
/// only its digest: the address is shown when it is made or rotated, and never again (`url` and
/// `https_url` are null then; a rotation makes a new one).
package struct CalendarFeedLink: Sendable, Codable, Equatable {
    /// The address to open on a phone: `webcal://…` (the calendar app subscribes); nil once shown.
    package var url: String?
    /// The same feed over https (a desktop calendar's "subscribe by URL", or a download).
    package var httpsURL: String?
    /// The one community the link shows; nil: all of the user's communities.
    package var communityID: CommunityID?
    /// When the token was made (a rotation makes a new one).
    package var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case url, httpsURL = "https_url", communityID = "community_id", createdAt = "created_at"
    }

    /// The link of `token` on the server reached at `publicURL` (`https://api.example.com`).
    package init(token: String, createdAt: Date, publicURL: String, community: CommunityID? = nil) {
        var base = publicURL
        while base.hasSuffix("/") { base.removeLast() }
        let path = "/calendar/\(token).ics" + (community.map { "?community=\($0)" } ?? "")
        httpsURL = base + path
        // webcal is http(s) by another name: calendar apps fetch it over https.
        let host = base.drop(while: { $0 != ":" }).dropFirst(3)
        url = "webcal://" + host + path
        communityID = community
        self.createdAt = createdAt
    }

    /// A feed made before, whose address is no longer known to the server.
    package init(shownBefore createdAt: Date, community: CommunityID? = nil) {
        communityID = community
        self.createdAt = createdAt
    }

    /// `url` and `https_url` are always written, null once shown.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(url, forKey: .url)
        try container.encode(httpsURL, forKey: .httpsURL)
        try container.encode(communityID, forKey: .communityID)
        try container.encode(createdAt, forKey: .createdAt)
    }
}

/// A user's feed, and its token when it was just made (nil: made before, shown then).
package struct CalendarFeedToken: Sendable, Equatable {
    package var token: String?
    package var createdAt: Date
}

/// The events of a feed, read as its owner, and how they are written as iCalendar.
struct CalendarFeedDocument {
    struct CommunityInfo {
        var name: String
        var zone: TimeZone
    }

    /// The feed's name in calendar apps: the community's, or "OrbitCove" for all of them.
    var name: String
    var communities: [CommunityID: CommunityInfo]
    /// One-off events.
    var single: [Event]
    var series: [Event]
    /// Rows of single occurrences of `series`: moved or answered (live), cancelled (deleted).
    var instances: [Event]
    /// The owner's own answers (not their family members'), by event row.
    var answers: [EventID: Answer]

    struct Answer {
        var status: RSVPStatus
        var updatedAt: Date
    }
    /// Now: the zones' rules reach at least a year past it.
    var now: Date

    static let productID = "-//OrbitCove//Calendar feed 1.0//EN"

    /// The event's screen in the app (docs/calendar-feeds.md, "Links into the app").
    static func appLink(_ event: EventID, occurrence: Date? = nil) -> String {
        "orbitcove://events/\(event)" + (occurrence.map { "?occurrence=" + ICalendarWriter.utc($0) } ?? "")
    }

    func write() throws -> String {
        var writer = ICalendarWriter()
        writer.begin("VCALENDAR")
        writer.line("VERSION", "2.0")
        writer.line("PRODID", Self.productID)
        writer.line("CALSCALE", "GREGORIAN")
        writer.line("NAME", ICalendarWriter.escaped(name))
        writer.line("X-WR-CALNAME", ICalendarWriter.escaped(name))
        // How often to fetch again (RFC 7986; X-PUBLISHED-TTL for older clients).
        writer.line("REFRESH-INTERVAL", ["VALUE": "DURATION"], "PT1H")
        writer.line("X-PUBLISHED-TTL", "PT1H")

        // The zones of the series, each covering its series' occurrences, overrides and cancellations.
        let instancesBySeries = Dictionary(grouping: instances) { $0.recurrenceParentID }
        var zoneRanges: [String: (zone: TimeZone, from: Date, through: Date)] = [:]
        var timedSeries: [(Event, TimeZone, Date)] = []
        for series in series {
            let zone = Self.zone(of: series)
            guard let first = try EventService.occurrences(of: series, from: nil, to: nil, limit: 1).first else { continue }
            timedSeries.append((series, zone, first))
            guard !series.allDay, !Self.isUTC(zone) else { continue }
            let dates = [first, now] + (instancesBySeries[series.id] ?? []).flatMap { [$0.startsAt, $0.originalStartsAt ?? $0.startsAt] }
            let from = dates.min() ?? first
            let through = dates.max() ?? first
            if let range = zoneRanges[zone.identifier] {
                zoneRanges[zone.identifier] = (zone, min(range.from, from), max(range.through, through))
            } else {
                zoneRanges[zone.identifier] = (zone, from, through)
            }
        }
        for identifier in zoneRanges.keys.sorted() {
            guard let range = zoneRanges[identifier] else { continue }
            VTimeZone(zone: range.zone, from: range.from, through: range.through).write(into: &writer)
        }

        for event in single {
            writeEvent(event, zone: communities[event.communityID]?.zone ?? .gmt, into: &writer)
        }
        for (series, zone, first) in timedSeries {
            let instances = instancesBySeries[series.id] ?? []
            try writeSeries(series, zone: zone, first: first, cancelled: instances.filter { $0.deletedAt != nil }, into: &writer)
            for instance in instances where instance.deletedAt == nil {
                writeEvent(instance, zone: zone, overriding: series, into: &writer)
            }
        }
        writer.end("VCALENDAR")
        return writer.text
    }

    static func zone(of series: Event) -> TimeZone {
        series.recurrenceTimezone.flatMap(TimeZone.init(identifier:)) ?? .gmt
    }

    static func isUTC(_ zone: TimeZone) -> Bool { ["UTC", "GMT", "Etc/UTC", "Etc/GMT"].contains(zone.identifier) }

    /// A one-off event, or (with `overriding`) one occurrence of a series as it is now:
    /// `RECURRENCE-ID` names the occurrence's original start.
    private func writeEvent(_ event: Event, zone: TimeZone, overriding series: Event? = nil, into writer: inout ICalendarWriter) {
        writer.begin("VEVENT")
        writer.line("UID", Self.uid(series?.id ?? event.id))
        writeStamps(event, into: &writer)
        if let series, let original = event.originalStartsAt {
            time("RECURRENCE-ID", original, zone: zone, allDay: series.allDay, into: &writer)
        }
        if event.allDay {
            let days = Self.days(of: event, zone: zone)
            writer.line("DTSTART", ["VALUE": "DATE"], ICalendarWriter.date(days.first))
            writer.line("DTEND", ["VALUE": "DATE"], ICalendarWriter.date(days.afterLast))
        } else {
            // A one-off event's times are instants, written in UTC; an occurrence keeps its series' zone.
            let zone = series == nil ? TimeZone.gmt : zone
            time("DTSTART", event.startsAt, zone: zone, allDay: false, into: &writer)
            if let end = event.endsAt { time("DTEND", end, zone: zone, allDay: false, into: &writer) }
        }
        writeDetails(event, link: Self.appLink(series?.id ?? event.id, occurrence: series == nil ? nil : event.originalStartsAt), into: &writer)
        writer.end("VEVENT")
    }

    /// A series: its first occurrence, its rule, and the occurrences cancelled (`EXDATE`).
    private func writeSeries(_ series: Event, zone: TimeZone, first: Date, cancelled: [Event], into writer: inout ICalendarWriter) throws {
        var rule = try RecurrenceRule.parsed(series.recurrenceRule ?? "")
        // UNTIL has DTSTART's type (§3.3.10): a UTC time for a time of day, a date for a day.
        switch (rule.until, series.allDay) {
        case (.date(let day)?, false):
            rule.until = .instant(
                RecurringSeries.instant(for: LocalDateTime(date: day.adding(days: 1), hour: 0, minute: 0), in: zone).addingTimeInterval(-1))
        case (.instant(let instant)?, true):
            rule.until = .date(CivilDate(containing: instant, in: zone))
        default:
            break
        }
        writer.begin("VEVENT")
        writer.line("UID", Self.uid(series.id))
        writeStamps(series, into: &writer)
        // The first occurrence, which RFC 5545 counts as one whether or not the rule makes it.
        if series.allDay {
            let days = Self.days(of: series, zone: zone)
            let start = CivilDate(containing: first, in: zone)
            writer.line("DTSTART", ["VALUE": "DATE"], ICalendarWriter.date(start))
            writer.line("DTEND", ["VALUE": "DATE"], ICalendarWriter.date(start.adding(days: days.afterLast.dayNumber - days.first.dayNumber)))
        } else if Self.isUTC(zone) {
            time("DTSTART", first, zone: zone, allDay: false, into: &writer)
            if let end = series.endsAt {
                time("DTEND", first.addingTimeInterval(end.timeIntervalSince(series.startsAt)), zone: zone, allDay: false, into: &writer)
            }
        } else {
            // The series' own wall-clock time on the first occurrence's day: an occurrence in a
            // spring-forward gap is an instant of the next hour, but the rule repeats the series'
            // time of day (and RFC 5545 §3.3.5 resolves it in the gap the same way).
            let nominal = ICalendarWriter.wallClock(series.startsAt, in: zone)
            let day = ICalendarWriter.wallClock(first, in: zone).date
            let start = LocalDateTime(date: day, hour: nominal.hour, minute: nominal.minute, second: nominal.second)
            writer.line("DTSTART", ["TZID": zone.identifier], ICalendarWriter.compact(start))
            if let end = series.endsAt {
                let length = end.timeIntervalSince(series.startsAt)
                if ICalendarWriter.wallClock(first, in: zone) != start {
                    // DTSTART is a time the gap skips: a reader that subtracts it from a DTEND in
                    // local time would stretch the event by the hour the clocks jumped, so its
                    // length is given instead (§3.8.2.5; an exact duration, in seconds).
                    writer.line("DURATION", "PT\(Int64(length.rounded()))S")
                } else {
                    time("DTEND", first.addingTimeInterval(length), zone: zone, allDay: false, into: &writer)
                }
            }
        }
        writer.line("RRULE", rule.description)
        let exceptions = cancelled.compactMap(\.originalStartsAt).sorted()
        if !exceptions.isEmpty {
            if series.allDay {
                writer.line(
                    "EXDATE", ["VALUE": "DATE"], exceptions.map { ICalendarWriter.date(CivilDate(containing: $0, in: zone)) }.joined(separator: ","))
            } else if Self.isUTC(zone) {
                writer.line("EXDATE", exceptions.map(ICalendarWriter.utc).joined(separator: ","))
            } else {
                writer.line("EXDATE", ["TZID": zone.identifier], exceptions.map { ICalendarWriter.local($0, in: zone) }.joined(separator: ","))
            }
        }
        writeDetails(series, link: Self.appLink(series.id), into: &writer)
        writer.end("VEVENT")
    }

    private func writeStamps(_ event: Event, into writer: inout ICalendarWriter) {
        // Without METHOD, DTSTAMP is when the event was last revised (§3.8.7.2): here the event or
        // the owner's answer to it, whichever changed last. The feed's bytes, and so its ETag,
        // change only when what it shows does.
        let revised = max(event.updatedAt, answers[event.id]?.updatedAt ?? event.updatedAt)
        writer.line("DTSTAMP", ICalendarWriter.utc(revised))
        writer.line("CREATED", ICalendarWriter.utc(event.createdAt))
        writer.line("LAST-MODIFIED", ICalendarWriter.utc(revised))
    }

    private func writeDetails(_ event: Event, link: String, into writer: inout ICalendarWriter) {
        writer.line("SUMMARY", ICalendarWriter.escaped(event.title))
        let community = communities[event.communityID]?.name
        let description = [event.description, community.map { "\($0) on OrbitCove" }].compactMap { $0 }.filter { !$0.isEmpty }
        writer.line("DESCRIPTION", ICalendarWriter.escaped(description.joined(separator: "\n\n")))
        let location = [event.locationName, event.locationAddress].compactMap { $0 }.filter { !$0.isEmpty }
        if !location.isEmpty { writer.line("LOCATION", ICalendarWriter.escaped(location.joined(separator: ", "))) }
        if let latitude = event.locationLat, let longitude = event.locationLng {
            // FLOAT values (§3.3.7): digits and a point, never an exponent.
            writer.line("GEO", String(format: "%.6f;%.6f", latitude, longitude))
        }
        writer.line("CATEGORIES", ICalendarWriter.escaped(event.category.rawValue))
        writer.line("URL", ["VALUE": "URI"], link)
        writer.line("STATUS", "CONFIRMED")
        // The owner's own answer: X-ORBIT-RSVP (yes, no, maybe); an event they won't attend does
        // not make them busy.
        let answer = answers[event.id]?.status
        writer.line("TRANSP", answer == .no ? "TRANSPARENT" : "OPAQUE")
        if let answer { writer.line("X-ORBIT-RSVP", answer.rawValue) }
        writer.line("X-ORBIT-COMMUNITY-ID", event.communityID.description)
    }

    /// `DTSTART`-like: a date for an all-day event, else a UTC time, or the zone's wall-clock time.
    private func time(_ name: String, _ instant: Date, zone: TimeZone, allDay: Bool, into writer: inout ICalendarWriter) {
        if allDay {
            writer.line(name, ["VALUE": "DATE"], ICalendarWriter.date(CivilDate(containing: instant, in: zone)))
        } else if Self.isUTC(zone) {
            writer.line(name, ICalendarWriter.utc(instant))
        } else {
            writer.line(name, ["TZID": zone.identifier], ICalendarWriter.local(instant, in: zone))
        }
    }

    /// An all-day event's days: the first, and the day after the last (DTEND's date, §3.6.1).
    /// An end at midnight ends the day before.
    static func days(of event: Event, zone: TimeZone) -> (first: CivilDate, afterLast: CivilDate) {
        let first = CivilDate(containing: event.startsAt, in: zone)
        var last = first
        if let ends = event.endsAt, ends > event.startsAt {
            let local = ICalendarWriter.wallClock(ends, in: zone)
            last = max(first, local.secondsAsIfUTC % 86_400 == 0 ? local.date.adding(days: -1) : local.date)
        }
        return (first, last.adding(days: 1))
    }

    static func uid(_ event: EventID) -> String { "\(event)@orbitcove" }
}
