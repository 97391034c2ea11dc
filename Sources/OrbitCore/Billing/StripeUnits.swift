/// Stripe's units for a currency, which are not always ISO 4217's (docs/money.md, "Stripe's
/// units"). Money inside OrbitCove is ISO 4217 minor units; an amount crosses to Stripe and back
/// only through this table, both ways: what a checkout asks Stripe to charge, and what a webhook
/// says Stripe took or gave back.
///
/// Stripe's rules (its "Supported currencies" page):
/// - zero-decimal currencies are counted in whole units (`JPY 500` is `500`). For all but `MGA`
///   ISO 4217 has no minor unit either; `MGA` has two, so `100.00 MGA` is ISO `10000` and
///   Stripe `100`, and only whole ariary can be charged;
/// - the three-decimal currencies are counted in thousandths, as ISO does, but the last digit
///   must be 0 (`5.124 KWD` cannot be charged; `5.120` can);
/// - `ISK` is zero-decimal in ISO 4217 and two-decimal in Stripe's API, whole krónur only:
///   `5000 kr` is ISO `5000` and Stripe `500000`;
/// - `HUF` and `TWD` are charged in two decimals, as ISO counts them (Stripe treats them as
///   zero-decimal for payouts only); `UGX` is zero-decimal in both.
/// Every other currency Stripe charges has two decimals, as in ISO 4217.
package struct StripeUnits: Sendable, Equatable {
    /// Decimals in Stripe's amount for the currency.
    package let exponent: Int
    /// Stripe's amounts must be a multiple of this (10 for three-decimal currencies, 100 for ISK).
    package let step: Int64

    /// The currencies whose Stripe amounts are not ISO minor units with any last digit.
    private static let special: [String: StripeUnits] = {
        var table: [String: StripeUnits] = [:]
        for code in "BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF".split(separator: " ") {
            table[String(code)] = StripeUnits(exponent: 0, step: 1)
        }
        for code in "BHD JOD KWD OMR TND".split(separator: " ") {
            table[String(code)] = StripeUnits(exponent: 3, step: 10)
        }
        table["ISK"] = StripeUnits(exponent: 2, step: 100)
        table["HUF"] = StripeUnits(exponent: 2, step: 1)
        table["TWD"] = StripeUnits(exponent: 2, step: 1)
        return table
    }()

    private init(exponent: Int, step: Int64) {
        self.exponent = exponent
        self.step = step
    }

    /// Stripe's units for `currency`, or nil when Stripe charges no such currency in units we
    /// can map (ISO's other three- and four-decimal currencies, and its funds codes).
    package init?(_ currency: Currency) {
        if let units = Self.special[currency.code] {
            self = units
            return
        }
        guard currency.exponent == 2 else { return nil }
        self.init(exponent: 2, step: 1)
    }

    /// The amount Stripe is asked for to charge `money` exactly.
    /// - Throws: `ServiceError.conflict(field: "amount")` naming the currency and the amount when
    ///   Stripe cannot charge it exactly (a fraction of an ariary or a króna, a thousandth of a
    ///   dinar) or cannot charge the currency at all: nothing may be charged then.
    package static func amount(of money: Money) throws -> Int64 {
        guard let units = StripeUnits(money.currency) else {
            throw ServiceError.conflict(field: "currency", reason: "\(money.currency.code) cannot be paid through Stripe")
        }
        let shift = units.exponent - money.currency.exponent
        let scale = power(abs(shift))
        let amount: Int64
        if shift >= 0 {
            let (scaled, overflow) = money.minorUnits.multipliedReportingOverflow(by: scale)
            guard !overflow else { throw inexact(money, units) }
            amount = scaled
        } else {
            guard money.minorUnits % scale == 0 else { throw inexact(money, units) }
            amount = money.minorUnits / scale
        }
        guard amount % units.step == 0 else { throw inexact(money, units) }
        // Stripe's amounts have at most eight digits (its "Minimum and maximum charge amounts").
        guard amount <= maximum else {
            let most = StripeUnits.money(stripeAmount: maximum / units.step * units.step, currency: money.currency.code) ?? money
            throw ServiceError.conflict(field: "amount", reason: "\(money) is more than Stripe charges at once (at most \(most))")
        }
        return amount
    }

    /// The largest amount Stripe charges, in its units.
    package static let maximum: Int64 = 99_999_999

    /// The money a Stripe amount in `currency` (Stripe's lower-case code or ISO's) stands for;
    /// nil when the currency is unknown, or the amount is not a whole number of ISO minor units
    /// (Stripe never reports one for a charge it accepted: such an event is not believed).
    package static func money(stripeAmount amount: Int64, currency code: String) -> Money? {
        guard let currency = Currency(code), let units = StripeUnits(currency) else { return nil }
        let shift = units.exponent - currency.exponent
        let scale = power(abs(shift))
        if shift >= 0 {
            guard amount % scale == 0 else { return nil }
            return Money(minorUnits: amount / scale, currency: currency)
        }
        let (scaled, overflow) = amount.multipliedReportingOverflow(by: scale)
        return overflow ? nil : Money(minorUnits: scaled, currency: currency)
    }

    private static func inexact(_ money: Money, _ units: StripeUnits) -> ServiceError {
        let smallest = StripeUnits.money(stripeAmount: units.step, currency: money.currency.code) ?? money
        return ServiceError.conflict(
            field: "amount",
            reason: "\(money) cannot be charged through Stripe, which takes \(money.currency.code) only in steps of \(smallest)")
    }

    private static func power(_ exponent: Int) -> Int64 {
        var result: Int64 = 1
        for _ in 0..<exponent { result *= 10 }
        return result
    }
}
