package import Foundation
import OrbitPostgres

/// A way to pay a handle (Settle Up's `paymentProviders`; docs/money.md, "Getting paid back"),
/// kept by operators: what the app shows, and how a settle-up suggestion becomes a link or a bank
/// payment's QR code for the payee's handle of `handleKind`.
package struct PayProvider: Sendable, Codable, Equatable {
    /// What the provider makes of a suggestion.
    package enum Payload: String, DatabaseEnum {
        /// A link from `linkTemplate`.
        case link
        /// The EPC's QR code for a SEPA credit transfer (EPC069-12), to an IBAN in euros.
        case epcQR = "epc_qr"
        /// The Czech banks' Short Payment Descriptor (QR Platba), to a Czech account in crowns.
        case spayd

        package var description: String { rawValue }
    }

    /// How `{amount}` is written: in minor units (`1250`), or as a decimal with the currency's
    /// exponent (`12.50`, JPY `1250`, BHD `1.250`).
    package enum AmountFormat: String, DatabaseEnum {
        case minor, decimal
        package var description: String { rawValue }
    }

    /// Its short name, which a settlement paid through it records as its method.
    package var id: String
    package var name: String
    /// An https address of its icon.
    package var icon: String?
    package var handleKind: PaymentHandleKind
    package var payload: Payload
    /// For `.link`: `{handle}` and any of `{amount}`, `{currency}`, `{note}`, `{name}`.
    package var linkTemplate: String?
    /// Shown before the handle's field (`revolut.me/`, `$`).
    package var handlePrefix: String
    package var amountFormat: AmountFormat
    /// ISO 4217 codes; empty: any.
    package var currencies: [String]
    /// ISO 3166-1 alpha-2 codes; empty: anywhere.
    package var regions: [String]
    /// `ios`, `android`, `web`; empty: every one.
    package var platforms: [String]
    package var active: Bool
    package var order: Int
    package var updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case id, name, icon, handleKind = "handle_kind", payload, linkTemplate = "link_template", handlePrefix = "handle_prefix"
        case amountFormat = "amount_format", currencies, regions, platforms, active, order, updatedAt = "updated_at"
    }

    static let columns =
        "id, name, icon, handle_kind, payload, link_template, handle_prefix, amount_format, currencies, regions, platforms, active, sort_order, updated_at"

    init(row: PostgresRow) throws {
        var order: Int32
        (id, name, icon, handleKind, payload, linkTemplate, handlePrefix, amountFormat, currencies, regions, platforms, active, order, updatedAt) =
            try row.decode(
                (String, String, String?, PaymentHandleKind, Payload, String?, String, AmountFormat, [String], [String], [String], Bool, Int32, Date)
                    .self)
        self.order = Int(order)
    }

    /// Offered for a payment in `currency` on `platform` in `region` (nil: any).
    func offers(_ currency: String?, platform: String?, region: String?) -> Bool {
        (currency.map { currencies.isEmpty || currencies.contains($0) } ?? true)
            && (platform.map { platforms.isEmpty || platforms.contains($0) } ?? true)
            && (region.map { regions.isEmpty || regions.contains($0) } ?? true)
    }
}

/// A provider as an operator adds or changes it (`orbitctl providers add|update`): nil leaves a
/// field as it is on an update, and takes the default on an add.
package struct PayProviderChange: Sendable {
    package var name: String?
    package var icon: String??
    package var handleKind: PaymentHandleKind?
    package var payload: PayProvider.Payload?
    package var linkTemplate: String??
    package var handlePrefix: String?
    package var amountFormat: PayProvider.AmountFormat?
    package var currencies: [String]?
    package var regions: [String]?
    package var platforms: [String]?
    package var active: Bool?
    package var order: Int?

    package init(
        name: String? = nil, icon: String?? = nil, handleKind: PaymentHandleKind? = nil, payload: PayProvider.Payload? = nil,
        linkTemplate: String?? = nil, handlePrefix: String? = nil, amountFormat: PayProvider.AmountFormat? = nil, currencies: [String]? = nil,
        regions: [String]? = nil, platforms: [String]? = nil, active: Bool? = nil, order: Int? = nil
    ) {
        self.name = name
        self.icon = icon
        self.handleKind = handleKind
        self.payload = payload
        self.linkTemplate = linkTemplate
        self.handlePrefix = handlePrefix
        self.amountFormat = amountFormat
        self.currencies = currencies
        self.regions = regions
        self.platforms = platforms
        self.active = active
        self.order = order
    }

    /// The change checked: each field as its column says, and a template that makes a link.
    /// - Throws: `ServiceError.invalidInput(field:)`.
    func validated() throws -> PayProviderChange {
        var change = self
        change.name = try name.map { try Validate.text($0, field: "name", limit: 60) }
        if let icon = icon ?? nil {
            guard icon.hasPrefix("https://"), icon.utf8.count <= 508, URL(string: icon)?.host?.isEmpty == false,
                icon.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F })
            else { throw ServiceError.invalidInput(field: "icon", reason: "must be an https address") }
        }
        if let template = linkTemplate ?? nil { try PayLinks.checkTemplate(template) }
        change.handlePrefix = try handlePrefix.map { try Validate.optionalText($0, field: "handle_prefix", limit: 60) }
        change.currencies = try currencies.map { codes in
            try codes.map { code in
                guard let currency = Currency(code) else {
                    throw ServiceError.invalidInput(field: "currencies", reason: "names \(code), which is not an ISO 4217 currency code")
                }
                return currency.code
            }
        }
        change.regions = try regions.map { codes in
            try codes.map { code in
                let region = code.uppercased()
                guard region.utf8.count == 2, region.utf8.allSatisfy(Validate.isLetter) else {
                    throw ServiceError.invalidInput(field: "regions", reason: "names \(code), which is not an ISO 3166-1 alpha-2 code")
                }
                return region
            }
        }
        change.platforms = try platforms.map { names in
            try names.map { name in
                guard ["ios", "android", "web"].contains(name) else {
                    throw ServiceError.invalidInput(field: "platforms", reason: "names \(name): platforms are ios, android and web")
                }
                return name
            }
        }
        if let order, !(Int(Int32.min)...Int(Int32.max)).contains(order) {
            throw ServiceError.invalidInput(field: "order", reason: "must fit in 32 bits")
        }
        return change
    }
}

