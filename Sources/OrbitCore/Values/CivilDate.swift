package import Foundation
package import OrbitPostgres

/// A day of the proleptic Gregorian calendar, with the arithmetic recurrence needs (days since
/// 1970-01-01, weekdays, month lengths), free of time zones: a due date, an expense's date.
/// In JSON and in PostgreSQL's text form it is `YYYY-MM-DD`.
package struct CivilDate: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    package var year: Int
    package var month: Int
    package var day: Int

    package init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Days since 1970-01-01 (OrbitPostgres's `daysSince1970`, Howard Hinnant's days_from_civil).
    package var dayNumber: Int {
        Int(daysSince1970(year: Int64(year), month: Int64(month), day: Int64(day)))
    }

    package init(dayNumber: Int) {
        let (year, month, day) = civilDate(fromDaysSince1970: Int64(dayNumber))
        self.init(year: Int(year), month: Int(month), day: Int(day))
    }

    /// 0 = Monday … 6 = Sunday (1970-01-01 was a Thursday).
    package var weekday: Int { ((dayNumber % 7) + 7 + 3) % 7 }

    package func adding(days: Int) -> CivilDate { CivilDate(dayNumber: dayNumber + days) }

    static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Parses `YYYY-MM-DD` exactly (four-digit year, two-digit month and day, a real day).
    package init?(parsing text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
        else { return nil }
        self.init(year: year, month: month, day: day)
        guard isValid else { return nil }
    }

    /// Parses `YYYY-MM-DD`, or refuses it as the value of `field`.
    /// - Throws: `ServiceError.invalidInput(field:)`.
    package static func parse(_ text: String, field: String) throws -> CivilDate {
        guard let date = CivilDate(parsing: text) else {
            throw ServiceError.invalidInput(field: field, reason: "must be a date such as 2026-12-31")
        }
        return date
    }

    /// The UTC day `instant` falls on.
    package init(containing instant: Date) {
        self.init(dayNumber: Int((instant.timeIntervalSince1970 / 86_400).rounded(.down)))
    }

    /// The day `instant` falls on in `zone` (a community's "today").
    package init(containing instant: Date, in zone: TimeZone) {
        let local = instant.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: instant))
        self.init(dayNumber: Int((local / 86_400).rounded(.down)))
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = CivilDate(parsing: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "must be a date such as 2026-12-31")
        }
        self = date
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    package var isValid: Bool { (1...12).contains(month) && day >= 1 && day <= Self.daysIn(year: year, month: month) }

    package static func < (lhs: CivilDate, rhs: CivilDate) -> Bool { lhs.dayNumber < rhs.dayNumber }

    package var description: String {
        let y = String(year).leftPadded(4, "0")
        return "\(y)-\(String(month).leftPadded(2, "0"))-\(String(day).leftPadded(2, "0"))"
    }
}

/// A wall-clock date and time with no zone: `2026-03-03T18:00` in the community's time zone.
package struct LocalDateTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    package var date: CivilDate
    package var hour: Int
    package var minute: Int
    package var second: Int

    package init(date: CivilDate, hour: Int, minute: Int, second: Int = 0) {
        self.date = date
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// Parses `YYYY-MM-DDTHH:MM[:SS]` (also with a space for the `T`).
    package init?(parsing text: String) {
        let parts = text.split(whereSeparator: { $0 == "T" || $0 == " " })
        guard parts.count == 2 else { return nil }
        let dateParts = parts[0].split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        let timeParts = parts[1].split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard dateParts.count == 3, (2...3).contains(timeParts.count),
            let year = dateParts[0], let month = dateParts[1], let day = dateParts[2],
            let hour = timeParts[0], let minute = timeParts[1]
        else { return nil }
        let second = timeParts.count == 3 ? timeParts[2] : 0
        let date = CivilDate(year: year, month: month, day: day)
        guard let second, date.isValid, (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second) else { return nil }
        self.init(date: date, hour: hour, minute: minute, second: second)
    }

    /// Seconds since 1970-01-01T00:00 as if this wall-clock time were UTC.
    var secondsAsIfUTC: Int { date.dayNumber * 86_400 + hour * 3600 + minute * 60 + second }

    init(secondsAsIfUTC seconds: Int) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = seconds - days * 86_400
        self.init(date: CivilDate(dayNumber: days), hour: rest / 3600, minute: rest % 3600 / 60, second: rest % 60)
    }

    package static func < (lhs: LocalDateTime, rhs: LocalDateTime) -> Bool { lhs.secondsAsIfUTC < rhs.secondsAsIfUTC }

    package var description: String {
        "\(date)T\(String(hour).leftPadded(2, "0")):\(String(minute).leftPadded(2, "0")):\(String(second).leftPadded(2, "0"))"
    }
}

extension String {
    func leftPadded(_ width: Int, _ pad: Character) -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}

extension CivilDate: PostgresEncodable, PostgresDecodable {
    /// Sent as a binary `date`: days since 2000-01-01, PostgreSQL's epoch.
    package static var postgresType: PostgresType { .date }
    package static var postgresFormat: PostgresFormat { .binary }

    private static let postgresEpochDayNumber = CivilDate(year: 2000, month: 1, day: 1).dayNumber

    package func encode(into buffer: inout PostgresEncodingBuffer) throws {
        // ±infinity are Int32.max and .min; PostgreSQL refuses other days outside its range.
        guard let days = Int32(exactly: dayNumber - Self.postgresEpochDayNumber), days != .max, days != .min else {
            throw PostgresError(code: .encoding, message: "a date parameter is outside PostgreSQL's date range")
        }
        buffer.appendBigEndian(days)
    }

    /// Reads a `date` column (binary, or ISO text from `executeScript`), or `YYYY-MM-DD` text.
    package init(from value: PostgresValue) throws {
        try value.expect(.date, .text, .varchar)
        if value.type == .date && value.format == .binary {
            let days = try value.bigEndian(Int32.self)
            guard days != .max, days != .min else {
                throw PostgresDecodingFailure("\(days == .max ? "infinity" : "-infinity") is not a calendar date")
            }
            self.init(dayNumber: Int(days) + Self.postgresEpochDayNumber)
            return
        }
        guard let date = CivilDate(parsing: value.string) else {
            throw PostgresDecodingFailure("\(value.string) is not a YYYY-MM-DD date")
        }
        self = date
    }
}
