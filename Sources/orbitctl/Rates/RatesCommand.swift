import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl rates …`: exchange rates (docs/money.md, "Currencies").
struct RatesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rates",
        abstract: "Exchange rates: the ECB's reference rates (operators) and a community's own (admins).",
        subcommands: [Import.self, SetRate.self, List.self, Show.self]
    )

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import the ECB's euro reference rates (operator): eurofxref.csv (one day) or eurofxref-hist.csv (every day).",
            discussion: "A day imported again is replaced. Columns of codes that are not active ISO 4217 currencies are skipped.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The CSV file.") var file: String
        @OptionGroup var output: JSONOption

        func run() async throws {
            let text: String
            do {
                text = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw CommandFailure("Cannot read \(file) as UTF-8 text.")
            }
            let report = try await withServices(database) { services in try await services.rates.importReferenceRates(csv: text) }
            if output.json { return try printJSON(report) }
            let skipped = report.skippedCurrencies.isEmpty ? "" : " (skipped: \(report.skippedCurrencies.joined(separator: ", ")))"
            print("Imported \(report.rates) rates over \(report.days) day\(report.days == 1 ? "" : "s")\(skipped).")
        }
    }

    struct SetRate: ActingCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Set the community's rate for a day (admins): 1 FROM = RATE TO; replaces that day's. It comes before the ECB's.")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "ISO 4217 code.") var from: Currency
        @Option(help: "ISO 4217 code.") var to: Currency
        @Option(help: "A positive decimal (1.0834): \(MoneyHelp.rates).") var rate: String
        @Option(help: "The day, YYYY-MM-DD (default today in the community's zone).") var date: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> ExchangeRate {
            let day = try date.map { try CivilDate.parse($0, field: "date") }
            return try await services.rates.setRate(
                in: community, from: from, to: to, rate: try DecimalRate.parse(self.rate), on: day, as: actor)
        }

        func tell(_ rate: ExchangeRate) {
            print("1 \(rate.base) = \(rate.rate) \(rate.quote) on \(rate.rateOn).")
        }
    }

    struct List: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "The community's rates and the reference rates, latest day first (members).")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "At most this many (1 to 1000).") var limit = 100
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> [ExchangeRate] {
            try await services.rates.rates(in: community, limit: limit, as: actor)
        }

        func tell(_ rates: [ExchangeRate]) {
            printTable(
                ["DAY", "FROM", "TO", "RATE", "SOURCE"],
                rates.map { [$0.rateOn.description, $0.base, $0.quote, $0.rate, $0.source.rawValue] })
        }
    }

    struct Show: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "The rate a conversion would use (members): the community's own first, else the ECB's crossed through EUR.")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "ISO 4217 code.") var from: Currency
        @Option(help: "ISO 4217 code.") var to: Currency
        @Option(help: "The day, YYYY-MM-DD (default today in the community's zone).") var date: String?
        @OptionGroup var acting: ActingOptions
        var output: TextOutput { TextOutput() }

        /// --date (validate() parses it before connecting).
        private var day: CivilDate? {
            get throws { try date.map { try CivilDate.parse($0, field: "date") } }
        }

        func validate() throws { _ = try day }

        /// The rate, a decimal.
        func act(_ services: OrbitServices, as actor: UserID) async throws -> String {
            guard let rate = try await services.rates.rate(in: community, from: from, to: to, on: try day, as: actor) else {
                throw CommandFailure("No rate from \(from) to \(to) is known.")
            }
            return rate
        }

        func tell(_ rate: String) {
            print("1 \(from) = \(rate) \(to)")
        }
    }
}
