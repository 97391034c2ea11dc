import Foundation
import OrbitTestSupport
import Testing

@Suite("orbitctl webhooks replay")
struct WebhooksCommandTests {
    @Test("a saved Stripe event is applied once, as a delivery would be; a second replay is a duplicate; a file that is no event is one clear error")
    func replay() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
            let community = try #require(try await cli.json("community", "create", "--name", "Family", "--as", "ada@example.com")["id"] as? String)
            let event: [String: Any] = [
                "id": "evt_saved", "object": "event", "type": "customer.subscription.updated", "created": 1_790_000_000,
                "data": [
                    "object": [
                        "id": "sub_saved", "object": "subscription", "status": "past_due", "customer": "cus_9",
                        "metadata": ["community_id": community], "current_period_end": 1_792_000_000,
                    ]
                ],
            ]
            let directory = FileManager.default.temporaryDirectory.appending(path: "orbit-webhooks-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appending(path: "event.json")
            try JSONSerialization.data(withJSONObject: event).write(to: file)

            let first = try await cli.json("webhooks", "replay", file.path)
            #expect(first["outcome"] as? String == "applied")
            #expect(first["community_id"] as? String == community)
            let shown = try await cli.json("community", "show", community, "--as", "ada@example.com")
            #expect(shown["subscription_status"] as? String == "past_due")
            let again = try await cli.run("webhooks", "replay", file.path)
            #expect(again.succeeded && again.output.contains("evt_saved (customer.subscription.updated): duplicate"), "\(again.output)")

            let notAnEvent = directory.appending(path: "customer.json")
            try Data(#"{"object": "customer"}"#.utf8).write(to: notAnEvent)
            let refused = try await cli.run("webhooks", "replay", notAnEvent.path)
            #expect(!refused.succeeded && refused.errors.contains("not a Stripe event"), "\(refused.errors)")
        }
    }
}
