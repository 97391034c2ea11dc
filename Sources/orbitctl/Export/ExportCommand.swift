import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl export`: a community's money for a spreadsheet or an accountant.
struct ExportCommand: ActingCommand {
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
    @Option(name: .customLong("output"), help: ArgumentHelp("Write to this file instead of standard output.", valueName: "output"))
    var file: String?
    @OptionGroup var acting: ActingOptions
    /// No `--json`: `--format json` prints the export itself.
    var output: TextOutput { TextOutput() }

    /// The export as written, and how many rows it has.
    struct Exported: Encodable {
        let data: Data
        let rows: Int
    }

    /// --from and --to (validate() parses them before connecting).
    private var days: (from: CivilDate?, to: CivilDate?) {
        get throws {
            (try from.map { try CivilDate.parse($0, field: "from") }, try to.map { try CivilDate.parse($0, field: "to") })
        }
    }

    func validate() throws {
        guard format == "csv" || format == "json" else { throw ValidationError("--format must be csv or json.") }
        _ = try days
    }

    /// Reads the export and renders it; with --output, writes the file.
    func act(_ services: OrbitServices, as actor: UserID) async throws -> Exported {
        let days = try days
        let export = try await services.exports.export(in: community, from: days.from, to: days.to, as: actor)
        let data = format == "csv" ? try export.csv() : try CLIJSON.data(export) + Data("\n".utf8)
        if let file { try data.write(to: URL(fileURLWithPath: file), options: .atomic) }
        return Exported(data: data, rows: export.rows.count)
    }

    func tell(_ exported: Exported) {
        if let file {
            print("Wrote \(exported.rows) rows to \(file).")
        } else {
            FileHandle.standardOutput.write(exported.data)
        }
    }
}
