package import Foundation

/// Why a recurrence rule was refused: the part (`BYDAY`, `FREQ`, …) and what is wrong with it.
package struct RecurrenceError: Error, Sendable, Equatable, CustomStringConvertible {
    package var part: String
    package var reason: String

    package var description: String { "\(part) \(reason)" }
}

/// An iCalendar recurrence rule (RFC 5545 §3.3.10), the subset OrbitCove supports:
/// FREQ=DAILY/WEEKLY/MONTHLY/YEARLY, INTERVAL, COUNT, UNTIL, BYDAY (with ordinals such as
/// `2MO`, `-1FR` for monthly and yearly rules), BYMONTHDAY (negative counts from the month's
/// end), BYMONTH, BYSETPOS and WKST. Anything else is refused with an error naming the part.
package struct RecurrenceRule: Sendable, Equatable, CustomStringConvertible {
    package enum Frequency: String, Sendable, CaseIterable {
        case daily = "DAILY", weekly = "WEEKLY", monthly = "MONTHLY", yearly = "YEARLY"
    }

    /// 0 = Monday … 6 = Sunday, as `CivilDate.weekday`.
    package static let weekdayCodes = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]

    package struct WeekdayNumber: Sendable, Equatable {
        package var weekday: Int
        /// 1 = the first in the month (or year), -1 = the last; nil = every one.
        package var ordinal: Int?
    }

    package enum Until: Sendable, Equatable {
        /// `UNTIL=20261224T000000Z`: an instant.
        case instant(Date)
        /// `UNTIL=20261224`: through the end of that local day.
        case date(CivilDate)
    }

    package var frequency: Frequency
    package var interval = 1
    package var count: Int?
    package var until: Until?
    package var byDay: [WeekdayNumber] = []
    package var byMonthDay: [Int] = []
    package var byMonth: [Int] = []
    package var bySetPosition: [Int] = []
    package var weekStart = 0

    /// Parses `FREQ=WEEKLY;BYDAY=TU` (an `RRULE:` prefix is accepted).
    /// - Throws: `RecurrenceError` naming the offending part.
    package init(parsing text: String) throws {
        var body = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if body.uppercased().hasPrefix("RRULE:") { body = String(body.dropFirst(6)) }
        guard !body.isEmpty else { throw RecurrenceError(part: "RRULE", reason: "is empty") }
        var seen = Set<String>()
        var frequency: Frequency?
        var rule = RecurrenceRule(frequency: .daily)
        for item in body.split(separator: ";", omittingEmptySubsequences: true) {
            let pieces = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pieces[0]).uppercased().trimmingCharacters(in: .whitespaces)
            guard pieces.count == 2, !pieces[1].isEmpty else { throw RecurrenceError(part: name, reason: "has no value") }
            let value = String(pieces[1]).uppercased().trimmingCharacters(in: .whitespaces)
            guard seen.insert(name).inserted else { throw RecurrenceError(part: name, reason: "appears twice") }
            switch name {
            case "FREQ":
                guard let parsed = Frequency(rawValue: value) else {
                    throw RecurrenceError(part: "FREQ", reason: "\(value) is not supported (DAILY, WEEKLY, MONTHLY or YEARLY)")
                }
                frequency = parsed
            case "INTERVAL":
                rule.interval = try Self.integer(value, part: name, in: 1...1000)
            case "COUNT":
                rule.count = try Self.integer(value, part: name, in: 1...10_000)
            case "UNTIL":
                rule.until = try Self.until(value)
            case "BYDAY":
                rule.byDay = try value.split(separator: ",").map { try Self.weekdayNumber(String($0)) }
            case "BYMONTHDAY":
                rule.byMonthDay = try Self.integers(value, part: name, in: -31...31)
            case "BYMONTH":
                rule.byMonth = try Self.integers(value, part: name, in: 1...12)
            case "BYSETPOS":
                rule.bySetPosition = try Self.integers(value, part: name, in: -366...366)
            case "WKST":
                guard let day = Self.weekdayCodes.firstIndex(of: value) else {
                    throw RecurrenceError(part: "WKST", reason: "must be one of MO, TU, WE, TH, FR, SA, SU")
                }
                rule.weekStart = day
            case "BYSECOND", "BYMINUTE", "BYHOUR", "BYYEARDAY", "BYWEEKNO", "RSCALE", "SKIP":
                throw RecurrenceError(part: name, reason: "is not supported")
            default:
                throw RecurrenceError(part: name, reason: "is not a recurrence rule part")
            }
        }
        guard let frequency else { throw RecurrenceError(part: "FREQ", reason: "is missing") }
        rule.frequency = frequency
        try rule.check()
        self = rule
    }

    package init(frequency: Frequency) {
        self.frequency = frequency
    }

    /// Combinations RFC 5545 forbids or this implementation does not support.
    private func check() throws {
        if count != nil && until != nil { throw RecurrenceError(part: "COUNT", reason: "and UNTIL cannot both be given") }
        if frequency == .weekly && !byMonthDay.isEmpty {
            throw RecurrenceError(part: "BYMONTHDAY", reason: "cannot be used with FREQ=WEEKLY")
        }
        for day in byDay {
            guard let ordinal = day.ordinal else { continue }
            switch frequency {
            case .daily, .weekly:
                throw RecurrenceError(part: "BYDAY", reason: "takes ordinals (such as 2MO) only with FREQ=MONTHLY or YEARLY")
            case .monthly where abs(ordinal) > 5, .yearly where !byMonth.isEmpty && abs(ordinal) > 5:
                throw RecurrenceError(part: "BYDAY", reason: "ordinal \(ordinal) is out of range (-5 to 5 within a month)")
            case .yearly where abs(ordinal) > 53:
                throw RecurrenceError(part: "BYDAY", reason: "ordinal \(ordinal) is out of range (-53 to 53 within a year)")
            default:
                break
            }
        }
        if byMonthDay.contains(0) { throw RecurrenceError(part: "BYMONTHDAY", reason: "cannot be 0") }
        if bySetPosition.contains(0) { throw RecurrenceError(part: "BYSETPOS", reason: "cannot be 0") }
        if !bySetPosition.isEmpty && byDay.isEmpty && byMonthDay.isEmpty && byMonth.isEmpty {
            throw RecurrenceError(part: "BYSETPOS", reason: "needs another BYxxx part to select from")
        }
    }

    private static func integer(_ value: String, part: String, in range: ClosedRange<Int>) throws -> Int {
        guard let number = Int(value), range.contains(number) else {
            throw RecurrenceError(part: part, reason: "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    private static func integers(_ value: String, part: String, in range: ClosedRange<Int>) throws -> [Int] {
        try value.split(separator: ",", omittingEmptySubsequences: false).map { try integer(String($0), part: part, in: range) }
    }

    private static func weekdayNumber(_ text: String) throws -> WeekdayNumber {
        guard text.count >= 2, let weekday = weekdayCodes.firstIndex(of: String(text.suffix(2))) else {
            throw RecurrenceError(part: "BYDAY", reason: "\(text) is not a weekday such as MO, 2TU or -1FR")
        }
        let prefix = text.dropLast(2)
        if prefix.isEmpty { return WeekdayNumber(weekday: weekday, ordinal: nil) }
        guard let ordinal = Int(prefix.hasPrefix("+") ? String(prefix.dropFirst()) : String(prefix)), ordinal != 0 else {
            throw RecurrenceError(part: "BYDAY", reason: "\(text) has an invalid ordinal")
        }
        return WeekdayNumber(weekday: weekday, ordinal: ordinal)
    }

    private static func until(_ value: String) throws -> Until {
        let digits = value.filter(\.isNumber)
        func number(_ range: Range<Int>) -> Int? {
            let characters = Array(digits)
            guard range.upperBound <= characters.count else { return nil }
            return Int(String(characters[range]))
        }
        if value.count == 8, let year = number(0..<4), let month = number(4..<6), let day = number(6..<8) {
            let date = CivilDate(year: year, month: month, day: day)
            if date.isValid { return .date(date) }
        }
        if value.count == 16, value.hasSuffix("Z"), Array(value)[8] == "T",
            let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
            let hour = number(8..<10), let minute = number(10..<12), let second = number(12..<14),
            CivilDate(year: year, month: month, day: day).isValid, hour < 24, minute < 60, second < 60
        {
            let local = LocalDateTime(date: CivilDate(year: year, month: month, day: day), hour: hour, minute: minute, second: second)
            return .instant(Date(timeIntervalSince1970: TimeInterval(local.secondsAsIfUTC)))
        }
        throw RecurrenceError(part: "UNTIL", reason: "must be a UTC date-time such as 20261224T000000Z, or a date such as 20261224")
    }

    /// The rule in canonical form (upper-case, fixed part order), as stored.
    package var description: String {
        var parts = ["FREQ=\(frequency.rawValue)"]
        if interval != 1 { parts.append("INTERVAL=\(interval)") }
        if let count { parts.append("COUNT=\(count)") }
        switch until {
        case .instant(let date)?:
            let local = LocalDateTime(secondsAsIfUTC: Int(date.timeIntervalSince1970.rounded(.down)))
            parts.append("UNTIL=" + local.description.filter { $0 != "-" && $0 != ":" } + "Z")
        case .date(let date)?:
            parts.append("UNTIL=" + date.description.filter { $0 != "-" })
        case nil:
            break
        }
        if !byMonth.isEmpty { parts.append("BYMONTH=" + byMonth.map(String.init).joined(separator: ",")) }
        if !byMonthDay.isEmpty { parts.append("BYMONTHDAY=" + byMonthDay.map(String.init).joined(separator: ",")) }
        if !byDay.isEmpty {
            parts.append("BYDAY=" + byDay.map { ($0.ordinal.map(String.init) ?? "") + Self.weekdayCodes[$0.weekday] }.joined(separator: ","))
        }
        if !bySetPosition.isEmpty { parts.append("BYSETPOS=" + bySetPosition.map(String.init).joined(separator: ",")) }
        if weekStart != 0 { parts.append("WKST=" + Self.weekdayCodes[weekStart]) }
        return parts.joined(separator: ";")
    }
}

extension RecurrenceRule {
    /// `text` parsed at the edge (an API body, a command's option) into the rule the services
    /// take; a malformed rule is an input error naming `field`.
    package static func parse(_ text: String, field: String = "recurrence_rule") throws -> RecurrenceRule {
        do {
            return try RecurrenceRule(parsing: text)
        } catch let error as RecurrenceError {
            throw ServiceError.invalidInput(field: field, reason: error.description)
        }
    }
}
