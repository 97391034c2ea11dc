import Foundation
import HTTPTypes
import OrbitCore
import OrbitTestSupport
import Testing

@Suite("Getting paid back over HTTP: payment handles, providers, pay links")
struct PaymentAPITests {
    @Test("PUT /users/me/payment-handles is whole; a bad one is 400 naming its field; co-members read them, strangers get 404; the export has them")
    func handles() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let path = "/users/me/payment-handles"
            let put = try await harness.request(
                .put, path, token: cast.adminToken,
                json: [
                    "revolut": "@ada.admin", "upi": "ada@okaxis", "cash_app": NSNull(),
                    "iban": ["iban": "DE89 3704 0044 0532 0130 00", "bic": "COBADEFFXXX", "holder": "Ada Admin"],
                ])
            #expect(put.status == 200, "\(put.text)")
            let stored = try put.json
            #expect(stored["revolut"] as? String == "ada.admin" && stored["upi"] as? String == "ada@okaxis" && stored["cash_app"] is NSNull)
            #expect((stored["iban"] as? [String: Any])?["iban"] as? String == "DE89370400440532013000")

            for (body, field) in [
                (["iban": ["iban": "DE89370400440532013001", "holder": "Ada"]] as [String: Any], "iban.iban"),
                (["czech_account": "19-2000145398/0800"], "czech_account"),
                (["upi": "ada"], "upi"),
                (["lightning": "ada@localhost"], "lightning"),
            ] {
                let refused = try await harness.request(.put, path, token: cast.adminToken, json: body)
                #expect(refused.status == 400 && refused.text.contains(field), "\(field): \(refused.text)")
            }
            // Unchanged by the refusals.
            let mine = try await harness.request(.get, path, token: cast.adminToken)
            let mineJSON = try mine.json
            #expect(mine.status == 200 && mineJSON["revolut"] as? String == "ada.admin", "\(mine.text)")
            let read = try await harness.request(.get, "/users/\(cast.admin)/payment-handles", token: cast.memberToken)
            let readJSON = try read.json
            #expect(read.status == 200 && readJSON["upi"] as? String == "ada@okaxis", "\(read.text)")
            let stranger = try await harness.request(.get, "/users/\(cast.admin)/payment-handles", token: cast.outsiderToken)
            #expect(stranger.status == 404, "\(stranger.text)")
            let export = try await harness.request(.get, "/users/me/export", token: cast.adminToken)
            #expect(export.status == 200, "\(export.text)")
            let exported = try export.json
            #expect((exported["payment_handles"] as? [String: Any])?["revolut"] as? String == "ada.admin")
            #expect((exported["memberships"] as? [[String: Any]])?.first?["community_name"] as? String == "Tigers U10", "\(export.text)")
        }
    }

    @Test("GET /payment-providers lists the active ones for a platform, region and currency; settle-up carries pay_options")
    func providersAndPayLinks() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let services = harness.services
            _ = try await services.payments.addProvider(
                id: "paypal_me",
                PayProviderChange(name: "PayPal.me", handleKind: .paypalMe, linkTemplate: "https://paypal.me/{handle}/{amount}{currency}"))
            _ = try await services.payments.addProvider(
                id: "upi",
                PayProviderChange(
                    name: "UPI", handleKind: .upi, linkTemplate: "upi://pay?pa={handle}&am={amount}&cu={currency}", currencies: ["INR"],
                    platforms: ["android", "ios"]))
            let all = try await harness.request(.get, "/payment-providers", token: cast.memberToken)
            #expect(try all.items.compactMap { $0["id"] as? String } == ["paypal_me", "upi"], "\(all.text)")
            let web = try await harness.request(.get, "/payment-providers?platform=web&currency=EUR", token: cast.memberToken)
            #expect(try web.items.compactMap { $0["id"] as? String } == ["paypal_me"], "\(web.text)")
            let bad = try await harness.request(.get, "/payment-providers?platform=symbian", token: cast.memberToken)
            #expect(bad.status == 400, "\(bad.text)")

            _ = try await services.payments.setHandles(PaymentHandles(paypalMe: "AdaAdmin"), as: cast.admin)
            _ = try await services.expenses.addExpense(
                in: cast.community, description: "Pizza", total: try dollars("30.00"), paidBy: cast.admin,
                split: .equal([cast.admin, cast.member]), as: cast.admin)
            let settle = try await harness.request(.get, "/communities/\(cast.community)/settle-up", token: cast.memberToken)
            let suggestion = try #require(try settle.items.first, "\(settle.text)")
            let options = try #require(suggestion["pay_options"] as? [[String: Any]], "\(settle.text)")
            #expect(options.count == 1 && options.first?["method"] as? String == "paypal_me", "\(settle.text)")
            #expect(options.first?["url"] as? String == "https://paypal.me/AdaAdmin/15.00USD", "\(settle.text)")
        }
    }

    @Test("PATCH /users/me takes a language (BCP 47, 400 otherwise); GET /notifications then reads in it")
    func language() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let set = try await harness.request(.patch, "/users/me", token: cast.memberToken, json: ["language": "es"])
            let setJSON = try set.json
            #expect(set.status == 200 && setJSON["language"] as? String == "es", "\(set.text)")
            let bad = try await harness.request(.patch, "/users/me", token: cast.memberToken, json: ["language": "spanish please"])
            #expect(bad.status == 400 && bad.text.contains("language"), "\(bad.text)")
            _ = try await harness.services.expenses.addExpense(
                in: cast.community, description: "Pelotas", total: try dollars("30.00"), paidBy: cast.admin,
                split: .equal([cast.admin, cast.member]), as: cast.admin)
            let list = try await harness.request(.get, "/notifications", token: cast.memberToken)
            let body = try #require(try list.items.first?["body"] as? String, "\(list.text)")
            #expect(body == "Ada Admin añadió un gasto que compartes: tu parte es 15,00\u{00A0}US$", "\(body)")
        }
    }
}
