import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// The query items of `url`, by name.
func queryItems(_ url: String) throws -> [String: String] {
    let components = try #require(URLComponents(string: url))
    return Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
}

@Suite("Getting paid back: payment handles, providers and pay links", .serialized)
struct PaymentTests {
    @Test("each handle is checked as its kind says (IBAN mod 97, the Czech weighted checksum, UPI, Lightning); a bad one names its field")
    func validation() throws {
        let good = try PaymentHandles(
            revolut: "@ada.l", paypalMe: "AdaLovelace", venmo: "@ada-l_1", cashApp: "$Ada1", upi: "ada.l@okaxis",
            iban: BankAccount(iban: "de89 3704 0044 0532 0130 00", bic: "cobadeffxxx", holder: " Ada Lovelace "), czechAccount: "19-2000145399/0800",
            lightning: "Ada@GetAlby.com", text: "Cash at practice"
        ).validated()
        #expect(good.revolut == "ada.l" && good.venmo == "ada-l_1" && good.cashApp == "Ada1" && good.lightning == "ada@getalby.com")
        #expect(good.iban == BankAccount(iban: "DE89370400440532013000", bic: "COBADEFFXXX", holder: "Ada Lovelace"))
        #expect(good.czechAccount == "19-2000145399/0800")
        // A Czech account's IBAN: CZ, check digits, bank, prefix in 6 digits, number in 10.
        #expect(try CzechAccount.parse("19-2000145399/0800").iban == "CZ6508000000192000145399")
        #expect(try CzechAccount.parse("2000145399/0800").iban == "CZ" + IBANCheck.digits("08000000002000145399") + "08000000002000145399")
        #expect(try IBAN.parse("CZ6508000000192000145399", field: "iban") == "CZ6508000000192000145399")
        #expect(try IBAN.parse("GB82 WEST 1234 5698 7654 32", field: "iban") == "GB82WEST12345698765432")

        func field(_ handles: PaymentHandles) -> String? {
            do {
                _ = try handles.validated()
                return nil
            } catch let error as ServiceError {
                return error.field
            } catch {
                return "\(error)"
            }
        }
        // One digit off: mod 97 catches it; a German IBAN one character short, its length.
        #expect(field(PaymentHandles(iban: BankAccount(iban: "DE89370400440532013001", holder: "Ada"))) == "iban.iban")
        #expect(field(PaymentHandles(iban: BankAccount(iban: "DE8937040044053201300", holder: "Ada"))) == "iban.iban")
        #expect(field(PaymentHandles(iban: BankAccount(iban: "DE89370400440532013000", bic: "COBA", holder: "Ada"))) == "iban.bic")
        #expect(field(PaymentHandles(iban: BankAccount(iban: "DE89370400440532013000", holder: " "))) == "iban.holder")
        // The Czech checksum: a digit of the number, or of the prefix, off.
        #expect(field(PaymentHandles(czechAccount: "19-2000145398/0800")) == "czech_account")
        #expect(field(PaymentHandles(czechAccount: "18-2000145399/0800")) == "czech_account")
        #expect(field(PaymentHandles(czechAccount: "2000145399/080")) == "czech_account")
        #expect(field(PaymentHandles(upi: "ada@ok@axis")) == "upi")
        #expect(field(PaymentHandles(upi: "ada")) == "upi")
        #expect(field(PaymentHandles(lightning: "ada@localhost")) == "lightning")
        #expect(field(PaymentHandles(lightning: "a da@getalby.com")) == "lightning")
        #expect(field(PaymentHandles(revolut: "ab")) == "revolut")
        #expect(field(PaymentHandles(paypalMe: "ada.lovelace")) == "paypal_me")
        #expect(field(PaymentHandles(venmo: "ada")) == "venmo")
        #expect(field(PaymentHandles(cashApp: "$1ada")) == "cash_app")
        #expect(field(PaymentHandles(text: String(repeating: "x", count: 501))) == "text")
    }

