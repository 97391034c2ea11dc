import Foundation

/// Writes iCalendar text (RFC 5545): content lines ending in CRLF, folded at 75 octets without
/// splitting a UTF-8 character (§3.1), TEXT values escaped (§3.3.11), date-times in UTC, as a
/// zone's wall-clock time for a `TZID`, or as dates.
struct ICalendarWriter {
    private(set) var text = ""

    /// `NAME;PARAM=value:value`, folded. Parameter values are quoted when they hold `:;,`.
    mutating func line(_ name: String, _ value: String) { line(name, [:], value) }

    mutating func line(_ name: String, _ parameters: KeyValuePairs<String, String>, _ value: String) {
        var line = name
        for (key, parameter) in parameters {
            let quoted = parameter.contains(where: { ":;,".contains($0) }) ? "\"\(parameter)\"" : parameter
            line += ";\(key)=\(quoted)"
        }
        line += ":" + value
        append(folding: line)
    }

    mutating func begin(_ component: String) { line("BEGIN", component) }
    mutating func end(_ component: String) { line("END", component) }

    /// A line of at most 75 octets, then continuation lines of a space and at most 74 octets.
    private mutating func append(folding line: String) {
        var octets = 0
        var limit = 75
        for character in line.unicodeScalars {
            let size = String(character).utf8.count
            if octets + size > limit {
                text += "\r\n "
                octets = 0
                limit = 74
            }
            text.unicodeScalars.append(character)
            octets += size
        }
        text += "\r\n"
    }

    /// A TEXT value: backslash, semicolon and comma escaped, line breaks as `\n`, other control
    /// characters (not allowed in TEXT) left out.
    static func escaped(_ value: String) -> String {
        var result = ""
        var scalars = value.unicodeScalars.makeIterator()
        var pending = scalars.next()
        while let scalar = pending {
            pending = scalars.next()
            switch scalar {
            case "\\": result += "\\\\"
            case ";": result += "\\;"
            case ",": result += "\\,"
            case "\r":
                result += "\\n"
                if pending == "\n" { pending = scalars.next() }
            case "\n": result += "\\n"
            case "\t": result.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F { continue }
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `20260305T170000Z`.
    static func utc(_ instant: Date) -> String { compact(LocalDateTime(secondsAsIfUTC: seconds(instant))) + "Z" }

    /// `20260305T180000`: the wall-clock time of `instant` in `zone`, for a `TZID` parameter.
    static func local(_ instant: Date, in zone: TimeZone) -> String { compact(wallClock(instant, in: zone)) }

    /// `20260305`.
    static func date(_ date: CivilDate) -> String { date.description.filter { $0 != "-" } }

    static func wallClock(_ instant: Date, in zone: TimeZone) -> LocalDateTime {
        LocalDateTime(secondsAsIfUTC: seconds(instant) + zone.secondsFromGMT(for: instant))
    }

    static func compact(_ local: LocalDateTime) -> String { local.description.filter { $0 != "-" && $0 != ":" } }

    /// `+0100`, `-0430`, with seconds when there are some (`+005328`, a historical mean time).
    static func offset(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let magnitude = abs(seconds)
        let hours = String(magnitude / 3600).leftPadded(2, "0")
        let minutes = String(magnitude % 3600 / 60).leftPadded(2, "0")
        let rest = magnitude % 60
        return sign + hours + minutes + (rest == 0 ? "" : String(rest).leftPadded(2, "0"))
    }

    private static func seconds(_ instant: Date) -> Int { Int(instant.timeIntervalSince1970.rounded(.down)) }
}
