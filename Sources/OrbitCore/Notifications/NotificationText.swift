package import Foundation

/// The catalogs of `catalogs/notifications/`, built into the module by the EmbedFiles plugin.
enum EmbeddedCatalogs {}

/// A BCP 47 language tag as OrbitCove keeps it (`users.language`): a language of two or three
/// letters, then up to three subtags of 2 to 8 letters and digits (a script, a region, a
/// variant), each in its conventional case (`hi-IN`, `sr-Latn-RS`, `de-CH`).
package enum LanguageTag {
    /// `text` in its conventional case, `_` read as `-` (a device's `en_IN`).
    package static func canonical(_ text: String) -> String {
        let parts = text.split { $0 == "-" || $0 == "_" }
        return parts.enumerated().map { index, part in
            if index == 0 { return part.lowercased() }
            if part.count == 4, part.allSatisfy(\.isLetter) { return part.prefix(1).uppercased() + part.dropFirst().lowercased() }
            if part.count == 2 { return part.uppercased() }
            return part.lowercased()
        }.joined(separator: "-")
    }

    /// `text` as a tag, in its conventional case.
    /// - Throws: `ServiceError.invalidInput(field:)` unless it is one.
    package static func parse(_ text: String, field: String) throws -> String {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.utf8.count), first.utf8.allSatisfy(Validate.isLetter), parts.count <= 4,
            parts.dropFirst().allSatisfy({ (2...8).contains($0.utf8.count) && $0.utf8.allSatisfy { Validate.isLetter($0) || Validate.isDigit($0) } })
        else {
            throw ServiceError.invalidInput(field: field, reason: "must be a BCP 47 language tag such as en, hi-IN or pt-BR")
        }
        return canonical(text)
    }
}

