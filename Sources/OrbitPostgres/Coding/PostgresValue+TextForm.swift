import Foundation

extension PostgresValue {
    /// The value as PostgreSQL prints it in text, whatever format it arrived in.
    ///
    /// Text values are returned as they are. Binary values of the text-like types (`text`,
    /// `varchar`, `char(n)`, `name`, `json`, enum labels and other types created in the database)
    /// are their UTF-8 bytes; `jsonb` drops its version byte. The built-in types this client
    /// knows are printed as the server prints them with `DateStyle` ISO and `extra_float_digits`
    /// 1 (its default): integers, `oid`, `numeric` (scale included), `boolean` (`t`/`f`), `uuid`,
    /// `real`, `double precision`, `bytea` (hex), `"char"`, `date`, `time`, `timestamp`,
    /// `interval` (`IntervalStyle` postgres) and arrays of all these; `timestamptz` is printed in
    /// UTC (`+00`), whatever the session's `TimeZone`.
    ///
    /// - Throws: `PostgresDecodingFailure` for a binary built-in type it cannot print (`inet`,
    ///   geometric types, …): cast the column to `text` in the SQL instead.
    func textForm() throws -> String {
        if format == .text { return string }
        switch type {
        case .text, .varchar, .bpchar, .name, .unknown, .json, .xml:
            return string
        case .jsonb:
            guard bytes.first == 1 else { throw PostgresDecodingFailure("the binary jsonb value does not start with version 1") }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes.dropFirst()), as: UTF8.self)
        case .int2, .int4, .int8, .oidType:
            return String(try decodeInteger(self, min: .min, max: .max))
        case .bool:
            return try Bool(from: self) ? "t" : "f"
        case .float8:
            return PostgresFloatText.format(Double(bitPattern: try bigEndian(UInt64.self)), exponentThreshold: 15)
        case .float4:
            let value = Float(bitPattern: try bigEndian(UInt32.self))
            return PostgresFloatText.format(value, exponentThreshold: 6)
        case .numeric:
            return try PostgresNumeric(binary: bytes).description
        case .uuid:
            var text = PostgresEncodingBuffer(bytes: [])
            try UUID(from: self).encodeArrayElement(into: &text)
            return String(decoding: text.bytes, as: UTF8.self)
        case .bytea:
            var text = PostgresEncodingBuffer(bytes: [])
            Data(bytes).encodeArrayElement(into: &text)
            return String(decoding: text.bytes, as: UTF8.self)
        case .char:
            return try characterText()
        case .date:
            return try dateText()
        case .timestamp, .timestamptz:
            return try timestampText()
        case .time:
            return timeText(microseconds: try bigEndian(Int64.self))
        case .interval:
            return try intervalText()
        case .void:
            return ""
        default:
            if type.arrayElementType != nil {
                return try arrayText()
            }
            // A type created in the database: an enum sends its label, an extension type such as
            // citext its text. PostgreSQL text never holds a NUL byte, so one means binary data,
            // such as an array of an enum.
            if type.oid >= PostgresType.firstNormalOID {
                return bytes.contains(0) ? try arrayText() : string
            }
            throw PostgresDecodingFailure("this client cannot print a binary \(type) value; cast the column to text in the SQL")
        }
    }

    /// `"char"`: one byte; PostgreSQL prints a zero byte as nothing and a high byte in octal.
    private func characterText() throws -> String {
        guard bytes.count <= 1 else { throw PostgresDecodingFailure("the binary \"char\" value has \(bytes.count) bytes") }
        guard let byte = bytes.first, byte != 0 else { return "" }
        if byte < 0x80 { return String(UnicodeScalar(byte)) }
        return "\\" + String(byte >> 6) + String(byte >> 3 & 7) + String(byte & 7)
    }

    private func dateText() throws -> String {
        switch try bigEndian(Int32.self) {
        case .max: return "infinity"
        case .min: return "-infinity"
        case let days:
            var text = PostgresEncodingBuffer(bytes: [])
            let bc = text.appendISODate(daysSince1970: Int64(days) + postgresEpochDays)
            if bc { text.append(" BC") }
            return String(decoding: text.bytes, as: UTF8.self)
        }
    }

    private func timestampText() throws -> String {
        let micros = try bigEndian(Int64.self)
        switch micros {
        case .max: return "infinity"
        case .min: return "-infinity"
        default: break
        }
        let (days, microsOfDay) = floorDivision(micros, 86_400_000_000)
        var text = PostgresEncodingBuffer(bytes: [])
        let bc = text.appendISODate(daysSince1970: days + postgresEpochDays)
        text.append(UInt8(ascii: " "))
        text.append(timeText(microseconds: microsOfDay))
        if type == .timestamptz { text.append("+00") }
        if bc { text.append(" BC") }
        return String(decoding: text.bytes, as: UTF8.self)
    }

    /// `HH:MM:SS` and, when not zero, the fraction without trailing zeros.
    private func timeText(microseconds: Int64) -> String {
        var text = PostgresEncodingBuffer(bytes: [])
        let seconds = microseconds / 1_000_000
        text.appendPadded(seconds / 3600, width: 2)
        text.append(UInt8(ascii: ":"))
        text.appendPadded(seconds / 60 % 60, width: 2)
        text.append(UInt8(ascii: ":"))
        text.appendPadded(seconds % 60, width: 2)
        text.appendFraction(microseconds % 1_000_000)
        return String(decoding: text.bytes, as: UTF8.self)
    }

    /// `interval` as `IntervalStyle` postgres prints it: `1 year 2 mons -3 days +04:05:06.5`.
    private func intervalText() throws -> String {
        var reader = BinaryReader(bytes)
        let time = try reader.read(Int64.self)
        let days = try reader.read(Int32.self)
        let months = try reader.read(Int32.self)
        try reader.expectEnd()
        var text = PostgresEncodingBuffer(bytes: [])
        var isZero = true
        var isBefore = false
        func addPart(_ value: Int64, _ unit: String) {
            guard value != 0 else { return }
            if !isZero { text.append(UInt8(ascii: " ")) }
            if isBefore && value > 0 { text.append(UInt8(ascii: "+")) }
            text.appendDecimal(value)
            text.append(" " + unit + (value == 1 ? "" : "s"))
            isBefore = value < 0
            isZero = false
        }
        addPart(Int64(months / 12), "year")
        addPart(Int64(months % 12), "mon")
        addPart(Int64(days), "day")
        if isZero || time != 0 {
            if !isZero { text.append(UInt8(ascii: " ")) }
            if time < 0 {
                text.append(UInt8(ascii: "-"))
            } else if isBefore {
                text.append(UInt8(ascii: "+"))
            }
            let magnitude = Int64(time.magnitude / 1_000_000)
            text.appendPadded(magnitude / 3600, width: 2)
            text.append(UInt8(ascii: ":"))
            text.appendPadded(magnitude / 60 % 60, width: 2)
            text.append(UInt8(ascii: ":"))
            text.appendPadded(magnitude % 60, width: 2)
            text.appendFraction(Int64(time.magnitude % 1_000_000))
        }
        return String(decoding: text.bytes, as: UTF8.self)
    }

    /// An array as `array_out` prints it: `{1,2}`, `{{a,b},{c,NULL}}`, `[0:1]={x,"y z"}`.
    private func arrayText() throws -> String {
        let array = try BinaryArray(self)
        guard !array.dimensions.isEmpty, !array.dimensions.contains(where: { $0.count == 0 }) else { return "{}" }
        var text = ""
        if array.dimensions.contains(where: { $0.lowerBound != 1 }) {
            for dimension in array.dimensions {
                text += "[\(dimension.lowerBound):\(Int(dimension.lowerBound) + dimension.count - 1)]"
            }
            text += "="
        }
        // Indices of the current element in each dimension, to open and close the braces.
        var indices = [Int](repeating: 0, count: array.dimensions.count)
        text += String(repeating: "{", count: array.dimensions.count)
        try array.forEachElement { element in
            if let element {
                let value = try PostgresValue(bytes: element, type: array.elementType, format: .binary).textForm()
                text += Self.quotedArrayElement(value)
            } else {
                text += "NULL"
            }
            var level = array.dimensions.count - 1
            indices[level] += 1
            var closed = 0
            while level >= 0, indices[level] == array.dimensions[level].count {
                text += "}"
                closed += 1
                indices[level] = 0
                level -= 1
                if level >= 0 { indices[level] += 1 }
            }
            if level >= 0 {
                text += "," + String(repeating: "{", count: closed)
            }
        }
        return text
    }

    /// Quotes an element as `array_out` does: when it is empty, `NULL` in any case, or holds a
    /// quote, a backslash, a brace, a comma or white space.
    private static func quotedArrayElement(_ element: String) -> String {
        let special = element.utf8.contains { byte in
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: ","),
                UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), 0x0B, 0x0C:
                true
            default: false
            }
        }
        guard special || element.isEmpty || element.uppercased() == "NULL" else { return element }
        var quoted = "\""
        for character in element.unicodeScalars {
            if character == "\"" || character == "\\" { quoted.unicodeScalars.append("\\") }
            quoted.unicodeScalars.append(character)
        }
        return quoted + "\""
    }
}

