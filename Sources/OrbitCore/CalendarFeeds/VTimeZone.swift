import Foundation

/// A `VTIMEZONE` component (RFC 5545 §3.6.5) written from the system's time zone database, so that
/// a calendar without the zone (or with other rules for it) computes the same instants.
///
/// It covers the zone's transitions from the year before `from` to `yearsAhead` years after
/// `through`, each as the zone database has it. Transitions that follow one yearly rule (the same
/// month, weekday of the month, local time and offsets, year after year) become one observance
/// with an `RRULE`; the last such rule has no end, so a series further ahead still gets its
/// daylight-saving time. Zones whose rule is not "the n-th or last weekday of a month"
/// (Asia/Jerusalem's "the Friday before the last Sunday of March") are exact for the years covered
/// and approximate after them. An observance at the start of the range gives the offset before the
/// first transition.
struct VTimeZone {
    var zone: TimeZone
    var from: Date
    var through: Date

    /// One change of offset: when (UTC), the offsets before and after, and whether it begins
    /// daylight-saving time.
    private struct Onset {
        var instant: Date
        var offsetFrom: Int
        var offsetTo: Int
        var isDaylight: Bool

        /// The wall-clock time of the change in the offset before it, as `DTSTART` wants it.
        var local: LocalDateTime { LocalDateTime(secondsAsIfUTC: Int(instant.timeIntervalSince1970) + offsetFrom) }

        /// What one yearly rule keeps equal: offsets, month, weekday of the month, local time.
        var yearlyKey: [Int] {
            let local = self.local
            return [offsetFrom, offsetTo, local.date.month, local.date.weekday, Self.ordinal(of: local.date), local.secondsAsIfUTC % 86_400]
        }

        /// 1 = the first such weekday of its month … -1 = the last.
        static func ordinal(of date: CivilDate) -> Int {
            date.day + 7 > CivilDate.daysIn(year: date.year, month: date.month) ? -1 : (date.day - 1) / 7 + 1
        }
    }

    func write(into writer: inout ICalendarWriter) {
        let firstYear = CivilDate(containing: from).year - 1
        let lastYear = max(CivilDate(containing: through).year, firstYear) + Self.yearsAhead
        let rangeStart = Self.instant(year: firstYear)
        let rangeEnd = Self.instant(year: lastYear + 1)

        var onsets: [Onset] = []
        var cursor = rangeStart
        while onsets.count < 1000, let next = zone.nextDaylightSavingTimeTransition(after: cursor), next < rangeEnd {
            let before = zone.secondsFromGMT(for: next.addingTimeInterval(-1))
            let after = zone.secondsFromGMT(for: next)
            if before != after {
                onsets.append(Onset(instant: next, offsetFrom: before, offsetTo: after, isDaylight: zone.isDaylightSavingTime(for: next)))
            }
            cursor = next
        }

        writer.begin("VTIMEZONE")
        writer.line("TZID", zone.identifier)
        // The offset in force when the range begins.
        let initial = zone.secondsFromGMT(for: rangeStart)
        observance(
            [Onset(instant: rangeStart, offsetFrom: initial, offsetTo: initial, isDaylight: zone.isDaylightSavingTime(for: rangeStart))],
            open: false, into: &writer)
        // Runs of consecutive years following one yearly rule, per kind (daylight or standard).
        var runs: [[Onset]] = []
        for kind in [true, false] {
            var run: [Onset] = []
            for onset in onsets where onset.isDaylight == kind {
                if let last = run.last, last.yearlyKey == onset.yearlyKey, last.local.date.year + 1 == onset.local.date.year {
                    run.append(onset)
                } else {
                    if !run.isEmpty { runs.append(run) }
                    run = [onset]
                }
            }
            if !run.isEmpty { runs.append(run) }
        }
        for run in runs.sorted(by: { $0[0].instant < $1[0].instant }) {
            observance(run, open: run.count > 1 && run[run.count - 1].local.date.year == lastYear, into: &writer)
        }
        writer.end("VTIMEZONE")
    }

    /// A `STANDARD` or `DAYLIGHT` observance for one onset or a yearly run of them; an `open` run
    /// repeats without end.
    private func observance(_ run: [Onset], open: Bool, into writer: inout ICalendarWriter) {
        let first = run[0]
        let component = first.isDaylight ? "DAYLIGHT" : "STANDARD"
        writer.begin(component)
        writer.line("DTSTART", ICalendarWriter.compact(first.local))
        writer.line("TZOFFSETFROM", ICalendarWriter.offset(first.offsetFrom))
        writer.line("TZOFFSETTO", ICalendarWriter.offset(first.offsetTo))
        if run.count > 1, let last = run.last {
            let key = first.yearlyKey
            var rule = "FREQ=YEARLY;BYMONTH=\(key[2]);BYDAY=\(key[4])\(RecurrenceRule.weekdayCodes[key[3]])"
            // UNTIL in UTC (§3.6.5), a day after the last onset: some readers (Python's icalendar)
            // take it as local time, and the next onset is a year later either way.
            if !open { rule += ";UNTIL=" + ICalendarWriter.utc(last.instant.addingTimeInterval(86_400)) }
            writer.line("RRULE", rule)
        }
        writer.end(component)
    }

    /// How many years past `through` the transitions are written one by one (or as the runs they
    /// form): a calendar that uses this VTIMEZONE rather than its own zone of that name is exact
    /// that far.
    static let yearsAhead = 10

    private static func instant(year: Int) -> Date {
        Date(timeIntervalSince1970: TimeInterval(CivilDate(year: year, month: 1, day: 1).dayNumber * 86_400))
    }
}
