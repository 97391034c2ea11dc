import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl handles …`: where a user is paid back (docs/money.md, "Getting paid back").
struct HandlesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handles",
        abstract: "Payment handles: where a user is paid back (Revolut, PayPal.me, Venmo, Cash App, UPI, IBAN, Czech account, Lightning, text).",
        subcommands: [Show.self, Set.self]
    )

    struct Show: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "A user's handles (default: your own); only people who share a community with them can read them.")
        @Option(help: "Whose (id or email).") var of: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> PaymentHandles {
            guard let of else { return try await services.payments.handles(as: actor) }
            return try await services.payments.handles(of: try await services.users.resolve(of), as: actor)
        }

        func tell(_ handles: PaymentHandles) { HandlesCommand.print(handles) }
    }

    struct Set: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set your handles, all at once: a handle not given is removed.",
            discussion:
                "Each is checked: an IBAN's check digits (mod 97), a Czech account's weighted checksum, UPI's name@bank, a Lightning address's user@domain."
        )
        @Option(help: "Revolut username.") var revolut: String?
        @Option(name: .customLong("paypal-me"), help: "PayPal.me name.") var paypalMe: String?
        @Option(help: "Venmo username.") var venmo: String?
        @Option(name: .customLong("cash-app"), help: "Cash App $Cashtag.") var cashApp: String?
        @Option(help: "UPI id, name@bank.") var upi: String?
        @Option(help: "IBAN (spaces allowed); needs --holder.") var iban: String?
        @Option(help: "The IBAN's BIC (optional).") var bic: String?
        @Option(help: "The IBAN's account holder.") var holder: String?
        @Option(name: .customLong("czech-account"), help: "Czech account number, [prefix-]number/bank.") var czechAccount: String?
        @Option(help: "Lightning address, user@domain.") var lightning: String?
        @Option(help: "Anything else, up to 500 characters.") var text: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            if iban == nil, bic != nil || holder != nil { throw ValidationError("--bic and --holder go with --iban.") }
            if iban != nil, holder == nil { throw ValidationError("--iban needs --holder, the account holder's name.") }
        }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> PaymentHandles {
            let handles = PaymentHandles(
                revolut: revolut, paypalMe: paypalMe, venmo: venmo, cashApp: cashApp, upi: upi,
                iban: iban.map { BankAccount(iban: $0, bic: bic, holder: holder ?? "") }, czechAccount: czechAccount, lightning: lightning,
                text: text)
            return try await services.payments.setHandles(handles, as: actor)
        }

        func tell(_ handles: PaymentHandles) { HandlesCommand.print(handles) }
    }

    static func print(_ handles: PaymentHandles) {
        var rows: [[String]] = []
        func add(_ name: String, _ value: String?) { if let value { rows.append([name, value]) } }
        add("revolut", handles.revolut)
        add("paypal_me", handles.paypalMe)
        add("venmo", handles.venmo)
        add("cash_app", handles.cashApp)
        add("upi", handles.upi)
        add("iban", handles.iban.map { "\($0.iban)\($0.bic.map { " (\($0))" } ?? ""), \($0.holder)" })
        add("czech_account", handles.czechAccount)
        add("lightning", handles.lightning)
        add("text", handles.text)
        if rows.isEmpty {
            Swift.print("No payment handles.")
        } else {
            printTable(["KIND", "HANDLE"], rows)
        }
    }
}

/// `orbitctl providers …`: the payment providers the app offers (operators; docs/money.md, "Getting paid back").
struct ProvidersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "providers",
        abstract: "Payment providers (operators): how a settle-up suggestion becomes a link or a bank payment's QR code.",
        subcommands: [Add.self, Update.self, List.self, Disable.self]
    )

    /// The fields of `add` and `update`.
    struct Fields: ParsableArguments {
        @Option(help: "The name the app shows.") var name: String?
        @Option(help: "An https address of its icon.") var icon: String?
        @Flag(help: "Remove the icon (update).") var noIcon = false
        @Option(
            help:
                "Which handle it pays: revolut, paypal_me, venmo, cash_app, upi, iban, czech_account, lightning or text.")
        var handleKind: String?
        @Option(help: "link (from --template), epc_qr (a SEPA transfer to an IBAN in EUR) or spayd (a Czech account in CZK).") var payload: String?
        @Option(help: "A link template: {handle} and any of {amount}, {currency}, {note}, {name}.") var template: String?
        @Option(help: "Shown before the handle's field (revolut.me/).") var handlePrefix: String?
        @Option(help: "How {amount} is written: minor (1250) or decimal (12.50).") var amountFormat: String?
        @Option(help: "ISO 4217 codes it pays in, comma-separated (empty: any).") var currencies: String?
        @Option(help: "ISO 3166-1 regions it is offered in, comma-separated (empty: anywhere).") var regions: String?
        @Option(help: "Platforms it is offered on, comma-separated: ios, android, web (empty: every one).") var platforms: String?
        @Option(help: "Its place in the app's list (lower first).") var order: Int?

        func change() throws -> PayProviderChange {
            func list(_ text: String?) -> [String]? {
                text.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
            }
            func parse<Value: RawRepresentable<String>>(_ text: String?, _ field: String) throws -> Value? {
                guard let text else { return nil }
                guard let value = Value(rawValue: text) else { throw CommandFailure("--\(field) \(text) is not one of its values (see --help).") }
                return value
            }
            return PayProviderChange(
                name: name, icon: noIcon ? .some(nil) : icon.map { .some($0) }, handleKind: try parse(handleKind, "handle-kind"),
                payload: try parse(payload, "payload"), linkTemplate: template.map { .some($0) }, handlePrefix: handlePrefix,
                amountFormat: try parse(amountFormat, "amount-format"), currencies: list(currencies), regions: list(regions),
                platforms: list(platforms), order: order)
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a provider (operators).")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "Its id: lower-case letters, digits, _ and - (the settlement's method when paid through it).") var id: String
        @OptionGroup var fields: Fields
        @Flag(help: "Add it disabled.") var disabled = false
        @OptionGroup var output: JSONOption

        func run() async throws {
            var change = try fields.change()
            change.active = !disabled
            let provider = try await withServices(database) { services in try await services.payments.addProvider(id: id, change) }
            if output.json { return try printJSON(provider) }
            print("Added \(provider.id) (\(provider.name)).")
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a provider (operators); what is not given stays.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "Its id.") var id: String
        @OptionGroup var fields: Fields
        @Flag(help: "Offer it again.") var enable = false
        @OptionGroup var output: JSONOption

        func run() async throws {
            var change = try fields.change()
            if enable { change.active = true }
            let provider = try await withServices(database) { services in try await services.payments.updateProvider(id, change) }
            if output.json { return try printJSON(provider) }
            print("Updated \(provider.id) (\(provider.name)\(provider.active ? "" : ", disabled")).")
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop offering a provider (operators); `update --enable` offers it again.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "Its id.") var id: String
        @OptionGroup var output: JSONOption

        func run() async throws {
            let provider = try await withServices(database) { services in
                try await services.payments.updateProvider(id, PayProviderChange(active: false))
            }
            if output.json { return try printJSON(provider) }
            print("Disabled \(provider.id).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every provider, active or not, in order (operators).")
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let providers = try await withServices(database) { services in try await services.payments.allProviders() }
            if output.json { return try printJSON(providers) }
            printTable(
                ["ID", "NAME", "HANDLE", "PAYLOAD", "CURRENCIES", "ACTIVE"],
                providers.map {
                    [
                        $0.id, $0.name, $0.handleKind.rawValue, $0.payload.rawValue,
                        $0.currencies.isEmpty ? "any" : $0.currencies.joined(separator: ","),
                        $0.active ? "yes" : "no",
                    ]
                })
        }
    }
}
