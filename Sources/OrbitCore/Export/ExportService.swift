import CSV
package import Foundation
import OrbitPostgres

/// Export (issue 24, item 7): a community's money as one table, for a spreadsheet or an
/// accountant: transactions (expenses, settlements) with their payers and splits, dues with
/// their payments. Amounts are decimals in their currency's units, with the currency.
package struct ExportService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }
}

extension ExportService {
    /// Every live transaction dated from `from` to `to` (inclusive; open when nil) with its payers
    /// and splits, then every dues due in that range with its payments. Any member may export.
    package func export(in community: CommunityID, from: CivilDate? = nil, to: CivilDate? = nil, as actor: UserID) async throws -> MoneyExport {
        try await runner.asUserReading(actor) { connection in
            try await runner.requireMember(actor, of: community, on: connection)
            let results = try await connection.pipeline([
                """
                SELECT t.id, t.transaction_date, t.type::text AS type, t.description, t.paid_by, t.total_amount, t.currency,
                    coalesce(k.name, t.category::text) AS category, t.linked_event_id, t.created_at
                FROM transactions t LEFT JOIN expense_categories k ON k.id = t.category_id
                WHERE t.community_id = \(community) AND t.deleted_at IS NULL
                  AND (\(from)::date IS NULL OR t.transaction_date >= \(from)) AND (\(to)::date IS NULL OR t.transaction_date <= \(to))
                ORDER BY t.transaction_date, t.created_at, t.id
                """,
                """
                SELECT p.transaction_id, p.id, p.user_id, p.amount FROM transaction_payers p JOIN transactions t ON t.id = p.transaction_id
                WHERE t.community_id = \(community) AND t.deleted_at IS NULL
                  AND (\(from)::date IS NULL OR t.transaction_date >= \(from)) AND (\(to)::date IS NULL OR t.transaction_date <= \(to))
                ORDER BY p.user_id
                """,
                """
                SELECT s.transaction_id, s.id, s.user_id, f.name AS family_member_name, s.amount, s.is_settled
                FROM splits s JOIN transactions t ON t.id = s.transaction_id LEFT JOIN family_members f ON f.id = s.family_member_id
                WHERE t.community_id = \(community) AND t.deleted_at IS NULL
                  AND (\(from)::date IS NULL OR t.transaction_date >= \(from)) AND (\(to)::date IS NULL OR t.transaction_date <= \(to))
                ORDER BY s.user_id, s.family_member_id NULLS FIRST
                """,
                """
                SELECT d.id, d.due_date, d.name, d.amount, d.currency FROM dues d
                WHERE d.community_id = \(community)
                  AND (\(from)::date IS NULL OR d.due_date >= \(from)) AND (\(to)::date IS NULL OR d.due_date <= \(to))
                ORDER BY d.due_date, d.created_at, d.id
                """,
                """
                SELECT p.dues_id, p.id, p.user_id, p.amount_paid, p.paid_at, p.payment_method, d.currency
                FROM dues_payments p JOIN dues d ON d.id = p.dues_id
                WHERE d.community_id = \(community)
                  AND (\(from)::date IS NULL OR d.due_date >= \(from)) AND (\(to)::date IS NULL OR d.due_date <= \(to))
                ORDER BY p.paid_at, p.id
                """,
            ])
            var payers: [UUID: [MoneyExport.Row]] = [:]
            var splits: [UUID: [MoneyExport.Row]] = [:]
            var currencies: [UUID: Currency] = [:]
            var rows: [MoneyExport.Row] = []
            for row in results[0] {
                let (id, date, type, description, paidBy, total, code) = try row.decode((UUID, CivilDate, String, String, UUID, Int32, String).self)
                let currency = try Currency.parse(code)
                currencies[id] = currency
                rows.append(
                    MoneyExport.Row(
                        record: type, id: id, parentID: nil, date: date, description: description, userID: paidBy, amount: total,
                        currency: currency, category: try row.decode("category"), eventID: try row.decode("linked_event_id")))
            }
            for row in results[1] {
                let (transaction, id, user, amount) = try row.decode((UUID, UUID, UUID, Int32).self)
                guard let currency = currencies[transaction] else { continue }
                payers[transaction, default: []].append(
                    MoneyExport.Row(record: "payer", id: id, parentID: transaction, userID: user, amount: amount, currency: currency))
            }
            for row in results[2] {
                let (transaction, id, user, child, amount, settled) = try row.decode((UUID, UUID, UUID, String?, Int32, Bool).self)
                guard let currency = currencies[transaction] else { continue }
                splits[transaction, default: []].append(
                    MoneyExport.Row(
                        record: "split", id: id, parentID: transaction, userID: user, forName: child, amount: amount, currency: currency,
                        settled: settled))
            }
            // Each transaction followed by its payers and splits.
            var ordered: [MoneyExport.Row] = []
            for row in rows {
                ordered.append(row)
                ordered += payers[row.id] ?? []
                ordered += splits[row.id] ?? []
            }
            var payments: [UUID: [MoneyExport.Row]] = [:]
            for row in results[4] {
                let (dues, id, user, amount, paidAt, method, code) = try row.decode((UUID, UUID, UUID, Int32, Date, String?, String).self)
                payments[dues, default: []].append(
                    MoneyExport.Row(
                        record: "dues_payment", id: id, parentID: dues, date: CivilDate(containing: paidAt),
                        description: method, userID: user, amount: amount, currency: try Currency.parse(code)))
            }
            for row in results[3] {
                let (id, due, name, amount, code) = try row.decode((UUID, CivilDate, String, Int32, String).self)
                ordered.append(
                    MoneyExport.Row(
                        record: "dues", id: id, parentID: nil, date: due, description: name, amount: amount, currency: try Currency.parse(code)))
                ordered += payments[id] ?? []
            }
            return MoneyExport(communityID: community, from: from, to: to, rows: ordered)
        }
    }
}

