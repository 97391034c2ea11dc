import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl export`: a community's money for a spreadsheet or an accountant.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a community's money: transactions with payers and splits, settlements, dues and payments.",
        discussion: """
            CSV is RFC 4180 (CRLF line ends, a header line, one row per transaction, payer, split, dues and payment; \
            parent_id ties a payer or split to its transaction and a payment to its dues). Amounts are decimals with their currency.
            """
    )
    @Option(help: "Community id.") var community: CommunityID
    @Option(help: "csv or json.") var format = "csv"
    @Option(help: "Dated on or after this day (YYYY-MM-DD).") var from: String?
    @Option(help: "Dated on or before this day (YYYY-MM-DD).") var to: String?
    @Option(help: "Write to this file instead of standard output.") var output: String?
    @OptionGroup var acting: ActingOptions

    func validate() throws {
        guard format == "csv" || format == "json" else { throw ValidationError("--format must be csv or json.") }
    }

    func run() async throws {
        let from = try from.map { try CivilDate.parse($0, field: "from") }
        let to = try to.map { try CivilDate.parse($0, field: "to") }
        let export = try await acting.run { services, actor in
            try await services.exports.export(in: community, from: from, to: to, as: actor)
        }
        let data: Data
        if format == "csv" {
            data = try export.csv()
        } else {
            data = try CLIJSON.data(export) + Data("\n".utf8)
        }
        if let output {
            try data.write(to: URL(fileURLWithPath: output), options: .atomic)
            print("Wrote \(export.rows.count) rows to \(output).")
        } else {
            FileHandle.standardOutput.write(data)
        }
    }
}
