/// A `numeric` value in PostgreSQL's binary form: base-10000 digits, the weight of the first
/// one, a sign (or NaN, ±Infinity) and the display scale.
///
/// `description` prints the digits exactly as PostgreSQL does, trailing zeros of the scale
/// included (`1.50` stays `1.50`).
struct PostgresNumeric: CustomStringConvertible {
    enum Sign: UInt16 {
        case positive = 0x0000
        case negative = 0x4000
        case nan = 0xC000
        case positiveInfinity = 0xD000
        case negativeInfinity = 0xF000
    }

    var sign: Sign
    /// The power of 10000 of `digits[0]`.
    var weight: Int
    /// Decimal digits after the point.
    var scale: Int
    /// Base-10000 digits, most significant first, each 0...9999.
    var digits: [UInt16]

    /// Reads `numeric_send`'s layout: int16 ndigits, int16 weight, uint16 sign, uint16 dscale,
    /// then ndigits int16 digits.
    /// - Throws: `PostgresDecodingFailure` if the bytes do not hold exactly such a value.
    init(binary bytes: UnsafeRawBufferPointer) throws {
        var reader = BinaryReader(bytes)
        let count = try reader.read(Int16.self)
        weight = Int(try reader.read(Int16.self))
        let signBits = try reader.read(UInt16.self)
        let dscale = try reader.read(Int16.self)
        guard count >= 0, dscale >= 0, let sign = Sign(rawValue: signBits) else {
            throw PostgresDecodingFailure("the binary numeric value is malformed")
        }
        self.sign = sign
        scale = Int(dscale)
        digits = []
        digits.reserveCapacity(Int(count))
        for _ in 0..<count {
            let digit = try reader.read(UInt16.self)
            guard digit <= 9999 else { throw PostgresDecodingFailure("the binary numeric value is malformed") }
            digits.append(digit)
        }
        try reader.expectEnd()
    }

    var description: String {
        switch sign {
        case .nan: return "NaN"
        case .positiveInfinity: return "Infinity"
        case .negativeInfinity: return "-Infinity"
        case .positive, .negative: break
        }
        var text: [UInt8] = []
        text.reserveCapacity(max(weight + 1, 1) * 4 + scale + 2)
        if sign == .negative { text.append(UInt8(ascii: "-")) }
        func digit(at index: Int) -> Int { index >= 0 && index < digits.count ? Int(digits[index]) : 0 }
        if weight < 0 {
            text.append(UInt8(ascii: "0"))
        } else {
            for index in 0...weight {
                var value = digit(at: index)
                var divisor = 1000
                // The first group drops its leading zeros; its last digit always shows.
                var started = index > 0
                while divisor > 0 {
                    let decimal = value / divisor
                    value -= decimal * divisor
                    started = started || decimal > 0 || divisor == 1
                    if started { text.append(UInt8(ascii: "0") + UInt8(decimal)) }
                    divisor /= 10
                }
            }
        }
        if scale > 0 {
            text.append(UInt8(ascii: "."))
            let end = text.count + scale
            var index = weight + 1
            while text.count < end {
                var value = digit(at: index)
                var divisor = 1000
                while divisor > 0, text.count < end {
                    let decimal = value / divisor
                    value -= decimal * divisor
                    text.append(UInt8(ascii: "0") + UInt8(decimal))
                    divisor /= 10
                }
                index += 1
            }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
