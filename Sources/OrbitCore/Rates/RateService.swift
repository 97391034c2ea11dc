import CSV
package import Foundation
import OrbitPostgres

/// A rate of exchange: 1 `base` is `rate` `quote` on `rateOn` (docs/money.md, "Currencies").
package struct ExchangeRate: Sendable, Codable, Equatable {
    package enum Source: String, DatabaseEnum {
        /// Entered by an admin of the community, for it alone.
        case admin
        /// The ECB's reference rates, imported by an operator: everyone's.
        case ecb
    }

    package var communityID: CommunityID?
    package var base: String
    package var quote: String
    /// A decimal with at most 10 places, as text (exact).
    package var rate: String
    package var rateOn: CivilDate
    package var source: Source
    package var enteredBy: UserID?

    enum CodingKeys: String, CodingKey {
        case communityID = "community_id", base, quote, rate, rateOn = "rate_on", source, enteredBy = "entered_by"
    }

    static let columns = "community_id, base, quote, trim_scale(rate)::text AS rate, rate_on, source, entered_by"

    init(row: PostgresRow) throws {
        (communityID, base, quote, rate, rateOn, source, enteredBy) = try row.decode(
            (CommunityID?, String, String, String, CivilDate, Source, UserID?).self)
    }

    /// `text` as a rate: a positive decimal with at most 14 digits before the point and 10
    /// after it (`1.0834`, `161.2`). Returned as given, without a leading `+` or spaces.
    /// - Throws: `ServiceError.invalidInput(field:)`.
    static func parse(_ text: String, field: String = "rate") throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let fraction = parts.count == 2 ? parts[1] : ""
        guard !whole.isEmpty, whole.count <= 14, fraction.count <= 10, parts.count == 1 || !fraction.isEmpty,
            (whole + fraction).utf8.allSatisfy(Validate.isDigit), (whole + fraction).contains(where: { $0 != "0" })
        else {
            throw ServiceError.invalidInput(field: field, reason: "must be a positive decimal with at most 10 decimal places, such as 1.0834")
        }
        return trimmed
    }
}

/// What an import of reference rates did.
package struct RateImport: Sendable, Equatable, Codable {
    /// Days of rates in the file.
    package var days: Int
    /// Rates stored (new or replacing the same day's).
    package var rates: Int
    /// Columns skipped: codes that are not active ISO 4217 currencies (CYP, …).
    package var skippedCurrencies: [String]

    package init(days: Int, rates: Int, skippedCurrencies: [String]) {
        self.days = days
        self.rates = rates
        self.skippedCurrencies = skippedCurrencies
    }

    enum CodingKeys: String, CodingKey { case days, rates, skippedCurrencies = "skipped_currencies" }
}

/// Exchange rates (issue 24, item 5; docs/money.md, "Currencies"): entered by an admin for their
/// community or imported by an operator from the ECB's reference rates. Settlements and settle-up
/// in one currency convert at them (`SettlementService`).
package struct RateService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }
}

/// A rate of exchange as the services take it: parsed once at the edge (an API body, a command's
/// option) by `parse`, and kept as the decimal text PostgreSQL reads into `numeric`, exactly.
package struct DecimalRate: Sendable, Equatable, CustomStringConvertible {
    /// The decimal, as given (`1.0834`).
    package let text: String

    /// A positive decimal with at most 14 digits before the point and 10 after it.
    /// - Throws: `ServiceError.invalidInput(field:)`.
    package static func parse(_ text: String, field: String = "rate") throws -> DecimalRate {
        DecimalRate(text: try ExchangeRate.parse(text, field: field))
    }

    package var description: String { text }
}

extension RateService {
    /// Sets the community's rate from `base` to `quote` for a day (default today in the
    /// community's zone), replacing that day's (admins).
    package func setRate(
        in community: CommunityID, from base: Currency, to quote: Currency, rate: DecimalRate, on day: CivilDate? = nil, as actor: UserID
    ) async throws -> ExchangeRate {
        guard base != quote else { throw ServiceError.invalidInput(field: "quote", reason: "must differ from the base currency") }
        let rate = rate.text
        return try await runner.asUser(actor) { connection in
            try await runner.requireAdmin(actor, of: community, rule: "only admins can set exchange rates", on: connection)
            let day = try await runner.day(day, in: community, on: connection)
            return try ExchangeRate(
                row: try await connection.query(
                    """
                    INSERT INTO exchange_rates (community_id, base, quote, rate, rate_on, source, entered_by)
                    VALUES (\(community), \(base.code), \(quote.code), \(rate)::numeric, \(day), 'admin', \(actor))
                    ON CONFLICT (community_id, base, quote, rate_on) WHERE community_id IS NOT NULL
                    DO UPDATE SET rate = excluded.rate, entered_by = excluded.entered_by
                    RETURNING \(unescaped: ExchangeRate.columns)
                    """
                ).single())
        }
    }