/// The texts of notifications in the reader's language (docs/api.md, "Notifications"): money's
/// types are written from the catalog of the language (`catalogs/notifications/<language>.json`,
/// English when there is none for it) with the values their `data` keeps, amounts formatted by
/// the language's locale with Foundation (₹1,23,456.50 in hi-IN, 1 234,50 Kč in cs). The stored
/// title and body are the English text, for readers that do not localize (the change feed);
/// other types keep them.
package enum NotificationText {
    /// language → key → template.
    static let catalogs: [String: [String: String]] = {
        var catalogs: [String: [String: String]] = [:]
        for file in EmbeddedCatalogs.encoded where file.path.hasPrefix("catalogs/notifications/") {
            let language = String(file.path.dropFirst("catalogs/notifications/".count).dropLast(".json".count))
            // A catalog that does not parse is left out (English stands in); CatalogTests fails on it.
            guard let data = Data(base64Encoded: file.base64), let catalog = try? JSONDecoder().decode([String: String].self, from: data) else {
                continue
            }
            catalogs[language] = catalog
        }
        return catalogs
    }()

    /// The languages with a catalog.
    package static var languages: [String] { catalogs.keys.sorted() }

    /// The keys of `language`'s own catalog.
    package static func keys(of language: String) -> [String] { catalogs[language].map { Array($0.keys) } ?? [] }

    /// The catalog for `language`: its own, else its base language's (`hi` for `hi-IN`), else English.
    static func catalog(for language: String?) -> [String: String] {
        let tag = language ?? "en"
        let base = String(tag.prefix { $0 != "-" })
        return catalogs[tag] ?? catalogs[base] ?? catalogs["en"] ?? [:]
    }

    /// `minorUnits` of `currency` as `locale` writes money.
    package static func money(_ minorUnits: Int64, currency code: String, locale: Locale) -> String {
        let exponent = Currency(code)?.exponent ?? 2
        let amount = Decimal(sign: minorUnits < 0 ? .minus : .plus, exponent: -exponent, significand: Decimal(minorUnits.magnitude))
        return amount.formatted(.currency(code: code).locale(locale))
    }

    /// A number of `data`: JSON's, or text (a share is stored as text, bigint-safe).
    static func integer(_ value: Any?) -> Int64? {
        if let number = value as? NSNumber { return number.int64Value }
        if let text = value as? String { return Int64(text) }
        return nil
    }

    /// The body of a notification of `type` for a reader of `language`, from its `data`; nil for
    /// a type no catalog writes (its stored body stands).
    package static func body(_ type: NotificationType, data: String, language: String?) -> String? {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] else { return nil }
        let catalog = catalog(for: language)
        let locale = Locale(identifier: language ?? "en")
        let actor = (object["actor_name"] as? String) ?? catalog["someone"] ?? "Someone"
        let key: String
        var values: [String: String] = ["actor": actor]
        switch type {
        case .expenseAdded, .expenseEdited, .expenseDeleted, .settlementRecorded:
            guard let share = integer(object["share"]), let currency = object["currency"] as? String else { return nil }
            values["share"] = money(share, currency: currency, locale: locale)
            key =
                type == .expenseAdded && object["kind"] as? String == "income"
                ? "income_added" : type.rawValue
        case .nudge:
            guard let owed = object["owed"] as? [[String: Any]] else { return nil }
            values["owed"] = owed.compactMap { entry in
                guard let amount = integer(entry["balance"]), let currency = entry["currency"] as? String else { return nil }
                return money(amount, currency: currency, locale: locale)
            }.formatted(.list(type: .and).locale(locale))
            key = "nudge"
        case .weeklyDigest:
            guard let money = object["money"] as? [[String: Any]] else { return nil }
            return digest(money, catalog: catalog, locale: locale)
        case .debtReminder:
            guard let owed = integer(object["owed"]), let currency = object["currency"] as? String, let days = integer(object["days"]) else {
                return nil
            }
            values["owed"] = money(owed, currency: currency, locale: locale)
            values["days"] = days.formatted(.number.locale(locale))
            key = "debt_reminder"
        default:
            return nil
        }
        guard let template = catalog[key] ?? self.catalog(for: "en")[key] else { return nil }
        return Template.fill(template, values)
    }

    /// The weekly digest: the week's new expenses with a share of the user's (how many, their
    /// shares per currency), and where the user stands per currency across their communities.
    static func digest(_ money: [[String: Any]], catalog: [String: String], locale: Locale) -> String? {
        func integer(_ value: Any?) -> Int64 { Self.integer(value) ?? 0 }
        func amounts(_ entries: [(Int64, String)]) -> String {
            entries.map { Self.money($0.0, currency: $0.1, locale: locale) }.formatted(.list(type: .and).locale(locale))
        }
        let expenses = money.map { integer($0["expenses"]) }.reduce(0, +)
        let shares = money.compactMap { entry -> (Int64, String)? in
            guard let currency = entry["currency"] as? String, integer(entry["share"]) > 0 else { return nil }
            return (integer(entry["share"]), currency)
        }
        let balances = money.compactMap { entry -> (Int64, String)? in
            guard let currency = entry["currency"] as? String, integer(entry["balance"]) != 0 else { return nil }
            return (integer(entry["balance"]), currency)
        }
        let owe = balances.filter { $0.0 < 0 }.map { (-$0.0, $0.1) }
        let owed = balances.filter { $0.0 > 0 }
        let balance: String?
        switch (owe.isEmpty, owed.isEmpty) {
        case (true, true): balance = catalog["digest_even"]
        case (false, true): balance = catalog["digest_owe"].map { Template.fill($0, ["amounts": amounts(owe)]) }
        case (true, false): balance = catalog["digest_owed"].map { Template.fill($0, ["amounts": amounts(owed)]) }
        case (false, false): balance = catalog["digest_both"].map { Template.fill($0, ["owe": amounts(owe), "owed": amounts(owed)]) }
        }
        guard let balance else { return nil }
        if expenses == 0 {
            return catalog["weekly_digest_quiet"].map { Template.fill($0, ["balance": balance]) }
        }
        return catalog["weekly_digest"].map {
            Template.fill($0, ["expenses": expenses.formatted(.number.locale(locale)), "shares": amounts(shares), "balance": balance])
        }
    }
}

extension AppNotification {
    /// This notification as a reader of `language` reads it (`NotificationText`).
    package func localized(to language: String?) -> AppNotification {
        var copy = self
        if let body = NotificationText.body(type, data: data, language: language) { copy.body = body }
        return copy
    }
}
