import Foundation
import LocalPostgres
import OrbitTestSupport
import Testing

/// The operations the app has over HTTP are in `orbitctl` too: one's membership, profiles,
/// operators, settling a split, editing dues and listing their payments, who is coming.
@Suite("orbitctl offers what the API offers")
struct AppOperationCommandsTests {
    @Test("membership, profile, operator, settle-split, dues update and payments, rsvps and unrsvp")
    func appOperations() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            let ada = "ada@example.com"
            let max = "max@example.com"
            _ = try await cli.json("user", "create", "--email", ada, "--name", "Ada Lovelace")
            let maxUser = try await cli.json("user", "create", "--email", max, "--name", "Max Planck")
            let maxID = try #require(maxUser["id"] as? String)
            let community = try #require(try await cli.json("community", "create", "--name", "Tigers", "--as", ada)["id"] as? String)
            _ = try await cli.json("community", "add-member", community, "--user", max, "--as", ada)

            // One's own membership.
            let membership = try await cli.json(
                "community", "membership", "--community", community, "--nickname", "Maxi", "--notify", "new_post=off", "--as", max)
            #expect(membership["nickname"] as? String == "Maxi")
            #expect((membership["notification_prefs"] as? [String: Bool])?["new_post"] == false)
            let cleared = try await cli.json("community", "membership", "--community", community, "--clear-nickname", "--as", max)
            #expect(cleared["nickname"] is NSNull)
            #expect(
                try await cli.run("community", "membership", "--community", community, "--notify", "new_post=maybe", "--as", max).succeeded == false)

            // A co-member's profile never shows the email.
            let profile = try await cli.json("user", "profile", ada, "--as", max)
            #expect(profile["display_name"] as? String == "Ada Lovelace")
            #expect(profile["email"] == nil)

            // Operators.
            let granted = try await cli.json("user", "operator", max, "--grant", "--as", ada)
            #expect(granted["id"] as? String == maxID)
            _ = try await cli.json("user", "operator", max, "--revoke", "--as", ada)

            // Settling one split.
            let expense = try await cli.json(
                "expense", "add", "--community", community, "--description", "Balls", "--amount", "30.00", "--paid-by", ada,
                "--split", "equal", "--between", "\(ada),\(max)", "--as", ada)
            let splits = try #require(expense["splits"] as? [[String: Any]])
            let maxSplit = try #require(splits.first { $0["user_id"] as? String == maxID }?["id"] as? String)
            let settled = try await cli.json("expense", "settle-split", maxSplit, "--via", "cash", "--as", max)
            let after = try #require(settled["splits"] as? [[String: Any]])
            #expect(after.first { $0["id"] as? String == maxSplit }?["is_settled"] as? Bool == true)

            // Dues: edit, pay, list the payments.
            let dues = try #require(
                try await cli.json(
                    "dues", "create", "--community", community, "--name", "Season", "--amount", "50.00", "--due-date", "2030-01-01", "--as", ada
                )["id"] as? String)
            let updated = try await cli.json("dues", "update", dues, "--amount", "60.00", "--name", "Season 2030", "--as", ada)
            #expect(updated["amount"] as? Int == 6000)
            #expect(updated["name"] as? String == "Season 2030")
            _ = try await cli.json("dues", "pay", dues, "--user", max, "--amount", "20.00", "--as", ada)
            let payments = try await cli.jsonItems("dues", "payments", dues, "--as", ada)
            #expect(payments.compactMap { $0["amount_paid"] as? Int } == [2000])

            // Devices.
            let token = String(repeating: "ab", count: 32)
            let device = try await cli.json("device", "register", token, "--environment", "sandbox", "--bundle-id", "app.orbitcove.ios", "--as", max)
            #expect(device["token"] as? String == token)
            #expect(try await cli.jsonArray("device", "list", "--as", max).count == 1)
            #expect(try await cli.jsonArray("device", "list", "--as", ada).isEmpty)
            #expect(try await cli.run("device", "remove", token, "--as", ada).succeeded == false)
            _ = try await cli.json("device", "remove", token, "--as", max)
            #expect(try await cli.jsonArray("device", "list", "--as", max).isEmpty)

            // Who is coming, and taking an answer back.
            let event = try #require(
                try await cli.json(
                    "event", "create", "--community", community, "--title", "Practice", "--starts-at", "2030-01-01T10:00:00Z", "--as", ada
                )["id"] as? String)
            _ = try await cli.json("event", "rsvp", event, "--status", "yes", "--plus-ones", "1", "--note", "Bringing Mia", "--as", max)
            let coming = try await cli.jsonItems("event", "rsvps", event, "--as", ada)
            #expect(coming.compactMap { $0["display_name"] as? String } == ["Max Planck"])
            _ = try await cli.json("event", "unrsvp", event, "--as", max)
            #expect(try await cli.jsonItems("event", "rsvps", event, "--as", ada).isEmpty)
        }
    }

    @Test("family devices: the parent lists and revokes a child's devices; an admin who is not the parent is told why, in one sentence")
    func childDevices() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            let ada = "ada@example.com"
            let max = "max@example.com"
            _ = try await cli.json("user", "create", "--email", ada, "--name", "Ada Lovelace")
            _ = try await cli.json("user", "create", "--email", max, "--name", "Max Planck")
            let community = try #require(try await cli.json("community", "create", "--name", "Tigers", "--as", ada)["id"] as? String)
            _ = try await cli.json("community", "add-member", community, "--user", max, "--as", ada)
            let kid = try #require(try await cli.json("family", "add", "--name", "Kit", "--as", max)["id"] as? String)
            #expect(try await cli.run("family", "set-pin", kid, "--community", community, "--pin", "2580", "--as", max).succeeded)
            let first = try #require(try await cli.json("family", "pair", kid, "--community", community, "--as", max)["device_id"] as? String)
            let second = try #require(try await cli.json("family", "pair", kid, "--community", community, "--as", max)["device_id"] as? String)

            let listed = try await cli.jsonArray("family", "devices", "list", kid, "--community", community, "--as", max)
            #expect(Set(listed.compactMap { $0["id"] as? String }) == [first, second])
            #expect(listed.allSatisfy { $0["status"] as? String == "pending" })
            let table = try await cli.run("family", "devices", "list", kid, "--community", community, "--as", max)
            #expect(table.succeeded && table.output.contains("STATUS") && table.output.contains("pending"))

            let admin = try await cli.run("family", "devices", "revoke", kid, "--community", community, "--all", "--as", ada)
            #expect(!admin.succeeded)
            #expect(admin.errors.contains("a child's sign-in is managed by the child's own guardians only"), "\(admin.errors)")
            let neither = try await cli.run("family", "devices", "revoke", kid, "--community", community, "--as", max)
            #expect(!neither.succeeded && neither.errors.contains("--device"), "\(neither.errors)")

            let one = try await cli.json("family", "devices", "revoke", kid, "--community", community, "--device", first, "--as", max)
            #expect(one["revoked"] as? Bool == true)
            let statuses = try await cli.jsonArray("family", "devices", "list", kid, "--community", community, "--as", max)
                .reduce(into: [String: String]()) { $0[$1["id"] as? String ?? ""] = $1["status"] as? String }
            #expect(statuses == [first: "revoked", second: "pending"])
            #expect(try await cli.run("family", "devices", "revoke", kid, "--community", community, "--all", "--as", max).succeeded)
            let after = try await cli.jsonArray("family", "devices", "list", kid, "--community", community, "--as", max)
            #expect(after.allSatisfy { $0["status"] as? String == "revoked" })
        }
    }

    @Test("chat: start, send (a resend stores nothing), history, read, edit, mute, list")
    func chat() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            let ada = "ada@example.com"
            let max = "max@example.com"
            _ = try await cli.json("user", "create", "--email", ada, "--name", "Ada Lovelace")
            _ = try await cli.json("user", "create", "--email", max, "--name", "Max Planck")
            let community = try #require(try await cli.json("community", "create", "--name", "Tigers", "--as", ada)["id"] as? String)
            _ = try await cli.json("community", "add-member", community, "--user", max, "--as", ada)

            let direct = try await cli.json("chat", "start", "--community", community, "--kind", "direct", "--with", max, "--as", ada)
            let conversation = try #require(direct["id"] as? String)
            let again = try await cli.json("chat", "start", "--community", community, "--kind", "direct", "--with", ada, "--as", max)
            #expect(again["id"] as? String == conversation)
            let sent = try await cli.json("chat", "send", conversation, "--text", "Kit?", "--client-id", "c-1", "--as", ada)
            let resent = try await cli.json("chat", "send", conversation, "--text", "Kit?", "--client-id", "c-1", "--as", ada)
            #expect(resent["id"] as? String == sent["id"] as? String)
            let list = try await cli.json("chat", "list", "--as", max)
            let items = try #require(list["items"] as? [[String: Any]])
            #expect(items.first { $0["id"] as? String == conversation }?["unread_count"] as? Int == 1)
            #expect(items.contains { $0["kind"] as? String == "community" })
            let messageID = try #require(sent["id"] as? String)
            let read = try await cli.json("chat", "read", conversation, "--up-to", messageID, "--as", max)
            #expect(read["unread_count"] as? Int == 0)
            let history = try await cli.json("chat", "history", conversation, "--as", ada)
            #expect((history["items"] as? [[String: Any]])?.first?["status"] as? String == "read")
            let edited = try await cli.json("chat", "edit", messageID, "--text", "Kit in the car?", "--as", ada)
            #expect(edited["text"] as? String == "Kit in the car?")
            #expect(try await cli.run("chat", "edit", messageID, "--text", "Mine", "--as", max).succeeded == false)
            let muted = try await cli.json("chat", "mute", conversation, "--until", "2030-01-01T00:00:00Z", "--as", max)
            #expect((muted["muted_until"] as? String)?.hasPrefix("2030-01-01T00:00:00") == true)
            #expect(try await cli.run("chat", "leave", conversation, "--as", max).succeeded == false)
        }
    }
}
