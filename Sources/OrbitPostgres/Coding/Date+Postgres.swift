public import struct Foundation.Date

/// `Date` travels as `timestamptz` with microsecond precision, PostgreSQL's own: in binary as
/// microseconds since 2000-01-01 UTC, and as ISO text in UTC in array parameters. Neither
/// depends on the server's `DateStyle` or `TimeZone`.
extension Date: PostgresArrayElement {
    public static var postgresType: PostgresType { .timestamptz }
    public static var postgresFormat: PostgresFormat { .binary }
    public static var postgresArrayType: PostgresType { .timestamptzArray }

    public func encode(into buffer: inout PostgresEncodingBuffer) throws {
        buffer.appendBigEndian(try microsecondsSince1970() - postgresEpochMicroseconds)
    }

    public func encodeArrayElement(into buffer: inout PostgresEncodingBuffer) throws {
        let micros = try microsecondsSince1970()
        let (days, microsOfDay) = floorDivision(micros, 86_400_000_000)
        var (year, month, day) = civilDate(fromDaysSince1970: days)
        let bc = year <= 0
        if bc { year = 1 - year }  // PostgreSQL has no year 0: 1 BC precedes 1 AD.
        buffer.appendPadded(year, width: 4)
        buffer.append(UInt8(ascii: "-"))
        buffer.appendPadded(month, width: 2)
        buffer.append(UInt8(ascii: "-"))
        buffer.appendPadded(day, width: 2)
        buffer.append(UInt8(ascii: " "))
        let secondsOfDay = microsOfDay / 1_000_000
        buffer.appendPadded(secondsOfDay / 3600, width: 2)
        buffer.append(UInt8(ascii: ":"))
        buffer.appendPadded(secondsOfDay / 60 % 60, width: 2)
        buffer.append(UInt8(ascii: ":"))
        buffer.appendPadded(secondsOfDay % 60, width: 2)
        let fraction = microsOfDay % 1_000_000
        if fraction != 0 {
            buffer.append(UInt8(ascii: "."))
            buffer.appendPadded(fraction, width: 6)
        }
        buffer.append("+00")
        if bc { buffer.append(" BC") }
    }

    /// The instant in whole microseconds since 1970-01-01 UTC, rounded to the nearest. Whole
    /// seconds and the fraction are converted apart, so far from 1970, where a Double holds
    /// fewer than microseconds, a whole second stays exact.
    private func microsecondsSince1970() throws -> Int64 {
        let seconds = timeIntervalSince1970
        guard seconds.isFinite, abs(seconds) < 9.0e12 else {
            throw PostgresError(code: .encoding, message: "a Date parameter is outside PostgreSQL's timestamp range")
        }
        let whole = seconds.rounded(.down)
        return Int64(whole) * 1_000_000 + Int64(((seconds - whole) * 1_000_000).rounded())
    }

    /// Decodes `timestamptz`, `timestamp` (read as UTC) and `date` (midnight UTC);
    /// `infinity` and `-infinity` become `distantFuture` and `distantPast`.
    public init(from value: PostgresValue) throws {
        try value.expect(.timestamptz, .timestamp, .date)
        if value.format == .binary {
            if value.type == .date {
                switch try value.bigEndian(Int32.self) {
                case .max: self = .distantFuture
                case .min: self = .distantPast
                case let days: self = Date(timeIntervalSince1970: Double((Int64(days) + postgresEpochDays) * 86_400))
                }
                return
            }
            switch try value.bigEndian(Int64.self) {
            case .max: self = .distantFuture
            case .min: self = .distantPast
            case let micros:
                let (seconds, fraction) = floorDivision(micros, 1_000_000)
                self = Date(secondsSince1970: seconds + postgresEpochDays * 86_400, microseconds: fraction)
            }
            return
        }
        var parser = DateTimeParser(bytes: value.bytes)
        guard let micros = parser.parse(dateOnly: value.type == .date) else {
            throw PostgresDecodingFailure("the value is not a date/time in ISO format (text results follow the server's DateStyle)")
        }
        switch micros {
        case .max: self = .distantFuture
        case .min: self = .distantPast
        default:
            let (seconds, fraction) = floorDivision(micros, 1_000_000)
            self = Date(secondsSince1970: seconds, microseconds: fraction)
        }
    }

