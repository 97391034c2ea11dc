import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Notifications in the reader's language: texts from the catalogs (catalogs/notifications/),
/// amounts formatted by the locale with Foundation. The exact strings, spaces included (Czech
/// groups digits with a no-break space; German and Spanish put one before the symbol).
@Suite("Notification texts in the user's language")
struct NotificationTextTests {
    /// A debt reminder of 123,456.50 INR, 1,234.50 CZK, EUR and USD, and 1,235 JPY, in each language.
    static let reminders: [(String, String, String)] = [
        ("en", "INR", "You have owed ₹123,456.50 for more than 14 days: settle up"),
        ("en", "CZK", "You have owed CZK\u{00A0}1,234.50 for more than 14 days: settle up"),
        ("en", "EUR", "You have owed €1,234.50 for more than 14 days: settle up"),
        ("en", "JPY", "You have owed ¥1,235 for more than 14 days: settle up"),
        ("en", "USD", "You have owed $1,234.50 for more than 14 days: settle up"),
        ("en-IN", "INR", "You have owed ₹1,23,456.50 for more than 14 days: settle up"),
        ("en-IN", "CZK", "You have owed CZK\u{00A0}1,234.50 for more than 14 days: settle up"),
        ("en-IN", "EUR", "You have owed €1,234.50 for more than 14 days: settle up"),
        ("en-IN", "JPY", "You have owed JP¥1,235 for more than 14 days: settle up"),
        ("en-IN", "USD", "You have owed $1,234.50 for more than 14 days: settle up"),
        ("hi-IN", "INR", "आप पर 14 दिनों से अधिक समय से ₹1,23,456.50 बकाया है: कृपया हिसाब चुकाएँ"),
        ("hi-IN", "CZK", "आप पर 14 दिनों से अधिक समय से CZK\u{00A0}1,234.50 बकाया है: कृपया हिसाब चुकाएँ"),
        ("hi-IN", "EUR", "आप पर 14 दिनों से अधिक समय से €1,234.50 बकाया है: कृपया हिसाब चुकाएँ"),
        ("hi-IN", "JPY", "आप पर 14 दिनों से अधिक समय से JP¥1,235 बकाया है: कृपया हिसाब चुकाएँ"),
        ("hi-IN", "USD", "आप पर 14 दिनों से अधिक समय से $1,234.50 बकाया है: कृपया हिसाब चुकाएँ"),
        ("cs", "INR", "Dlužíte 123\u{00A0}456,50\u{00A0}INR déle než 14 dní: vyrovnejte se prosím"),
        ("cs", "CZK", "Dlužíte 1\u{00A0}234,50\u{00A0}Kč déle než 14 dní: vyrovnejte se prosím"),
        ("cs", "EUR", "Dlužíte 1\u{00A0}234,50\u{00A0}€ déle než 14 dní: vyrovnejte se prosím"),
        ("cs", "JPY", "Dlužíte 1\u{00A0}235\u{00A0}JP¥ déle než 14 dní: vyrovnejte se prosím"),
        ("cs", "USD", "Dlužíte 1\u{00A0}234,50\u{00A0}US$ déle než 14 dní: vyrovnejte se prosím"),
        ("de", "INR", "Du schuldest seit mehr als 14 Tagen 123.456,50\u{00A0}₹: bitte rechne ab"),
        ("de", "CZK", "Du schuldest seit mehr als 14 Tagen 1.234,50\u{00A0}CZK: bitte rechne ab"),
        ("de", "EUR", "Du schuldest seit mehr als 14 Tagen 1.234,50\u{00A0}€: bitte rechne ab"),
        ("de", "JPY", "Du schuldest seit mehr als 14 Tagen 1.235\u{00A0}¥: bitte rechne ab"),
        ("de", "USD", "Du schuldest seit mehr als 14 Tagen 1.234,50\u{00A0}$: bitte rechne ab"),
        ("es", "INR", "Debes 123.456,50\u{00A0}INR desde hace más de 14 días: salda tus cuentas"),
        ("es", "CZK", "Debes 1234,50\u{00A0}CZK desde hace más de 14 días: salda tus cuentas"),
        ("es", "EUR", "Debes 1234,50\u{00A0}€ desde hace más de 14 días: salda tus cuentas"),
        ("es", "JPY", "Debes 1235\u{00A0}JPY desde hace más de 14 días: salda tus cuentas"),
        ("es", "USD", "Debes 1234,50\u{00A0}US$ desde hace más de 14 días: salda tus cuentas"),
    ]

    static let added: [(String, String)] = [
        ("en", "Ada added an expense you share in: your share is $25.00"),
        ("en-IN", "Ada added an expense you share in: your share is $25.00"),
        ("hi-IN", "Ada ने एक खर्च जोड़ा जिसमें आपका हिस्सा है: आपका हिस्सा $25.00 है"),
        ("cs", "Ada přidal(a) výdaj, na kterém se podílíte: váš podíl je 25,00\u{00A0}US$"),
        ("de", "Ada hat eine Ausgabe hinzugefügt, an der du beteiligt bist: dein Anteil beträgt 25,00\u{00A0}$"),
        ("es", "Ada añadió un gasto que compartes: tu parte es 25,00\u{00A0}US$"),
    ]