    /// The community's own rates and the reference rates, latest day first (members).
    package func rates(in community: CommunityID, limit: Int = 100, as actor: UserID) async throws -> [ExchangeRate] {
        try Validate.limit(limit, in: 1...1000)
        return try await runner.asUserReading(actor) { connection in
            return try await runner.queryAsMember(
                actor, of: community, on: connection,
                """
                SELECT \(unescaped: ExchangeRate.columns) FROM exchange_rates
                WHERE community_id = \(community) OR community_id IS NULL
                ORDER BY rate_on DESC, community_id NULLS LAST, base, quote LIMIT \(limit)
                """
            ).map(ExchangeRate.init(row:))
        }
    }

    /// The rate from `source` to `target` known to the community on `day` (default today):
    /// its own (either way round), else the reference rates crossed through EUR; nil when none.
    package func rate(
        in community: CommunityID, from source: Currency, to target: Currency, on day: CivilDate? = nil, as actor: UserID
    ) async throws -> String? {
        try await runner.asUserReading(actor) { connection in
            try await runner.requireMember(actor, of: community, on: connection)
            return try await Self.rate(community, source, target, on: try await runner.day(day, in: community, on: connection), connection)
        }
    }

    static func rate(_ community: CommunityID, _ source: Currency, _ target: Currency, on day: CivilDate, _ connection: PostgresConnection)
        async throws -> String?
    {
        try await connection.query(
            "SELECT trim_scale(orbit.exchange_rate(\(community), \(source.code), \(target.code), \(day)))::text AS rate"
        ).single().decode("rate", as: String?.self)
    }

    /// Operator: imports the ECB's euro reference rates from their CSV (`eurofxref.csv`, one
    /// day, or `eurofxref-hist.csv`, every day): a header `Date, USD, JPY, …` and a line per day
    /// (`22 November 2024` or `2024-11-22`), `N/A` where a currency has no rate. A day already
    /// imported is replaced. Columns of codes that are not active currencies are skipped.
    /// - Throws: `ServiceError.invalidInput(field: "file")` naming the line, for anything else.
    package func importReferenceRates(csv text: String) async throws -> RateImport {
        let (days, skipped) = try Self.parseECB(text)
        var quotes: [String] = []
        var rates: [String] = []
        var dates: [CivilDate] = []
        for (day, values) in days {
            for (code, rate) in values {
                quotes.append(code)
                rates.append(rate)
                dates.append(day)
            }
        }
        let stored = try await runner.asOperator { connection in
            try await connection.query(
                """
                INSERT INTO exchange_rates (community_id, base, quote, rate, rate_on, source)
                SELECT NULL, 'EUR', x.quote, x.rate::numeric, x.day, 'ecb'
                FROM unnest(\(quotes)::text[], \(rates)::text[], \(dates.map(\.description))::date[]) AS x (quote, rate, day)
                ON CONFLICT (base, quote, rate_on) WHERE community_id IS NULL DO UPDATE SET rate = excluded.rate
                """
            ).affectedRows ?? 0
        }
        return RateImport(days: days.count, rates: stored, skippedCurrencies: skipped)
    }

    static func parseECB(_ text: String) throws -> (days: [(CivilDate, [(String, String)])], skipped: [String]) {
        func refuse(_ line: Int, _ reason: String) -> ServiceError {
            ServiceError.invalidInput(field: "file", reason: "line \(line): \(reason)")
        }
        let reader: CSVReader
        do {
            reader = try CSVReader(string: text, hasHeaderRow: true, trimFields: true)
        } catch {
            throw ServiceError.invalidInput(field: "file", reason: "is not CSV (\(error))")
        }
        let header = reader.headerRow ?? []
        guard header.first == "Date", header.count > 1 else { throw refuse(1, "the header must be Date, then currency codes") }
        // Known currency codes by column; a trailing comma leaves an empty last column.
        var columns: [(index: Int, code: String)] = []
        var skipped: [String] = []
        for (index, code) in header.enumerated().dropFirst() where !code.isEmpty {
            if let currency = Currency(code), currency.code == code, code != "EUR" { columns.append((index, code)) } else { skipped.append(code) }
        }
        var days: [(CivilDate, [(String, String)])] = []
        var line = 1
        while let row = reader.next() {
            line += 1
            if row.allSatisfy(\.isEmpty) { continue }
            guard let day = ecbDate(row[0]) else { throw refuse(line, "\(row[0]) is not a date such as 22 November 2024 or 2024-11-22") }
            var values: [(String, String)] = []
            for column in columns where column.index < row.count {
                let field = row[column.index]
                if field.isEmpty || field == "N/A" { continue }
                do {
                    values.append((column.code, try ExchangeRate.parse(field)))
                } catch {
                    throw refuse(line, "\(column.code) \(field) is not a rate")
                }
            }
            days.append((day, values))
        }
        guard !days.isEmpty else { throw refuse(line, "the file has no day of rates") }
        return (days, skipped)
    }

    /// `22 November 2024` (eurofxref.csv) or `2024-11-22` (eurofxref-hist.csv).
    static func ecbDate(_ text: String) -> CivilDate? {
        if let date = CivilDate(parsing: text) { return date }
        let months = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]
        let parts = text.split(separator: " ")
        guard parts.count == 3, let day = Int(parts[0]), let month = months.firstIndex(of: parts[1].lowercased()), let year = Int(parts[2])
        else { return nil }
        let date = CivilDate(year: year, month: month + 1, day: day)
        return date.isValid ? date : nil
    }
}
