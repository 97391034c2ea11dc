import OrbitCore
import OrbitPostgres
import Testing

/// Every class of SQLSTATE a service can meet comes out as a domain error (issue 37, item 10);
/// only our own bugs (a statement the server does not understand, an internal error) stay
/// database errors, which the API answers 500 and logs, and the CLI words as one sentence.
@Suite("Database errors as domain errors")
struct ErrorMappingTests {
    @Test(
        "each SQLSTATE class maps to its domain error",
        arguments: [
            ("22003", ServiceError.Code.invalidInput), ("22P02", .invalidInput), ("22007", .invalidInput), ("22012", .invalidInput),
            ("23P01", .invalidInput), ("54000", .invalidInput), ("P0001", .conflict), ("08006", .unavailable), ("25006", .unavailable),
            ("40001", .unavailable), ("40P01", .unavailable), ("53300", .unavailable), ("55P03", .unavailable), ("57014", .unavailable),
            ("57P01", .unavailable), ("58030", .unavailable),
        ])
    func classes(state: String, code: ServiceError.Code) {
        var error = PostgresError(code: .server, message: "value out of range for type integer", sqlState: state)
        error.column = "amount"
        let mapped = RequestRunner.domainError(for: error)
        #expect(mapped?.code == code)
        #expect(mapped?.message.contains("PostgresError") == false)
        if code == .invalidInput { #expect(mapped?.field == "amount") }
    }

    @Test("our own bugs stay database errors", arguments: ["42601", "42703", "42P01", "XX000", "0A000"])
    func bugs(state: String) {
        #expect(RequestRunner.domainError(for: PostgresError(code: .server, message: "syntax error", sqlState: state)) == nil)
    }
}

/// The service's own checks hold whoever calls it (not only the API's and the CLI's parsing):
/// values past the bounds are refused before any sum could overflow.
@Suite("Money bounds at the service boundary")
struct ServiceMoneyBoundsTests {
    @Test("splits and payers with parts past the bound are refused as invalid input, never a trap")
    func pastTheBound() throws {
        let (a, b) = (Holder.user(UserID.random()), Holder.user(UserID.random()))
        let cases: [SplitMethod] = [
            .exact([a: .max, b: 1]), .exact([a: Money.maximumMinorUnits + 1, b: -Money.maximumMinorUnits]),
            .percent([a: .max, b: .min + 10_000]), .shares([a: .max, b: 1]),
            .items(Itemised(items: [.init(description: "A", amount: .max, split: .equal([a]))], tax: .max, tip: 1)),
        ]
        for method in cases {
            #expect(throws: ServiceError.self, "\(method)") { try SplitCalculator.splits(of: 100, method) }
        }
    }
}
