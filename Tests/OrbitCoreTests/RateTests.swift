import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Currencies (issue 24, item 5): rates entered by admins or imported from the ECB's CSV,
/// settlements converted at a recorded rate with one rounding rule, settle-up in one currency.
@Suite("Currencies: rates, converted settlements, settle-up in one currency")
struct RateTests {
    static let daily = """
        Date, USD, JPY, BGN, CYP, GBP, 
        22 November 2024, 1.0412, 161.05, 1.9558, N/A, 0.83188, 

        """
    static let history = """
        Date,USD,JPY,GBP,
        2024-11-22,1.0500,160.00,0.8400,
        2024-11-21,1.0400,N/A,0.8300,

        """

    func currency(_ code: String) throws -> Currency { try Currency.parse(code) }

    @Test("the ECB's CSV, daily or historical: rates stored per day, N/A and unknown codes left out, a day imported again replaced")
    func importECB() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let daily = try await services.rates.importReferenceRates(csv: Self.daily)
            #expect(daily == RateImport(days: 1, rates: 4, skippedCurrencies: ["CYP"]))
            let history = try await services.rates.importReferenceRates(csv: Self.history)
            #expect(history == RateImport(days: 2, rates: 5, skippedCurrencies: []))
            let again = try await services.rates.importReferenceRates(csv: Self.history)
            #expect(again.rates == 5)
            let rates = try await services.rates.rates(in: cast.community, as: cast.member)
            #expect(rates.count == 6)  // the 22nd: USD, JPY, GBP (replaced by the history) and BGN; the 21st: USD, GBP
            #expect(rates.first { $0.quote == "USD" && $0.rateOn == (try? day("2024-11-22")) }?.rate == "1.05")
            #expect(rates.allSatisfy { $0.source == .ecb && $0.base == "EUR" && $0.communityID == nil })