/// A community's money as rows (`ExportService.export`), written as RFC 4180 CSV or JSON.
package struct MoneyExport: Sendable, Encodable {
    /// One line: a transaction (record expense, settlement or dues), a payer or split of the
    /// transaction before it (`parent_id`), dues or a dues payment.
    package struct Row: Sendable, Encodable {
        package var record: String
        package var id: UUID
        package var parentID: UUID?
        package var date: CivilDate?
        package var description: String?
        package var userID: UUID?
        /// A split for a family member: their name.
        package var forName: String?
        /// A decimal in the currency's units ("12.50").
        package var amount: String
        package var currency: String
        package var category: String?
        package var eventID: UUID?
        package var settled: Bool?

        init(
            record: String, id: UUID, parentID: UUID?, date: CivilDate? = nil, description: String? = nil, userID: UUID? = nil,
            forName: String? = nil, amount: Int32, currency: Currency, category: String? = nil, eventID: UUID? = nil, settled: Bool? = nil
        ) {
            self.record = record
            self.id = id
            self.parentID = parentID
            self.date = date
            self.description = description
            self.userID = userID
            self.forName = forName
            self.amount = Money(minorUnits: Int64(amount), currency: currency).decimalString
            self.currency = currency.code
            self.category = category
            self.eventID = eventID
            self.settled = settled
        }

        enum CodingKeys: String, CodingKey {
            case record, id, parentID = "parent_id", date, description, userID = "user_id", forName = "for", amount, currency, category
            case eventID = "event_id", settled
        }

        /// The CSV columns, in `header` order. The text people typed (a description, a family
        /// member's name) is `spreadsheetSafe`; the rest is the server's own (ids, dates,
        /// amounts, codes), so amounts stay numbers.
        var fields: [String] {
            [
                record, id.uuidString.lowercased(), parentID?.uuidString.lowercased() ?? "", date?.description ?? "",
                MoneyExport.spreadsheetSafe(description ?? ""), userID?.uuidString.lowercased() ?? "", MoneyExport.spreadsheetSafe(forName ?? ""),
                amount, currency, category ?? "", eventID?.uuidString.lowercased() ?? "", settled.map { $0 ? "true" : "false" } ?? "",
            ]
        }
    }

    /// A cell a spreadsheet will not run as a formula (OWASP, "CSV Injection"): text beginning
    /// with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`, which spreadsheets
    /// show as text and do not display. Applied to the text people typed only.
    package static func spreadsheetSafe(_ text: String) -> String {
        guard let first = text.unicodeScalars.first, ["=", "+", "-", "@", "\t", "\r"].contains(first) else { return text }
        return "'" + text
    }

    package static let header = [
        "record", "id", "parent_id", "date", "description", "user_id", "for", "amount", "currency", "category", "event_id", "settled",
    ]

    package var communityID: CommunityID
    package var from: CivilDate?
    package var to: CivilDate?
    package var rows: [Row]

    enum CodingKeys: String, CodingKey { case communityID = "community_id", from, to, rows }

    /// RFC 4180: a header line, CRLF line ends, fields quoted where they hold a comma, a quote or
    /// a line break (CSV.swift's writer), UTF-8.
    package func csv() throws -> Data {
        let writer = try CSVWriter(stream: .toMemory(), newline: .crlf)
        try writer.write(row: Self.header)
        for row in rows { try writer.write(row: row.fields) }
        writer.stream.close()
        guard let data = writer.stream.property(forKey: .dataWrittenToMemoryStreamKey) as? Data else {
            throw ServiceError.conflict("The CSV could not be written.")
        }
        // RFC 4180: each record ends with CRLF, the last one too.
        return data + Data("\r\n".utf8)
    }
}
