package import Foundation

/// A recurrence rule anchored at a local start time in a time zone: the occurrences of a
/// recurring event.
///
/// Occurrences are computed on wall-clock dates in `timeZone` and then turned into instants, so
/// a weekly 6 pm practice stays at 6 pm local across daylight-saving changes. A local time that
/// does not exist (a spring-forward gap) uses the UTC offset before the gap; one that exists
/// twice (fall back) is the first of the two (RFC 5545 §3.3.5). The start itself is the first
/// occurrence only if the rule produces it (as python-dateutil does). Expansion is always
/// bounded by a count limit and, for rules that produce nothing, by a horizon of periods.
package struct RecurringSeries: Sendable {
    package var rule: RecurrenceRule
    package var start: LocalDateTime
    package var timeZone: TimeZone
    /// Occurrences to leave out (EXDATE), as instants. They still count towards COUNT.
    package var exceptions: Set<Date>

    package init(rule: RecurrenceRule, start: LocalDateTime, timeZone: TimeZone, exceptions: Set<Date> = []) {
        self.rule = rule
        self.start = start
        self.timeZone = timeZone
        self.exceptions = exceptions
    }

    /// Occurrences from `from` (inclusive) to `to` (inclusive), at most `limit` of them.
    package func occurrences(from: Date? = nil, to: Date? = nil, limit: Int) -> [Date] {
        var periods = 0
        return occurrences(from: from, to: to, limit: limit, periodsVisited: &periods)
    }

    /// `occurrences(from:to:limit:)`, counting the rule's periods (days, weeks, months or years)
    /// it looked at: what an expansion costs.
    package func occurrences(from: Date? = nil, to: Date? = nil, limit: Int, periodsVisited: inout Int) -> [Date] {
        guard limit > 0 else { return [] }
        let startInstant = Self.instant(for: start, in: timeZone)
        let matcher = DayMatcher(rule: rule, start: start.date)
        // The last local day that can hold an occurrence before `to` (zones are within ±1 day of UTC).
        let lastDay = to.map { Int(($0.timeIntervalSince1970 / 86_400).rounded(.down)) + 1 }
        var results: [Date] = []
        var produced = 0
        var emptyPeriods = 0
        // Without COUNT nothing before `from` matters: start at the period just before it.
        let firstPeriod =
            rule.count == nil
            ? from.map { matcher.period(before: $0, in: timeZone, interval: rule.interval, weekStart: rule.weekStart, start: start.date) } ?? 0 : 0
        for period in firstPeriod... {
            periodsVisited += 1
            let range = matcher.range(ofPeriod: period, interval: rule.interval, weekStart: rule.weekStart, start: start.date)
            if let lastDay, range.lowerBound > lastDay { break }
            var candidates = range.map(CivilDate.init(dayNumber:)).filter(matcher.matches)
            if candidates.isEmpty {
                emptyPeriods += 1
                if emptyPeriods > matcher.periodHorizon { break }
                continue
            }
            emptyPeriods = 0
            if !rule.bySetPosition.isEmpty { candidates = Self.select(rule.bySetPosition, from: candidates) }
            for day in candidates {
                let local = LocalDateTime(date: day, hour: start.hour, minute: start.minute, second: start.second)
                let instant = Self.instant(for: local, in: timeZone)
                if instant < startInstant { continue }
                switch rule.until {
                case .instant(let until)? where instant > until: return results
                case .date(let until)? where day > until: return results
                default: break
                }
                if let to, instant > to { return results }
                produced += 1
                if (from.map { instant >= $0 } ?? true) && !exceptions.contains(instant) {
                    results.append(instant)
                    if results.count >= limit { return results }
                }
                if let count = rule.count, produced >= count { return results }
            }
        }
        return results
    }

    /// BYSETPOS: the n-th (or n-th from last) of a period's candidates, in order, once each.
    static func select(_ positions: [Int], from candidates: [CivilDate]) -> [CivilDate] {
        var chosen = Set<CivilDate>()
        for position in positions {
            let index = position > 0 ? position - 1 : candidates.count + position
            if candidates.indices.contains(index) { chosen.insert(candidates[index]) }
        }
        return chosen.sorted()
    }

    /// The instant of a wall-clock time in `zone`: in a gap, with the offset before the gap; in
    /// an overlap, the first (earlier) of the two instants.
    package static func instant(for local: LocalDateTime, in zone: TimeZone) -> Date {
        let wall = local.secondsAsIfUTC
        func offset(at seconds: Int) -> Int { zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(seconds))) }
        let before = offset(at: wall - 86_400)
        let after = offset(at: wall + 86_400)
        // No transition within a day either side: the common case.
        if before == after { return Date(timeIntervalSince1970: TimeInterval(wall - before)) }
        let candidates = [wall - before, wall - after].filter { $0 + offset(at: $0) == wall }
        let seconds = candidates.min() ?? (wall - before)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}

