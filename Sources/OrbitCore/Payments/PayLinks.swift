import Foundation

/// One way to pay a settle-up suggestion (docs/money.md, "Getting paid back"): a provider and
/// the payee's handle, made into a link to open or a bank payment's QR code to show. Paid that
/// way, the settlement is recorded with `method` as its method.
package struct PayOption: Sendable, Codable, Equatable {
    /// The provider's id, and the settlement's method when paid this way.
    package var method: String
    package var name: String
    package var icon: String?
    package var payload: PayProvider.Payload
    /// For a link: the address to open (https, or an app's scheme such as upi:).
    package var url: String?
    /// For an EPC or SPAYD payload: the text of the QR code a banking app scans.
    package var qr: String?

    enum CodingKeys: String, CodingKey { case method, name, icon, payload, url, qr }
}

/// How a suggestion and a handle become a pay option: the provider's template filled in, or a
/// bank payment's QR payload.
enum PayLinks {
    static let placeholders: Set<String> = ["handle", "amount", "currency", "note", "name"]

    /// A template makes a link: a scheme (not javascript:, data:, file: or vbscript:), `{handle}`,
    /// no other placeholder than `placeholders`, and visible ASCII only.
    /// - Throws: `ServiceError.invalidInput(field: "link_template")`.
    static func checkTemplate(_ template: String) throws {
        func refuse(_ reason: String) -> ServiceError { ServiceError.invalidInput(field: "link_template", reason: reason) }
        guard (1...1000).contains(template.utf8.count), template.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw refuse("must be 1 to 1000 visible ASCII characters")
        }
        guard let colon = template.firstIndex(of: ":"), let first = template.utf8.first, Validate.isLetter(first),
            template[..<colon].utf8.allSatisfy({ Validate.isLetter($0) || Validate.isDigit($0) || "+.-".utf8.contains($0) })
        else { throw refuse("must start with a scheme, such as https:") }
        let scheme = template[..<colon].lowercased()
        guard !["javascript", "data", "file", "vbscript"].contains(scheme) else { throw refuse("must not be a \(scheme): address") }
        var rest = Substring(template)
        var names: Set<String> = []
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else { throw refuse("has a { without its }") }
            let name = String(rest[rest.index(after: open)..<close])
            guard placeholders.contains(name) else {
                throw refuse("names {\(name)}: the placeholders are {handle}, {amount}, {currency}, {note} and {name}")
            }
            names.insert(name)
            rest = rest[rest.index(after: close)...]
        }
        guard template.filter({ $0 == "{" }).count == template.filter({ $0 == "}" }).count else { throw refuse("has a } without its {") }
        guard names.contains("handle") else { throw refuse("must contain {handle}") }
        guard URL(string: fill(template, handle: "h", amount: "1", currency: "EUR", note: "n", name: "n")) != nil else {
            throw refuse("does not make an address")
        }
    }

    /// `amount` minor units of `currency` as `format` writes them: `1250`, or `12.50` (JPY `1250`, BHD `1.250`).
    static func amount(_ amount: Int64, _ currency: Currency, _ format: PayProvider.AmountFormat) -> String {
        switch format {
        case .minor: return String(amount)
        case .decimal: return decimal(amount, exponent: currency.exponent)
        }
    }

    static func decimal(_ amount: Int64, exponent: Int) -> String {
        guard exponent > 0 else { return String(amount) }
        let scale = (0..<exponent).reduce(Int64(1)) { result, _ in result * 10 }
        let fraction = String(amount.magnitude % UInt64(scale))
        let sign = amount < 0 ? "-" : ""
        return sign + String(amount.magnitude / UInt64(scale)) + "." + String(repeating: "0", count: exponent - fraction.count) + fraction
    }

    /// RFC 3986's unreserved characters: what a value may keep unencoded anywhere in a URL.
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    /// A handle keeps its @ too (a UPI id in a query, a Lightning address).
    static let handleCharacters = unreserved.union(CharacterSet(charactersIn: "@"))

    static func fill(_ template: String, handle: String, amount: String, currency: String, note: String, name: String) -> String {
        func encoded(_ text: String, _ allowed: CharacterSet) -> String { text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
        return Template.fill(
            template,
            [
                "handle": encoded(handle, handleCharacters), "amount": amount, "currency": currency, "note": encoded(note, unreserved),
                "name": encoded(name, unreserved),
            ])
    }

    /// The first `limit` characters of `text`.
    static func cut(_ text: String, _ limit: Int) -> String { String(text.prefix(limit)) }

    /// The EPC's QR code for a SEPA credit transfer (EPC069-12, version 002, UTF-8): nil when the
    /// amount is not 0.01 to 999,999,999.99 euros.
    static func epcQR(account: BankAccount, amount: Int64, note: String) -> String? {
        guard (1...99_999_999_999).contains(amount) else { return nil }
        return [
            "BCD", "002", "1", "SCT", account.bic ?? "", cut(account.holder, 70), account.iban, "EUR" + decimal(amount, exponent: 2), "", "",
            cut(note.replacingOccurrences(of: "\n", with: " "), 140),
        ].joined(separator: "\n")
    }

    /// The Czech banks' Short Payment Descriptor (SPAYD 1.0, QR Platba): nil when the amount
    /// takes more than its 10 characters.
    static func spayd(account: CzechAccount, amount: Int64, note: String) -> String? {
        let written = decimal(amount, exponent: 2)
        guard amount > 0, written.count <= 10 else { return nil }
        // A value holds no "*" (the separator): percent-encoded, as the format says.
        let message = cut(note, 60).replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "*", with: "%2A")
        return "SPD*1.0*ACC:\(account.iban)*AM:\(written)*CC:CZK*MSG:\(message)"
    }

    /// The option `provider` makes of a payment of `amount` in `currency` to `handle`, or nil
    /// when it cannot (an EPC code outside euros, an amount out of the format's range).
    static func option(
        _ provider: PayProvider, handle: PaymentHandles, amount: Int64, currency: Currency, note: String, payee: String
    ) -> PayOption? {
        var option = PayOption(method: provider.id, name: provider.name, icon: provider.icon, payload: provider.payload)
        switch provider.payload {
        case .link:
            guard let template = provider.linkTemplate, let value = handle.entries.first(where: { $0.kind == provider.handleKind })?.handle
            else { return nil }
            option.url = fill(
                template, handle: value, amount: Self.amount(amount, currency, provider.amountFormat), currency: currency.code, note: note,
                name: payee)
        case .epcQR:
            guard currency.code == "EUR", let account = handle.iban else { return nil }
            option.qr = epcQR(account: account, amount: amount, note: note)
        case .spayd:
            // Stored only once parsed (PaymentHandles.validated), so it parses again.
            guard currency.code == "CZK", let text = handle.czechAccount, let account = try? CzechAccount.parse(text) else { return nil }
            option.qr = spayd(account: account, amount: amount, note: note)
        }
        return option.url == nil && option.qr == nil ? nil : option
    }
}