    /// The instant `seconds` and `microseconds` (0..<1,000,000) after 1970-01-01 UTC, as close as
    /// a Date gets to it.
    init(secondsSince1970 seconds: Int64, microseconds: Int64) {
        if abs(seconds) < 9_000_000_000 {
            // Below 2^53 microseconds the count is exact as a Double: one rounding, to the nearest.
            self.init(timeIntervalSince1970: Double(seconds * 1_000_000 + microseconds) / 1_000_000)
        } else {
            self.init(timeIntervalSince1970: Double(seconds) + Double(microseconds) / 1_000_000)
        }
    }
}

/// Days from 1970-01-01 to 2000-01-01, where PostgreSQL's binary dates and timestamps count from.
let postgresEpochDays: Int64 = 10_957
/// The same in microseconds.
let postgresEpochMicroseconds: Int64 = postgresEpochDays * 86_400_000_000

extension PostgresEncodingBuffer {
    mutating func appendPadded(_ value: Int64, width: Int) {
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        for _ in digits..<max(width, digits) { append(UInt8(ascii: "0")) }
        appendDecimal(value)
    }
}

/// Floor division and its non-negative remainder.
@inline(__always)
func floorDivision(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
    let quotient = value >= 0 ? value / divisor : -((-value - 1) / divisor) - 1
    return (quotient, value - quotient * divisor)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
/// The one civil-date routine of the package: PostgreSQL's dates here, `CivilDate` in OrbitCore.
@inlinable
package func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (`civil_from_days`).
@inlinable
package func civilDate(fromDaysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
}

/// Reads PostgreSQL's ISO output: `2026-11-23 18:00:00.5+01:30`, `2026-11-23`, `… BC`, `infinity`.
struct DateTimeParser {
    let bytes: UnsafeRawBufferPointer
    var position = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Microseconds since 1970 UTC; `.max`/`.min` for ±infinity; nil if malformed.
    mutating func parse(dateOnly: Bool) -> Int64? {
        if matches("infinity") { return .max }
        if matches("-infinity") { return .min }
        guard var year = number(minDigits: 4, maxDigits: 7), consume("-"),
            let month = number(minDigits: 2, maxDigits: 2), consume("-"),
            let day = number(minDigits: 2, maxDigits: 2),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var micros: Int64 = 0
        if !dateOnly {
            guard consume(" "), let hour = number(minDigits: 2, maxDigits: 2), consume(":"),
                let minute = number(minDigits: 2, maxDigits: 2), consume(":"),
                let second = number(minDigits: 2, maxDigits: 2)
            else { return nil }
            micros = ((hour * 60 + minute) * 60 + second) * 1_000_000
            if consume(".") {
                var scale: Int64 = 100_000
                var digits = 0
                while let digit = peekDigit() {
                    position += 1
                    digits += 1
                    micros += digit * scale
                    scale /= 10
                }
                guard digits > 0, digits <= 6 else { return nil }
            }
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                let sign: Int64 = bytes[position] == UInt8(ascii: "-") ? -1 : 1
                position += 1
                guard let hours = number(minDigits: 2, maxDigits: 2) else { return nil }
                var offset = hours * 3600
                if consume(":") {
                    guard let minutes = number(minDigits: 2, maxDigits: 2) else { return nil }
                    offset += minutes * 60
                    if consume(":") {
                        guard let seconds = number(minDigits: 2, maxDigits: 2) else { return nil }
                        offset += seconds
                    }
                }
                micros -= sign * offset * 1_000_000
            }
        }
        if consume(" BC") { year = 1 - year }
        guard position == bytes.count else { return nil }
        let (dayMicros, overflow1) = daysSince1970(year: year, month: month, day: day).multipliedReportingOverflow(by: 86_400_000_000)
        let (total, overflow2) = dayMicros.addingReportingOverflow(micros)
        return overflow1 || overflow2 ? nil : total
    }

    private mutating func matches(_ word: StaticString) -> Bool {
        guard bytes.count == word.utf8CodeUnitCount else { return false }
        for index in 0..<bytes.count where bytes[index] != word.utf8Start[index] { return false }
        position = bytes.count
        return true
    }

    private mutating func consume(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        for index in 0..<count where bytes[position + index] != literal.utf8Start[index] { return false }
        position += count
        return true
    }

    private func peekDigit() -> Int64? {
        guard position < bytes.count else { return nil }
        let digit = bytes[position] &- UInt8(ascii: "0")
        return digit < 10 ? Int64(digit) : nil
    }

    private mutating func number(minDigits: Int, maxDigits: Int) -> Int64? {
        var value: Int64 = 0
        var digits = 0
        while digits < maxDigits, let digit = peekDigit() {
            value = value * 10 + digit
            position += 1
            digits += 1
        }
        return digits >= minDigits ? value : nil
    }
}