/// Which days of a period a rule selects, after RFC 5545's defaults (and python-dateutil's):
/// with no BYDAY and no BYMONTHDAY, a yearly rule takes the start's month and day, a monthly one
/// the start's day of the month, a weekly one the start's weekday.
struct DayMatcher {
    let frequency: RecurrenceRule.Frequency
    let months: Set<Int>
    let monthDays: Set<Int>
    let weekdays: Set<Int>
    let numberedWeekdays: [RecurrenceRule.WeekdayNumber]

    init(rule: RecurrenceRule, start: CivilDate) {
        frequency = rule.frequency
        var months = Set(rule.byMonth)
        var monthDays = Set(rule.byMonthDay)
        var weekdays = Set<Int>()
        var numbered: [RecurrenceRule.WeekdayNumber] = []
        for day in rule.byDay {
            if day.ordinal != nil && (rule.frequency == .monthly || rule.frequency == .yearly) {
                numbered.append(day)
            } else {
                weekdays.insert(day.weekday)
            }
        }
        if rule.byDay.isEmpty && rule.byMonthDay.isEmpty {
            switch rule.frequency {
            case .yearly:
                if months.isEmpty { months = [start.month] }
                monthDays = [start.day]
            case .monthly:
                monthDays = [start.day]
            case .weekly:
                weekdays = [start.weekday]
            case .daily:
                break
            }
        }
        self.months = months
        self.monthDays = monthDays
        self.weekdays = weekdays
        self.numberedWeekdays = numbered
    }

    /// The day numbers of period number `period` (0 = the one holding the start).
    func range(ofPeriod period: Int, interval: Int, weekStart: Int, start: CivilDate) -> ClosedRange<Int> {
        switch frequency {
        case .daily:
            let day = start.dayNumber + period * interval
            return day...day
        case .weekly:
            let first = start.dayNumber - (start.weekday - weekStart + 7) % 7 + 7 * period * interval
            return first...(first + 6)
        case .monthly:
            let index = start.year * 12 + (start.month - 1) + period * interval
            let (year, month) = (index / 12, index % 12 + 1)
            let first = CivilDate(year: year, month: month, day: 1).dayNumber
            return first...(first + CivilDate.daysIn(year: year, month: month) - 1)
        case .yearly:
            let year = start.year + period * interval
            return CivilDate(year: year, month: 1, day: 1).dayNumber...CivilDate(year: year, month: 12, day: 31).dayNumber
        }
    }

    /// A period index at or before the one holding `instant` (0 at the earliest).
    func period(before instant: Date, in zone: TimeZone, interval: Int, weekStart: Int, start: CivilDate) -> Int {
        let local = Int(instant.timeIntervalSince1970.rounded(.down)) + zone.secondsFromGMT(for: instant)
        let day = CivilDate(dayNumber: (local >= 0 ? local : local - 86_399) / 86_400)
        let elapsed: Int
        switch frequency {
        case .daily: elapsed = (day.dayNumber - start.dayNumber) / interval
        case .weekly:
            let firstWeek = start.dayNumber - (start.weekday - weekStart + 7) % 7
            elapsed = (day.dayNumber - firstWeek) / 7 / interval
        case .monthly: elapsed = ((day.year * 12 + day.month) - (start.year * 12 + start.month)) / interval
        case .yearly: elapsed = (day.year - start.year) / interval
        }
        return max(0, elapsed - 1)
    }

    /// The Gregorian calendar repeats every 400 years (146,097 days, exactly 20,871 weeks, 4,800
    /// months): a rule that has matched nothing for that many periods in a row never will again.
    var periodHorizon: Int {
        switch frequency {
        case .daily: 146_097
        case .weekly: 20_871
        case .monthly: 4_800
        case .yearly: 400
        }
    }

    func matches(_ day: CivilDate) -> Bool {
        if !months.isEmpty && !months.contains(day.month) { return false }
        if !monthDays.isEmpty {
            let fromEnd = day.day - CivilDate.daysIn(year: day.year, month: day.month) - 1
            if !monthDays.contains(day.day) && !monthDays.contains(fromEnd) { return false }
        }
        if !weekdays.isEmpty && !weekdays.contains(day.weekday) { return false }
        if !numberedWeekdays.isEmpty {
            // Ordinals count within the month for monthly rules and yearly rules with BYMONTH,
            // within the year otherwise.
            let withinMonth = frequency == .monthly || (frequency == .yearly && !months.isEmpty)
            let first = withinMonth ? CivilDate(year: day.year, month: day.month, day: 1) : CivilDate(year: day.year, month: 1, day: 1)
            let last =
                withinMonth
                ? CivilDate(year: day.year, month: day.month, day: CivilDate.daysIn(year: day.year, month: day.month))
                : CivilDate(year: day.year, month: 12, day: 31)
            let fromStart = (day.dayNumber - first.dayNumber) / 7 + 1
            let fromEnd = -((last.dayNumber - day.dayNumber) / 7 + 1)
            let matched = numberedWeekdays.contains { $0.weekday == day.weekday && ($0.ordinal == fromStart || $0.ordinal == fromEnd) }
            if !matched { return false }
        }
        return true
    }
}