    @Test("a user puts their handles whole; the people who share a community read them, nobody else; deleting the account removes them")
    func handles() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            #expect(try await services.payments.handles(as: cast.member) == PaymentHandles())
            let put = try await services.payments.setHandles(
                PaymentHandles(revolut: "maxm", upi: "max@okaxis", iban: BankAccount(iban: "DE89 3704 0044 0532 0130 00", holder: "Max Member")),
                as: cast.member)
            #expect(
                put == PaymentHandles(revolut: "maxm", upi: "max@okaxis", iban: BankAccount(iban: "DE89370400440532013000", holder: "Max Member")))
            #expect(try await services.payments.handles(of: cast.member, as: cast.admin) == put)
            // Whole: what is left out goes; a bad one changes nothing.
            let replaced = try await services.payments.setHandles(PaymentHandles(revolut: "max2", text: "Cash is fine"), as: cast.member)
            #expect(replaced == PaymentHandles(revolut: "max2", text: "Cash is fine"))
            let bad = await serviceError {
                try await services.payments.setHandles(PaymentHandles(paypalMe: "maxm", czechAccount: "19-2000145398/0800"), as: cast.member)
            }
            #expect(bad?.code == .invalidInput && bad?.field == "czech_account", "\(String(describing: bad))")
            #expect(try await services.payments.handles(of: cast.member, as: cast.admin) == replaced)
            // Someone who shares no community with them, or no longer does, is told there is no such user.
            for stranger in [cast.outsider, cast.former] {
                let hidden = await serviceError { try await services.payments.handles(of: cast.member, as: stranger) }
                #expect(hidden?.code == .notFound)
            }
            // The user's export has them.
            #expect(try await services.users.exportData(as: cast.member).paymentHandles == replaced)
            // Deleting the account removes them (anonymization keeps the user row).
            _ = try await services.lifecycle.requestAccountDeletion(as: cast.member)
            var later = services
            later.now = { Date().addingTimeInterval(8 * 86_400) }
            #expect(try await later.lifecycle.deleteDueAccounts() == (1, 0))
            let left = try await database.withConnection { connection in
                try await connection.query("SELECT count(*) FROM payment_handles WHERE user_id = \(cast.member)").single().decode(Int64.self)
            }
            #expect(left == 0)
        }
    }

    @Test("providers: operators add, change and disable them, checked; the app reads the active ones for its platform, region and currency")
    func providers() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let revolut = try await services.payments.addProvider(
                id: "revolut",
                PayProviderChange(
                    name: "Revolut", handleKind: .revolut, linkTemplate: "https://revolut.me/{handle}?amount={amount}&currency={currency}",
                    amountFormat: .minor, order: 10))
            #expect(revolut.active && revolut.payload == .link && revolut.currencies.isEmpty)
            _ = try await services.payments.addProvider(
                id: "upi",
                PayProviderChange(
                    name: "UPI", handleKind: .upi, linkTemplate: "upi://pay?pa={handle}&am={amount}&cu={currency}", currencies: ["inr"],
                    regions: ["in"], platforms: ["ios", "android"], order: 20))
            _ = try await services.payments.addProvider(
                id: "sepa", PayProviderChange(name: "SEPA", handleKind: .iban, payload: .epcQR, currencies: ["EUR"]))

            func refusal(_ change: PayProviderChange, id: String = "x") async -> String? {
                await serviceError { try await services.payments.addProvider(id: id, change) }?.field
            }
            #expect(await refusal(PayProviderChange(name: "X", handleKind: .revolut, linkTemplate: "https://x.example/pay")) == "link_template")
            #expect(
                await refusal(PayProviderChange(name: "X", handleKind: .revolut, linkTemplate: "https://x.example/{handle}/{amout}"))
                    == "link_template")
            #expect(
                await refusal(PayProviderChange(name: "X", handleKind: .revolut, linkTemplate: "javascript:alert('{handle}')")) == "link_template")
            #expect(await refusal(PayProviderChange(name: "X", handleKind: .revolut)) == "link_template")
            #expect(
                await refusal(PayProviderChange(name: "X", handleKind: .iban, payload: .epcQR, linkTemplate: "https://x.example/{handle}"))
                    == "link_template")
            #expect(await refusal(PayProviderChange(name: "X", handleKind: .upi, payload: .spayd)) == "handle_kind")
            #expect(
                await refusal(PayProviderChange(name: "X", handleKind: .revolut, linkTemplate: "https://x/{handle}", currencies: ["EUX"]))
                    == "currencies")
            #expect(await refusal(PayProviderChange(name: "X", handleKind: .revolut, linkTemplate: "https://x/{handle}"), id: "Bad Id") == "id")

            func offered(platform: String? = nil, region: String? = nil, currency: String? = nil) async throws -> [String] {
                try await services.payments.providers(
                    platform: platform, region: region, currency: currency.flatMap(Currency.init), as: cast.member
                ).map(\.id)
            }
            #expect(try await offered() == ["sepa", "revolut", "upi"])
            #expect(try await offered(platform: "web") == ["sepa", "revolut"])
            #expect(try await offered(region: "CZ", currency: "EUR") == ["sepa", "revolut"])
            #expect(try await offered(region: "IN", currency: "INR") == ["revolut", "upi"])

            // Disabled, it is offered no more; the operators' list keeps it.
            let disabled = try await services.payments.updateProvider("upi", PayProviderChange(active: false))
            #expect(!disabled.active && disabled.currencies == ["INR"] && disabled.regions == ["IN"])
            #expect(try await offered() == ["sepa", "revolut"])
            #expect(try await services.payments.allProviders().map(\.id) == ["sepa", "revolut", "upi"])
            let missing = await serviceError { try await services.payments.updateProvider("nope", PayProviderChange(active: false)) }
            #expect(missing?.code == .notFound)
        }
    }

    @Test(
        "settle-up's pay options: each link parsed back holds the suggestion's amount, currency and payee, for exponents 0, 2 and 3; EPC, SPAYD and UPI"
    )
    func payOptions() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            for (id, name, kind, template, format) in [
                (
                    "revolut", "Revolut", PaymentHandleKind.revolut, "https://revolut.me/{handle}?amount={amount}&currency={currency}&note={note}",
                    PayProvider.AmountFormat.minor
                ),
                ("paypal_me", "PayPal.me", .paypalMe, "https://paypal.me/{handle}/{amount}{currency}", .decimal),
                ("upi", "UPI", .upi, "upi://pay?pa={handle}&pn={name}&am={amount}&cu={currency}&tn={note}", .decimal),
            ] {
                _ = try await services.payments.addProvider(
                    id: id, PayProviderChange(name: name, handleKind: kind, linkTemplate: .some(template), amountFormat: format))
            }
            _ = try await services.payments.addProvider(
                id: "sepa", PayProviderChange(name: "SEPA", handleKind: .iban, payload: .epcQR, currencies: ["EUR"]))
            _ = try await services.payments.addProvider(
                id: "qr_platba", PayProviderChange(name: "QR Platba", handleKind: .czechAccount, payload: .spayd))
            // The admin is paid back; the member owes them.
            _ = try await services.payments.setHandles(
                PaymentHandles(
                    revolut: "ada.admin", paypalMe: "AdaAdmin", upi: "ada@okaxis",
                    iban: BankAccount(iban: "DE89370400440532013000", bic: "COBADEFFXXX", holder: "Ada Admin"), czechAccount: "19-2000145399/0800"),
                as: cast.admin)
            let amounts: [(String, String)] = [("JPY", "1235"), ("EUR", "12.34"), ("BHD", "1.235"), ("INR", "123456.50"), ("CZK", "250.00")]
            for (code, total) in amounts {
                let currency = try #require(Currency(code))
                let money = try Money(parsing: total, currency: currency)
                _ = try await services.expenses.addExpense(
                    in: cast.community, description: "Dinner in \(code)", total: money, split: .exact([cast.member: money.minorUnits]), as: cast.admin
                )
            }
            let suggestions = try await services.payments.withPayOptions(
                try await services.settlements.settleUpSuggestions(in: cast.community, simplify: true, as: cast.member), in: cast.community,
                as: cast.member)
            #expect(suggestions.count == amounts.count)
            for payment in suggestions {
                #expect(payment.from == cast.member && payment.to == cast.admin)
                let currency = try #require(Currency(payment.currency))
                let methods = payment.payOptions.map(\.method)
                let decimal = amounts.first { $0.0 == payment.currency }?.1
                // Revolut: minor units; the note names the community, percent-encoded.
                let revolut = try #require(payment.payOptions.first { $0.method == "revolut" }?.url)
                let items = try queryItems(revolut)
                #expect(revolut.hasPrefix("https://revolut.me/ada.admin?"))
                #expect(
                    items["amount"] == String(payment.amount) && items["currency"] == payment.currency && items["note"] == "Settle up: Tigers U10")
                // PayPal.me: the decimal with the currency's exponent.
                let paypal = try #require(payment.payOptions.first { $0.method == "paypal_me" }?.url)
                #expect(paypal == "https://paypal.me/AdaAdmin/\(try #require(decimal))\(payment.currency)", "\(paypal)")
                let written = String(paypal.dropFirst("https://paypal.me/AdaAdmin/".count).dropLast(3))
                #expect(try Money(parsing: written, currency: currency).minorUnits == payment.amount)
                switch payment.currency {
                case "EUR":
                    let qr = try #require(payment.payOptions.first { $0.method == "sepa" }?.qr).split(
                        separator: "\n", omittingEmptySubsequences: false)
                    #expect(Array(qr.prefix(8)) == ["BCD", "002", "1", "SCT", "COBADEFFXXX", "Ada Admin", "DE89370400440532013000", "EUR12.34"])
                    #expect(qr.last == "Settle up: Tigers U10")
                    #expect(methods == ["paypal_me", "revolut", "sepa", "upi"])
                case "CZK":
                    let spayd = try #require(payment.payOptions.first { $0.method == "qr_platba" }?.qr)
                    #expect(spayd == "SPD*1.0*ACC:CZ6508000000192000145399*AM:250.00*CC:CZK*MSG:Settle up: Tigers U10")
                    #expect(!methods.contains("sepa"))
                case "INR":
                    let upi = try #require(payment.payOptions.first { $0.method == "upi" }?.url)
                    let items = try queryItems(upi)
                    #expect(upi.hasPrefix("upi://pay?"))
                    #expect(items["pa"] == "ada@okaxis" && items["pn"] == "Ada Admin" && items["am"] == "123456.50" && items["cu"] == "INR")
                default:
                    #expect(!methods.contains("sepa") && !methods.contains("qr_platba"))
                }
            }
            // A payee without handles gets none; a disabled provider is offered no more.
            _ = try await services.payments.updateProvider("revolut", PayProviderChange(active: false))
            let again = try await services.payments.withPayOptions(
                try await services.settlements.settleUpSuggestions(in: cast.community, simplify: true, as: cast.member), in: cast.community,
                as: cast.member)
            #expect(again.allSatisfy { !$0.payOptions.contains { $0.method == "revolut" } && !$0.payOptions.isEmpty })
            _ = try await services.payments.setHandles(PaymentHandles(), as: cast.admin)
            let none = try await services.payments.withPayOptions(
                try await services.settlements.settleUpSuggestions(in: cast.community, simplify: true, as: cast.member), in: cast.community,
                as: cast.member)
            #expect(none.allSatisfy { $0.payOptions.isEmpty })
        }
    }
}

/// An IBAN's check digits, computed here apart from the code under test (ISO 13616: 98 minus the
/// remainder of BBAN + country + "00" by 97), for a Czech BBAN.
enum IBANCheck {
    static func digits(_ bban: String) -> String {
        let digits = bban + "123500"  // C = 12, Z = 35, then 00
        var remainder = 0
        for character in digits { remainder = (remainder * 10 + (character.wholeNumberValue ?? 0)) % 97 }
        let check = 98 - remainder
        return check < 10 ? "0\(check)" : "\(check)"
    }
}