extension PaymentService {
    /// Every provider, active or not, in order (operators).
    package func allProviders() async throws -> [PayProvider] {
        try await runner.asOperator { connection in
            try await connection.query("SELECT \(unescaped: PayProvider.columns) FROM payment_providers ORDER BY sort_order, id").map(
                PayProvider.init)
        }
    }

    /// The active providers the app offers on `platform` in `region` for `currency` (nil: any), in order.
    package func providers(platform: String? = nil, region: String? = nil, currency: Currency? = nil, as actor: UserID) async throws -> [PayProvider]
    {
        try await runner.asUserReading(actor) { connection in
            try await connection.query("SELECT \(unescaped: PayProvider.columns) FROM payment_providers WHERE active ORDER BY sort_order, id")
                .map(PayProvider.init)
        }
        .filter { $0.offers(currency?.code, platform: platform, region: region) }
    }

    /// Adds a provider (operators). A link takes a template; an EPC or SPAYD payload none.
    package func addProvider(id: String, _ change: PayProviderChange) async throws -> PayProvider {
        let idBytes = Array(id.utf8)
        guard (1...40).contains(idBytes.count), idBytes.first.map({ Validate.isDigit($0) || (0x61...0x7A).contains($0) }) == true,
            idBytes.allSatisfy({ Validate.isDigit($0) || (0x61...0x7A).contains($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") })
        else {
            throw ServiceError.invalidInput(field: "id", reason: "must be 1 to 40 lower-case letters, digits, _ and - (such as paypal_me)")
        }
        let change = try change.validated()
        guard let name = change.name else { throw ServiceError.invalidInput(field: "name", reason: "is required") }
        guard let kind = change.handleKind else { throw ServiceError.invalidInput(field: "handle_kind", reason: "is required") }
        let payload = change.payload ?? .link
        let template = change.linkTemplate ?? nil
        try Self.checkPayload(payload, kind: kind, template: template)
        return try await runner.asOperator { connection in
            try PayProvider(
                row: try await connection.query(
                    """
                    INSERT INTO payment_providers (id, name, icon, handle_kind, payload, link_template, handle_prefix, amount_format,
                        currencies, regions, platforms, active, sort_order)
                    VALUES (\(id), \(name), \(change.icon ?? nil), \(kind), \(payload), \(template), \(change.handlePrefix ?? ""),
                        \(change.amountFormat ?? .decimal), \(change.currencies ?? []), \(change.regions ?? []), \(change.platforms ?? []),
                        \(change.active ?? true), \(Int32(change.order ?? 0)))
                    RETURNING \(unescaped: PayProvider.columns)
                    """
                ).single())
        }
    }

    /// Changes a provider (operators); nil leaves a field as it is. `active: false` disables it.
    package func updateProvider(_ id: String, _ change: PayProviderChange) async throws -> PayProvider {
        let change = try change.validated()
        return try await runner.asOperator { connection in
            guard
                let current = try await connection.query(
                    "SELECT \(unescaped: PayProvider.columns) FROM payment_providers WHERE id = \(id) FOR UPDATE"
                ).first.map(PayProvider.init)
            else { throw ServiceError.notFound("Payment provider \(id)") }
            let kind = change.handleKind ?? current.handleKind
            let payload = change.payload ?? current.payload
            let template = change.linkTemplate ?? current.linkTemplate
            try Self.checkPayload(payload, kind: kind, template: template)
            return try PayProvider(
                row: try await connection.query(
                    """
                    UPDATE payment_providers SET name = \(change.name ?? current.name), icon = \(change.icon ?? current.icon),
                        handle_kind = \(kind), payload = \(payload), link_template = \(template),
                        handle_prefix = \(change.handlePrefix ?? current.handlePrefix), amount_format = \(change.amountFormat ?? current.amountFormat),
                        currencies = \(change.currencies ?? current.currencies), regions = \(change.regions ?? current.regions),
                        platforms = \(change.platforms ?? current.platforms), active = \(change.active ?? current.active),
                        sort_order = \(Int32(change.order ?? current.order))
                    WHERE id = \(id)
                    RETURNING \(unescaped: PayProvider.columns)
                    """
                ).single())
        }
    }

    /// A link takes a template; an EPC QR code pays an IBAN, a SPAYD a Czech account, and neither a template.
    private static func checkPayload(_ payload: PayProvider.Payload, kind: PaymentHandleKind, template: String?) throws {
        switch payload {
        case .link:
            guard template != nil else { throw ServiceError.invalidInput(field: "link_template", reason: "is required for a link") }
        case .epcQR, .spayd:
            guard template == nil else {
                throw ServiceError.invalidInput(field: "link_template", reason: "is not taken by an \(payload) payload, which the server writes")
            }
            let needed: PaymentHandleKind = payload == .epcQR ? .iban : .czechAccount
            guard kind == needed else { throw ServiceError.invalidInput(field: "handle_kind", reason: "must be \(needed) for an \(payload) payload") }
        }
    }
}
