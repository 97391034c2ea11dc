import Foundation
import OrbitTestSupport
import Testing

@Suite("orbitctl guest")
struct GuestCommandTests {
    @Test(
        "a member adds, lists, renames and invites a guest; the guest is in an expense and in the pairs; removal waits for settling; nobody acts as a guest"
    )
    func guests() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
            let max = try #require(try await cli.json("user", "create", "--email", "max@example.com", "--name", "Max")["id"] as? String)
            let olga = try #require(try await cli.json("user", "create", "--email", "olga@example.com", "--name", "Olga")["id"] as? String)
            let community = try #require(try await cli.json("community", "create", "--name", "Trip", "--as", "ada@example.com")["id"] as? String)
            _ = try await cli.json("community", "add-member", community, "--user", max, "--as", "ada@example.com")

            let added = try await cli.run("guest", "add", "--community", community, "Gina Guest", "--as", "max@example.com")
            #expect(added.succeeded && added.output.hasPrefix("Added guest Gina Guest"), "\(added.output) \(added.errors)")
            let guests = try await cli.jsonItems("guest", "list", "--community", community, "--as", "ada@example.com")
            let guest = try #require(guests.first?["id"] as? String)
            let guestUser = try #require(guests.first?["user_id"] as? String)
            #expect(guests.count == 1 && guests.first?["guest"] as? Bool == true)
            let table = try await cli.run("guest", "list", "--community", community, "--as", "ada@example.com")
            #expect(table.output.hasPrefix("MEMBER") && table.output.contains("Gina Guest"), "\(table.output)")
            let renamed = try await cli.json("guest", "rename", guest, "Gina G.", "--as", "ada@example.com")
            #expect(renamed["display_name"] as? String == "Gina G.")

            // The guest is anyone's peer in money, by user id.
            let expense = try await cli.run(
                "expense", "add", "--community", community, "--description", "Cabin", "--amount", "60.00", "--paid-by", guestUser,
                "--split", "equal", "--between", "\(max),\(guestUser)", "--as", "max@example.com")
            #expect(expense.succeeded, "\(expense.errors)")
            let pairs = try await cli.run("balances", "pairs", "--community", community, "--as", "max@example.com")
            let owes = { (output: String, from: String, to: String, amount: String) in
                output.split(separator: "\n").contains { $0.contains("\(from)  \(to)") && $0.hasSuffix("\(amount) USD") }
            }
            #expect(pairs.succeeded && owes(pairs.output, max, guestUser, "30.00"), "\(pairs.output) \(pairs.errors)")

            // An income the guest received for Max and themself: the guest owes Max his 5.00 too.
            let income = try await cli.run(
                "expense", "add", "--community", community, "--description", "Sold the tent", "--amount", "10.00", "--paid-by", guestUser,
                "--split", "equal", "--between", "\(max),\(guestUser)", "--income", "--as", "max@example.com")
            #expect(income.succeeded && income.output.hasPrefix("Added income"), "\(income.output) \(income.errors)")
            let withIncome = try await cli.run("balances", "pairs", "--community", community, "--as", "max@example.com")
            #expect(owes(withIncome.output, max, guestUser, "25.00"), "\(withIncome.output)")
            // Left out of new splits: an expense with no split takes Max and Ada only.
            let quiet = try await cli.run("community", "split-defaults", community, "--user", guestUser, "--no-active", "--as", "max@example.com")
            #expect(quiet.succeeded && quiet.output.contains("left out of new splits"), "\(quiet.output) \(quiet.errors)")
            let plain = try await cli.json(
                "expense", "add", "--community", community, "--description", "Cones", "--amount", "4.00", "--as", "max@example.com")
            #expect((plain["splits"] as? [[String: Any]])?.count == 2, "\(plain)")
            // Corrections: another day and currency (the amount in it).
            let cones = try #require(plain["id"] as? String)
            let corrected = try await cli.json(
                "expense", "update", cones, "--date", "2026-01-03", "--currency", "EUR", "--amount", "4.00", "--as", "max@example.com")
            #expect(corrected["currency"] as? String == "EUR" && corrected["transaction_date"] as? String == "2026-01-03", "\(corrected)")
            let alone = try await cli.run("expense", "update", cones, "--currency", "EUR", "--as", "max@example.com")
            #expect(!alone.succeeded && alone.errors.contains("--amount"), "\(alone.errors)")
            let unsettled = try await cli.run("guest", "remove", guest, "--as", "max@example.com")
            #expect(!unsettled.succeeded && unsettled.errors.contains("settle up"), "\(unsettled.errors)")
            let acting = try await cli.run("guest", "list", "--community", community, "--as", guestUser)
            #expect(!acting.succeeded && acting.errors.contains("not found"), "\(acting.errors)")
            let stranger = try await cli.run("guest", "add", "--community", community, "Eve", "--as", "olga@example.com")
            #expect(!stranger.succeeded && stranger.errors.contains("not found"), "\(stranger.errors)")

            let invite = try await cli.json("guest", "invite", guest, "--as", "max@example.com")
            let code = try #require(invite["code"] as? String)
            let preview = try await cli.run("invite", "preview", code)
            #expect(preview.output.contains("takes over the money of the guest Gina G."), "\(preview.output)")
            let joined = try await cli.run("invite", "redeem", code, "--as", "olga@example.com")
            #expect(joined.succeeded && joined.output.contains("The money of guest \(guest) is yours now."), "\(joined.output) \(joined.errors)")
            let after = try await cli.run("balances", "pairs", "--community", community, "--as", "max@example.com")
            #expect(owes(after.output, max, olga, "25.00") && !after.output.contains(guestUser), "\(after.output)")
            #expect(try await cli.jsonItems("guest", "list", "--community", community, "--as", "ada@example.com").isEmpty)
        }
    }
}
