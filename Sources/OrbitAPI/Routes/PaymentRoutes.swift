import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    /// Getting paid back (docs/money.md): a user's payment handles and the payment providers the
    /// app offers; settle-up's pay options are SettlementRoutes'.
    func addPaymentRoutes(to router: RouterGroup<APIContext>) {
        router.get("users/me/payment-handles") { _, context in
            JSON(try await services.payments.handles(as: try context.requireUser()))
        }
        // Whole: a handle left out (or null) is removed.
        struct BankAccountBody: Decodable {
            var iban: String
            var bic: String?
            var holder: String
        }
        struct HandlesBody: Decodable, NullableFields {
            var revolut: String?
            var paypalMe: String?
            var venmo: String?
            var cashApp: String?
            var upi: String?
            var iban: BankAccountBody?
            var czechAccount: String?
            var lightning: String?
            var text: String?
            static let nullableFields: Set<String> = [
                "revolut", "paypal_me", "venmo", "cash_app", "upi", "iban", "iban.bic", "czech_account", "lightning", "text",
            ]
        }
        router.put("users/me/payment-handles") { request, context in
            let body = try await request.decodeJSON(HandlesBody.self, context: context)
            let handles = PaymentHandles(
                revolut: body.revolut, paypalMe: body.paypalMe, venmo: body.venmo, cashApp: body.cashApp, upi: body.upi,
                iban: body.iban.map { BankAccount(iban: $0.iban, bic: $0.bic, holder: $0.holder) }, czechAccount: body.czechAccount,
                lightning: body.lightning, text: body.text)
            return JSON(try await services.payments.setHandles(handles, as: try context.requireUser()))
        }
        router.get("users/:user_id/payment-handles") { _, context in
            JSON(try await services.payments.handles(of: try context.id("user_id"), as: try context.requireUser()))
        }
        router.get("payment-providers") { request, context in
            let currency = try request.query("currency").map { code in
                guard let currency = Currency(code), currency.code == code else {
                    throw APIProblem.validation(field: "currency", "currency must be an ISO 4217 code such as USD or EUR.")
                }
                return currency
            }
            return JSON(
                Items(
                    try await services.payments.providers(
                        platform: try request.platform(), region: try request.region(), currency: currency, as: try context.requireUser())))
        }
    }
}

extension Request {
    /// `platform`: ios, android or web, if given.
    func platform() throws -> String? {
        guard let platform = query("platform") else { return nil }
        guard ["ios", "android", "web"].contains(platform) else {
            throw APIProblem.validation(field: "platform", "platform must be ios, android or web.")
        }
        return platform
    }

    /// `region`: an ISO 3166-1 alpha-2 code in upper case (IN, CZ), if given.
    func region() throws -> String? {
        guard let region = query("region") else { return nil }
        guard region.utf8.count == 2, region.utf8.allSatisfy({ (0x41...0x5A).contains($0) }) else {
            throw APIProblem.validation(field: "region", "region must be an ISO 3166-1 alpha-2 code in upper case, such as IN or CZ.")
        }
        return region
    }
}