            for bad in ["", "Day, USD\n1 Nov 2024, 1.0\n", "Date, USD\n32 November 2024, 1.0\n", "Date, USD\n22 November 2024, -1\n"] {
                let error = await serviceError { try await services.rates.importReferenceRates(csv: bad) }
                #expect(error?.field == "file", "\(bad): \(String(describing: error))")
            }
        }
    }

    @Test("rates: the community's own first, either way round; else the ECB's crossed through EUR, rounded to 10 places; admins set them")
    func lookup() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            var clocked = services
            let instant = try #require(ISO8601DateFormatter().date(from: "2024-11-25T12:00:00Z"))
            clocked.now = { instant }
            _ = try await services.rates.importReferenceRates(csv: Self.history)
            let usd = try currency("USD")
            let eur = try currency("EUR")
            let jpy = try currency("JPY")
            let gbp = try currency("GBP")
            #expect(try await clocked.rates.rate(in: cast.community, from: eur, to: usd, as: cast.member) == "1.05")
            #expect(try await clocked.rates.rate(in: cast.community, from: usd, to: eur, as: cast.member) == "0.9523809524")
            // 160 / 1.05 = 152.380952380952…
            #expect(try await clocked.rates.rate(in: cast.community, from: usd, to: jpy, as: cast.member) == "152.380952381")
            // On the 21st there was no JPY rate; before it, nothing at all.
            #expect(try await clocked.rates.rate(in: cast.community, from: eur, to: jpy, on: try day("2024-11-21"), as: cast.member) == nil)
            #expect(try await clocked.rates.rate(in: cast.community, from: eur, to: gbp, on: try day("2024-11-21"), as: cast.member) == "0.83")

            let refused = await serviceError {
                try await clocked.rates.setRate(in: cast.community, from: usd, to: gbp, rate: try .parse("0.8"), as: cast.member)
            }
            #expect(refused?.code == .forbidden)
            let set = try await clocked.rates.setRate(in: cast.community, from: gbp, to: usd, rate: try .parse("1.25"), as: cast.admin)
            #expect(set.rateOn == (try day("2024-11-25")) && set.source == .admin && set.enteredBy == cast.admin)
            #expect(try await clocked.rates.rate(in: cast.community, from: gbp, to: usd, as: cast.member) == "1.25")
            #expect(try await clocked.rates.rate(in: cast.community, from: usd, to: gbp, as: cast.member) == "0.8")
            // Set again the same day: replaced. Another community does not see it.
            _ = try await clocked.rates.setRate(in: cast.community, from: gbp, to: usd, rate: try .parse("1.2"), as: cast.admin)
            #expect(try await clocked.rates.rate(in: cast.community, from: gbp, to: usd, as: cast.member) == "1.2")
            let other = try await services.communities.create(name: "Other", as: cast.outsider).id
            // 1.05 / 0.84 = 1.25
            #expect(try await clocked.rates.rate(in: other, from: gbp, to: usd, as: cast.outsider) == "1.25")
            for bad in ["0", "-1", "1.12345678901", "abc", "1e3", ""] {
                let error = await serviceError {
                    try await clocked.rates.setRate(in: cast.community, from: gbp, to: usd, rate: try .parse(bad), as: cast.admin)
                }
                #expect(error?.field == "rate", "\(bad)")
            }
        }
    }

    @Test("a settlement paid in euros settles a dollar debt at the recorded rate, rounded half away from zero; balances stay per currency")
    func convertedSettlement() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let usd = try currency("USD")
            _ = try await services.expenses.addExpense(
                in: cast.community, description: "Kit", total: try dollars("200.00"), paidBy: cast.admin, split: .equal([cast.admin, cast.member]),
                as: cast.admin)
            // 90.00 EUR at 1.1111111111 is 99.999999999 USD: 100.00.
            let settlement = try await services.settlements.recordSettlement(
                in: cast.community, from: cast.member, to: cast.admin, amount: Money(minorUnits: 9000, currency: try currency("EUR")),
                settles: usd, rate: try .parse("1.1111111111"), as: cast.member)
            #expect(settlement.currency == "USD" && settlement.totalAmount == 10000)
            #expect(settlement.conversion == Conversion(paidAmount: 9000, paidCurrency: "EUR", rate: "1.1111111111"))
            let balances = try await services.settlements.balances(in: cast.community, as: cast.member)
            #expect(balances.allSatisfy { $0.balance == 0 }, "\(balances)")

            // Half a cent goes up, from yen (exponent 0) to dollars: 1 JPY at 0.005 = 0.5 cent → 1.
            let tiny = try await services.settlements.recordSettlement(
                in: cast.community, from: cast.member, to: cast.admin, amount: Money(minorUnits: 1, currency: try currency("JPY")),
                settles: usd, rate: try .parse("0.005"), as: cast.member)
            #expect(tiny.totalAmount == 1)
            // Below half a unit converts to nothing: refused.
            let nothing = await serviceError {
                try await services.settlements.recordSettlement(
                    in: cast.community, from: cast.member, to: cast.admin, amount: Money(minorUnits: 1, currency: try currency("JPY")),
                    settles: usd, rate: try .parse("0.004"), as: cast.member)
            }
            #expect(nothing?.field == "amount")
            // No rate known and none given: a conflict naming the currencies.
            let unknown = await serviceError {
                try await services.settlements.recordSettlement(
                    in: cast.community, from: cast.member, to: cast.admin, amount: Money(minorUnits: 100, currency: try currency("CHF")),
                    settles: usd, as: cast.member)
            }
            #expect(unknown?.code == .conflict && unknown?.message.contains("CHF") == true)
            // The rate known today is used and recorded.
            _ = try await services.rates.setRate(in: cast.community, from: try currency("CHF"), to: usd, rate: try .parse("1.13"), as: cast.admin)
            let looked = try await services.settlements.recordSettlement(
                in: cast.community, from: cast.member, to: cast.admin, amount: Money(minorUnits: 1000, currency: try currency("CHF")),
                settles: usd, as: cast.member)
            #expect(looked.totalAmount == 1130 && looked.conversion?.rate == "1.13")
            // The day's rate makes 1 JPY less than a cent: the request is valid, the state refuses
            // it (409), where the same rate given in the request is a 400 above.
            _ = try await services.rates.setRate(in: cast.community, from: try currency("JPY"), to: usd, rate: try .parse("0.004"), as: cast.admin)
            let stored = await serviceError {
                try await services.settlements.recordSettlement(
                    in: cast.community, from: cast.member, to: cast.admin, amount: Money(minorUnits: 1, currency: try currency("JPY")),
                    settles: usd, as: cast.member)
            }
            #expect(stored?.code == .conflict && stored?.field == "amount", "\(String(describing: stored))")
            #expect(nothing?.code == .invalidInput)
        }
    }

    @Test("settle-up in one currency: balances in dollars and euros proposed as euro payments at today's rates")
    func settleUpInOneCurrency() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let third = try await services.users.create(email: "t@example.com", displayName: "Third").id
            _ = try await services.members.add(third, to: cast.community, as: cast.admin)
            let eur = try currency("EUR")
            _ = try await services.rates.setRate(in: cast.community, from: try currency("USD"), to: eur, rate: try .parse("0.5"), as: cast.admin)
            // Dollars: the member owes the admin 60.00. Euros: the admin owes the third 10.00.
            _ = try await services.expenses.addExpense(
                in: cast.community, description: "Kit", total: try dollars("60.00"), paidBy: cast.admin, split: .equal([cast.member]),
                as: cast.admin)
            _ = try await services.expenses.addExpense(
                in: cast.community, description: "Cake", total: Money(minorUnits: 1000, currency: eur), paidBy: third,
                split: .equal([cast.admin]), as: cast.admin)
            let perCurrency = try await services.settlements.settleUpSuggestions(in: cast.community, as: cast.member)
            #expect(perCurrency.count == 2)
            let inEuros = try await services.settlements.settleUpSuggestions(in: cast.community, currency: eur, as: cast.member)
            // In euros: the member −30.00, the admin +30.00 − 10.00 = +20.00, the third +10.00.
            #expect(
                Set(inEuros.map { "\($0.from)>\($0.to):\($0.amount)\($0.currency)" })
                    == ["\(cast.member)>\(cast.admin):2000EUR", "\(cast.member)>\(third):1000EUR"])
            let noRate = await serviceError {
                try await services.settlements.settleUpSuggestions(in: cast.community, currency: try currency("GBP"), as: cast.member)
            }
            #expect(noRate?.code == .conflict)
        }
    }

    @Test("the database's currency exponents are Swift's")
    func exponents() async throws {
        try await withServices { services, database in
            let codes = Currency.exponents.keys.sorted()
            let sql = try await database.withConnection { connection in
                try await connection.query(
                    "SELECT array_agg(orbit.currency_exponent(c) ORDER BY ord) AS e FROM unnest(\(codes)::text[]) WITH ORDINALITY AS x (c, ord)"
                ).single().decode("e", as: [Int32].self)
            }
            #expect(sql.map(Int.init) == codes.map { Currency.exponents[$0] ?? -1 })
        }
    }
}