extension PostgresEncodingBuffer {
    /// Appends `YYYY-MM-DD` (the year of a BC date counted back from 1 BC) and says whether the
    /// date is BC.
    mutating func appendISODate(daysSince1970 days: Int64) -> Bool {
        var (year, month, day) = civilDate(fromDaysSince1970: days)
        let bc = year <= 0
        if bc { year = 1 - year }  // PostgreSQL has no year 0: 1 BC precedes 1 AD.
        appendPadded(year, width: 4)
        append(UInt8(ascii: "-"))
        appendPadded(month, width: 2)
        append(UInt8(ascii: "-"))
        appendPadded(day, width: 2)
        return bc
    }

    /// Appends `.` and the microseconds without trailing zeros, or nothing for zero.
    mutating func appendFraction(_ microseconds: Int64) {
        guard microseconds != 0 else { return }
        var fraction = microseconds
        var width = 6
        while fraction % 10 == 0 {
            fraction /= 10
            width -= 1
        }
        append(UInt8(ascii: "."))
        appendPadded(fraction, width: width)
    }
}

/// PostgreSQL's text form of `real` and `double precision` (`extra_float_digits` 1, the default
/// since PostgreSQL 12): the shortest digits that read back as the same value, in plain notation
/// for decimal exponents from -4 up to the threshold (15 for double, 6 for real), otherwise
/// as `1.5e+20`.
enum PostgresFloatText {
    static func format<Value: BinaryFloatingPoint & CustomStringConvertible>(_ value: Value, exponentThreshold: Int) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        if value == 0 { return value.sign == .minus ? "-0" : "0" }
        // Swift's description holds the same shortest round-trip digits; only the layout differs:
        // `1234.5`, `1e-05`, `1.5e+20`.
        let parts = value.magnitude.description.split(separator: "e", maxSplits: 1)
        let exponent = parts.count == 2 ? Int(parts[1]) ?? 0 : 0
        var digits: [UInt8] = []
        var pointPosition: Int?
        for byte in parts[0].utf8 {
            if byte == UInt8(ascii: ".") {
                pointPosition = digits.count
            } else {
                digits.append(byte)
            }
        }
        // The value is 0.DIGITS × 10^(point + exponent); drop leading and trailing zeros.
        var point = (pointPosition ?? digits.count) + exponent
        while digits.first == UInt8(ascii: "0") {
            digits.removeFirst()
            point -= 1
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        let decimalExponent = point - 1
        var text = value < 0 ? "-" : ""
        let digitText = String(decoding: digits, as: UTF8.self)
        if decimalExponent < -4 || decimalExponent >= exponentThreshold {
            text += String(digitText.prefix(1))
            if digits.count > 1 { text += "." + digitText.dropFirst() }
            let magnitude = String(abs(decimalExponent))
            text += (decimalExponent < 0 ? "e-" : "e+") + (magnitude.count < 2 ? "0" : "") + magnitude
        } else if point <= 0 {
            text += "0." + String(repeating: "0", count: -point) + digitText
        } else if digits.count <= point {
            text += digitText + String(repeating: "0", count: point - digits.count)
        } else {
            text += digitText.prefix(point) + "." + digitText.dropFirst(point)
        }
        return text
    }
}
