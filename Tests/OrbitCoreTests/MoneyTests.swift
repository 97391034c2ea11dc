import Foundation
import OrbitCore
import Testing

@Suite("Money: exact decimal parsing, splits that add up, settle-up suggestions")
struct MoneyTests {
    let usd = Currency("USD")!

    @Test(
        "decimal strings parse exactly with the currency's exponent",
        arguments: [
            ("12.5", "USD", 1250), ("12.50", "USD", 1250), ("0.01", "USD", 1), ("1000", "JPY", 1000), ("1.234", "BHD", 1234),
            ("007.10", "EUR", 710), ("21474836.47", "USD", 2_147_483_647),
        ] as [(String, String, Int64)])
    func parses(text: String, code: String, units: Int64) throws {
        #expect(try Money(parsing: text, currency: try #require(Currency(code))).minorUnits == units)
    }

    @Test(
        "malformed, negative, too precise, zero and too large amounts are refused",
        arguments: [
            ("abc", "USD"), ("-5", "USD"), ("1.234", "USD"), ("1e3", "USD"), ("0", "USD"), ("0.00", "USD"), ("1,5", "EUR"),
            ("12.", "USD"), (".5", "USD"), ("1.5", "JPY"), ("21474836.48", "USD"), ("99999999999999999999999", "USD"), ("", "USD"), ("+3", "USD"),
        ])
    func refuses(text: String, code: String) throws {
        let currency = try #require(Currency(code))
        #expect(throws: ServiceError.self) { try Money(parsing: text, currency: currency) }
    }

    @Test("formatting and parsing round-trip for random amounts in every exponent")
    func roundTrip() throws {
        var random = SystemRandomNumberGenerator()
        for code in ["USD", "JPY", "BHD", "CLF"] {
            let currency = try #require(Currency(code))
            for _ in 0..<2000 {
                let units = Int64.random(in: 1...Money.maximumMinorUnits, using: &random)
                let money = Money(minorUnits: units, currency: currency)
                #expect(try Money(parsing: money.decimalString, currency: currency) == money)
            }
        }
        #expect(Money(minorUnits: 1250, currency: usd).decimalString == "12.50")
        #expect(Money(minorUnits: 5, currency: try #require(Currency("BHD"))).decimalString == "0.005")
        #expect(Currency("XYZ") == nil && Currency("usd")?.code == "USD")
    }

    func users(_ count: Int) -> [UserID] {
        (0..<count).map { UserID(UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", $0 + 1))!) }
    }

    @Test("awkward totals split to the cent, leftovers to the smallest user ids")
    func splits() throws {
        let three = users(3)
        let equal = try SplitCalculator.splits(of: 1001, .equal(three.reversed()))
        #expect(equal.map(\.amount) == [334, 334, 333] && equal.map(\.participant) == three.map(Holder.user))

        let seven = users(7)
        let percent = try SplitCalculator.splits(
            of: 1000, .percent(Dictionary(uniqueKeysWithValues: zip(seven, [1429, 1429, 1429, 1429, 1428, 1428, 1428]))))
        #expect(percent.map(\.amount).reduce(0, +) == 1000)

        let shares = try SplitCalculator.splits(of: 1000, .shares(Dictionary(uniqueKeysWithValues: zip(three, [1, 2, 3]))))
        #expect(shares.map(\.amount) == [167, 333, 500])

        let exact = try SplitCalculator.splits(of: 1000, .exact([three[0]: 600, three[1]: 400]))
        #expect(exact.map(\.amount) == [600, 400])
        #expect(throws: ServiceError.self) { try SplitCalculator.splits(of: 1000, .exact([three[0]: 600, three[1]: 300])) }
        #expect(throws: ServiceError.self) { try SplitCalculator.splits(of: 1000, .percent([three[0]: 5000, three[1]: 4000])) }
        #expect(throws: ServiceError.self) { try SplitCalculator.splits(of: 1000, .equal([three[0], three[0]])) }
    }

    @Test("random splits always add up to the total and are the same whatever the input order")
    func randomSplits() throws {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let people = users(Int.random(in: 1...12, using: &random))
            let total = Int64.random(in: 1...10_000_000, using: &random)
            let weights = Dictionary(uniqueKeysWithValues: people.map { ($0, Int64.random(in: 1...50, using: &random)) })
            for method in [SplitMethod.equal(people), .shares(weights)] {
                let result = try SplitCalculator.splits(of: total, method)
                #expect(result.map(\.amount).reduce(0, +) == total)
            }
            #expect(
                try SplitCalculator.splits(of: total, .equal(people)).map(\.amount)
                    == SplitCalculator.splits(of: total, .equal(people.shuffled())).map(\.amount))
        }
    }

    @Test("settle-up suggestions clear every balance in at most n-1 payments, never both ways")
    func settleUp() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let people = users(Int.random(in: 2...15, using: &random))
            var balances = people.dropLast().map { ($0, "USD", Int64.random(in: -50_000...50_000, using: &random)) }
            balances.append((people.last!, "USD", -balances.map(\.2).reduce(0, +)))
            let payments = SettleUp.payments(balances.map { (user: $0.0, currency: $0.1, balance: $0.2) })
            var after = Dictionary(uniqueKeysWithValues: balances.map { ($0.0, $0.2) })
            for payment in payments {
                after[payment.from, default: 0] += payment.amount
                after[payment.to, default: 0] -= payment.amount
            }
            #expect(after.values.allSatisfy { $0 == 0 })
            #expect(payments.count <= people.count - 1)
            let pairs = Set(payments.map { [$0.from.description, $0.to.description] })
            #expect(payments.allSatisfy { !pairs.contains([$0.to.description, $0.from.description]) })
        }
    }
}
