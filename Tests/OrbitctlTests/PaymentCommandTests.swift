import Foundation
import OrbitTestSupport
import Testing

@Suite("orbitctl handles, providers, settle suggest's pay links and user export")
struct PaymentCommandTests {
    @Test(
        "a user sets handles (a bad one refused, naming it); an operator adds, lists, updates and disables providers; settle suggest prints the link")
    func handlesProvidersAndLinks() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
            let max = try #require(try await cli.json("user", "create", "--email", "max@example.com", "--name", "Max")["id"] as? String)
            let community = try #require(try await cli.json("community", "create", "--name", "Trip", "--as", "ada@example.com")["id"] as? String)
            _ = try await cli.json("community", "add-member", community, "--user", max, "--as", "ada@example.com")

            let set = try await cli.json(
                "handles", "set", "--revolut", "@ada.l", "--iban", "DE89 3704 0044 0532 0130 00", "--holder", "Ada L", "--as", "ada@example.com")
            #expect(set["revolut"] as? String == "ada.l" && (set["iban"] as? [String: Any])?["iban"] as? String == "DE89370400440532013000", "\(set)")
            let bad = try await cli.run("handles", "set", "--czech-account", "19-2000145398/0800", "--as", "ada@example.com")
            #expect(!bad.succeeded && bad.errors.contains("czech_account"), "\(bad.errors)")
            let shown = try await cli.run("handles", "show", "--of", "ada@example.com", "--as", "max@example.com")
            #expect(shown.succeeded && shown.output.contains("ada.l") && shown.output.contains("DE89370400440532013000"), "\(shown.output)")

            let added = try await cli.run(
                "providers", "add", "revolut", "--name", "Revolut", "--handle-kind", "revolut", "--template",
                "https://revolut.me/{handle}?amount={amount}&currency={currency}", "--amount-format", "minor")
            #expect(added.succeeded && added.output.contains("Added revolut"), "\(added.output) \(added.errors)")
            let refused = try await cli.run("providers", "add", "x", "--name", "X", "--handle-kind", "revolut", "--template", "https://x.example/")
            #expect(!refused.succeeded && refused.errors.contains("{handle}"), "\(refused.errors)")
            _ = try await cli.run("providers", "add", "sepa", "--name", "SEPA", "--handle-kind", "iban", "--payload", "epc_qr", "--currencies", "EUR")
            let listed = try await cli.run("providers", "list")
            #expect(listed.succeeded && listed.output.contains("revolut") && listed.output.contains("EUR"), "\(listed.output)")
            let updated = try await cli.json("providers", "update", "sepa", "--order=-1", "--regions", "de,at")
            #expect(updated["order"] as? Int == -1 && updated["regions"] as? [String] == ["DE", "AT"], "\(updated)")

            _ = try await cli.json(
                "expense", "add", "--community", community, "--description", "Pizza", "--amount", "30.00", "--split", "equal",
                "--between", max, "--as", "ada@example.com")
            let suggest = try await cli.run("settle", "suggest", "--community", community, "--as", "max@example.com")
            #expect(suggest.succeeded && suggest.output.contains("https://revolut.me/ada.l?amount=3000&currency=USD"), "\(suggest.output)")
            let disabled = try await cli.run("providers", "disable", "revolut")
            #expect(disabled.succeeded, "\(disabled.errors)")
            let none = try await cli.run("settle", "suggest", "--community", community, "--as", "max@example.com")
            #expect(none.succeeded && !none.output.contains("revolut.me"), "\(none.output)")

            let export = try await cli.run("user", "export", "--as", "ada@example.com")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(export.output.utf8)) as? [String: Any], "\(export.output)")
            #expect((object["payment_handles"] as? [String: Any])?["revolut"] as? String == "ada.l", "\(export.output)")
        }
    }

    @Test("user update sets the user's language (checked), in which notifications then read")
    func language() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
            let set = try await cli.json("user", "update", "--language", "de-de", "--as", "ada@example.com")
            #expect(set["language"] as? String == "de-DE", "\(set)")
            let bad = try await cli.run("user", "update", "--language", "deutsch!", "--as", "ada@example.com")
            #expect(!bad.succeeded && bad.errors.contains("language"), "\(bad.errors)")
        }
    }
}