    static let nudges: [(String, String)] = [
        ("en", "Ada asks you to settle up: you owe €12.50 and ¥500"),
        ("en-IN", "Ada asks you to settle up: you owe €12.50 and JP¥500"),
        ("hi-IN", "Ada आपसे हिसाब चुकाने को कह रहे हैं: आप पर €12.50 और JP¥500 बकाया है"),
        ("cs", "Ada vás žádá o vyrovnání: dlužíte 12,50\u{00A0}€ a\u{00A0}500\u{00A0}JP¥"),
        ("de", "Ada bittet dich abzurechnen: du schuldest 12,50\u{00A0}€ und 500\u{00A0}¥"),
        ("es", "Ada te pide que saldes cuentas: debes 12,50\u{00A0}€ y 500\u{00A0}JPY"),
    ]

    @Test("a debt reminder in en, en-IN, hi-IN, cs, de and es, with amounts in INR, CZK, EUR, JPY and USD (Indian grouping in en-IN and hi-IN)")
    func reminderTexts() {
        let amounts: [String: Int64] = ["INR": 12_345_650, "CZK": 123_450, "EUR": 123_450, "JPY": 1235, "USD": 123_450]
        for (language, currency, expected) in Self.reminders {
            let data = #"{"owed": \#(amounts[currency] ?? 0), "currency": "\#(currency)", "days": 14}"#
            #expect(NotificationText.body(.debtReminder, data: data, language: language) == expected, "\(language) \(currency)")
        }
    }

    @Test("an expense added and a nudge of two currencies, in each language")
    func expenseAndNudgeTexts() {
        for (language, expected) in Self.added {
            let data = #"{"share": "2500", "currency": "USD", "kind": "expense", "actor_name": "Ada"}"#
            #expect(NotificationText.body(.expenseAdded, data: data, language: language) == expected, "\(language)")
        }
        for (language, expected) in Self.nudges {
            let data = #"{"owed": [{"currency": "EUR", "balance": 1250}, {"currency": "JPY", "balance": 500}], "actor_name": "Ada"}"#
            #expect(NotificationText.body(.nudge, data: data, language: language) == expected, "\(language)")
        }
    }

    @Test("every catalog parses and has every key of the English one; a language without one reads English; other types keep their text")
    func catalogs() {
        #expect(NotificationText.languages == ["cs", "de", "en", "es", "hi"])
        let english = Set(NotificationText.keys(of: "en"))
        #expect(english.count == 14)
        for language in NotificationText.languages {
            #expect(Set(NotificationText.keys(of: language)) == english, "\(language)")
        }
        // French has no catalog: English words, French money.
        #expect(
            NotificationText.body(.debtReminder, data: #"{"owed": 100, "currency": "USD", "days": 3}"#, language: "fr-FR")
                == "You have owed 1,00\u{00A0}$US for more than 3 days: settle up")
        #expect(NotificationText.body(.newPost, data: "{}", language: "de") == nil)
    }

    @Test("language tags: checked, kept in their conventional case; a device's locale sets an unset language")
    func tags() throws {
        #expect(try LanguageTag.parse("HI-in", field: "language") == "hi-IN")
        #expect(try LanguageTag.parse("sr-latn-rs", field: "language") == "sr-Latn-RS")
        for bad in ["", "e", "english", "en_US", "en-", "en-US-x-y-z"] {
            #expect(throws: ServiceError.self, "\(bad)") { try LanguageTag.parse(bad, field: "language") }
        }
        #expect(LanguageTag.canonical("en_in") == "en-IN")
    }

    @Test("the API lists a user's notifications, and push sends them, in the user's language; the device's locale sets it when unset")
    func inTheUsersLanguage() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            // The member's phone says Czech; a later one in German does not change it.
            _ = try await services.devices.register(
                token: String(repeating: "ab", count: 32), environment: .sandbox, bundleID: "app.orbitcove.ios", locale: "cs_CZ", as: cast.member)
            _ = try await services.devices.register(
                token: String(repeating: "cd", count: 32), environment: .sandbox, bundleID: "app.orbitcove.ios", locale: "de-DE", as: cast.member)
            #expect(try await services.users.get(cast.member, as: cast.member).language == "cs-CZ")
            _ = try await services.expenses.addExpense(
                in: cast.community, description: "Dres", total: try Money(parsing: "2469.00", currency: try #require(Currency("CZK"))),
                paidBy: cast.admin, split: .equal([cast.admin, cast.member]), as: cast.admin)
            let czech = try #require(try await services.notifications.list(as: cast.member).items.first)
            #expect(czech.body == "Ada Admin přidal(a) výdaj, na kterém se podílíte: váš podíl je 1\u{00A0}234,50\u{00A0}Kč", "\(czech.body)")
            // The user picks Hindi: the same notification now reads in Hindi, amounts by its locale.
            let user = try await services.users.updateProfile(language: "hi-IN", as: cast.member)
            #expect(user.language == "hi-IN")
            let hindi = try #require(try await services.notifications.list(as: cast.member).items.first)
            #expect(hindi.body == "Ada Admin ने एक खर्च जोड़ा जिसमें आपका हिस्सा है: आपका हिस्सा CZK\u{00A0}1,234.50 है", "\(hindi.body)")
            let bad = await serviceError { try await services.users.updateProfile(language: "klingon!", as: cast.member) }
            #expect(bad?.field == "language")
            // Push: what APNs is sent is in the user's language.
            let pushes = BodyRecorder()
            _ = try await services.notifications.deliverPending(using: pushes)
            let sent = await pushes.bodies
            #expect(!sent.isEmpty && sent.allSatisfy { $0 == hindi.body }, "\(sent)")
        }
    }
}

/// The bodies of the pushes sent.
actor BodyRecorder: PushSender {
    var bodies: [String] = []
    func send(_ push: Push) async -> PushOutcome {
        bodies.append(push.notification.body)
        return .sent(id: nil)
    }
}
