import Foundation

/// An ISO 4217 currency and its exponent (digits after the decimal point).
package struct Currency: Hashable, Sendable, Codable, CustomStringConvertible {
    package let code: String
    package let exponent: Int

    /// The currency with this code (any case), or nil if ISO 4217 has no such active code.
    package init?(_ code: String) {
        let upper = code.uppercased()
        guard upper.count == 3, let exponent = Self.exponents[upper] else { return nil }
        self.code = upper
        self.exponent = exponent
    }

    package static let usd = Currency(uncheckedCode: "USD", exponent: 2)

    private init(uncheckedCode code: String, exponent: Int) {
        self.code = code
        self.exponent = exponent
    }

    /// The currency with this code, or a refusal naming `field`.
    /// - Throws: `ServiceError.invalidInput(field:)` when ISO 4217 has no such active code.
    package static func parse(_ code: String, field: String = "currency") throws -> Currency {
        guard let currency = Currency(code) else {
            throw ServiceError.invalidInput(field: field, reason: "\(code) is not an ISO 4217 currency code")
        }
        return currency
    }

    package var description: String { code }

    package init(from decoder: any Decoder) throws {
        let code = try String(from: decoder)
        guard let currency = Currency(code) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(code) is not a currency"))
        }
        self = currency
    }

    package func encode(to encoder: any Encoder) throws {
        try code.encode(to: encoder)
    }

    /// Active ISO 4217 codes (list of 2024) with their minor-unit exponents; 2 unless listed
    /// under 0, 3 or 4.
    package static let exponents: [String: Int] = {
        let zero = "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF"
        let three = "BHD IQD JOD KWD LYD OMR TND"
        let four = "CLF UYW"
        let two = """
            AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD CAD CDF CHE CHF CHW \
            CNY COP COU CRC CUC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR \
            ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR \
            MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP \
            STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD YER ZAR ZMW ZWL
            """
        var table: [String: Int] = [:]
        for (codes, exponent) in [(two, 2), (zero, 0), (three, 3), (four, 4)] {
            for code in codes.split(separator: " ") { table[String(code)] = exponent }
        }
        return table
    }()
}

/// An amount of money in integer minor units (cents) of a currency: never a Double.
package struct Money: Hashable, Sendable, CustomStringConvertible {
    package var minorUnits: Int64
    package var currency: Currency

    package init(minorUnits: Int64, currency: Currency) {
        self.minorUnits = minorUnits
        self.currency = currency
    }

    /// The largest amount the schema's INTEGER columns hold.
    package static let maximumMinorUnits: Int64 = Int64(Int32.max)

    /// Parses a decimal string exactly: `"12.5"` USD is 1250 cents, `"1000"` JPY is 1000 yen.
    /// Refuses signs, exponents, separators, more decimals than the currency has, zero (unless
    /// `allowZero`) and amounts beyond the columns' range.
    /// - Throws: `ServiceError.invalidInput(field:)` saying what is wrong.
    package init(parsing text: String, currency: Currency, field: String = "amount", allowZero: Bool = false) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            parts.count == 1 || !parts[1].isEmpty
        else {
            throw ServiceError.invalidInput(field: field, reason: "must be a positive decimal number such as 12.50 (got \"\(text.prefix(40))\")")
        }
        let fraction = parts.count == 2 ? String(parts[1]) : ""
        guard fraction.count <= currency.exponent else {
            throw ServiceError.invalidInput(
                field: field,
                reason: currency.exponent == 0
                    ? "cannot have decimals in \(currency.code)"
                    : "has more than \(currency.exponent) decimals for \(currency.code)"
            )
        }
        let digits = String(parts[0].drop { $0 == "0" }) + fraction + String(repeating: "0", count: currency.exponent - fraction.count)
        let significant = digits.drop { $0 == "0" }
        guard significant.count <= 18, let units = Int64(significant.isEmpty ? "0" : String(significant)), units <= Self.maximumMinorUnits else {
            throw ServiceError.invalidInput(
                field: field, reason: "is too large (at most \(Money(minorUnits: Self.maximumMinorUnits, currency: currency)))")
        }
        guard allowZero || units > 0 else { throw ServiceError.invalidInput(field: field, reason: "must be more than zero") }
        self.init(minorUnits: units, currency: currency)
    }

    /// An amount given in minor units (the API's form), refused unless it is more than zero
    /// and fits the schema's columns.
    /// - Throws: `ServiceError.invalidInput(field:)`.
    package init(validatingMinorUnits minorUnits: Int64, currency: Currency, field: String = "amount") throws {
        self.init(minorUnits: minorUnits, currency: currency)
        try requirePositive(field: field)
    }

    /// Refuses an amount that is not more than zero or does not fit the schema's columns: what
    /// every service checks of the amounts it is given, however they were made.
    /// - Throws: `ServiceError.invalidInput(field:)`.
    func requirePositive(field: String = "amount") throws {
        guard minorUnits > 0 else { throw ServiceError.invalidInput(field: field, reason: "must be more than zero") }
        guard minorUnits <= Self.maximumMinorUnits else {
            throw ServiceError.invalidInput(
                field: field, reason: "is too large (at most \(Money(minorUnits: Self.maximumMinorUnits, currency: currency)))")
        }
    }

    /// Refuses an amount in another currency than `expected` (an edit or a payment in the
    /// currency of the row it belongs to).
    /// - Throws: `ServiceError.invalidInput(field: "currency")`.
    func requireCurrency(_ expected: Currency) throws {
        guard currency == expected else {
            throw ServiceError.invalidInput(
                field: "currency", reason: "must be \(expected.code), the currency it is recorded in (got \(currency.code))")
        }
    }

    /// The amount as a plain decimal string with the currency's exponent (`1250` USD → `12.50`),
    /// the same in every locale.
    package var decimalString: String {
        let sign = minorUnits < 0 ? "-" : ""
        let magnitude = minorUnits.magnitude
        guard currency.exponent > 0 else { return sign + String(magnitude) }
        var scale: UInt64 = 1
        for _ in 0..<currency.exponent { scale *= 10 }
        let fraction = String(magnitude % scale)
        return sign + String(magnitude / scale) + "." + String(repeating: "0", count: currency.exponent - fraction.count) + fraction
    }

    package var description: String { "\(decimalString) \(currency.code)" }
}
