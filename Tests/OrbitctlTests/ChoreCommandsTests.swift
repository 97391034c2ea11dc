import Foundation
import LocalPostgres
import OrbitTestSupport
import Testing

/// The chores domain's commands end to end: a parent's decisions on completions and
/// redemptions (`chore approve|reject`, `reward fulfil|cancel`: one command, `Decide`, with the
/// decision as its parameter), in text and in JSON, and a member refused.
@Suite("orbitctl chore and reward: decisions")
struct ChoreCommandsTests {
    @Test("approve and reject a completion, fulfil and cancel a redemption: what each prints, and a member may not decide")
    func decisions() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            let (ada, max) = ("ada@example.com", "max@example.com")
            func id(_ object: [String: Any]) throws -> String { try #require(object["id"] as? String) }
            /// Runs a command that must succeed, and returns what it printed.
            func text(_ arguments: String...) async throws -> String {
                let result = try await cli.run(arguments)
                try #require(result.succeeded, "orbitctl \(arguments.joined(separator: " ")): \(result.errors)")
                return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
            }

            _ = try await cli.json("user", "create", "--email", ada, "--name", "Ada")
            let maxID = try id(try await cli.json("user", "create", "--email", max, "--name", "Max"))
            let community = try id(try await cli.json("community", "create", "--name", "Home", "--as", ada))
            _ = try await cli.json("community", "add-member", community, "--user", max, "--as", ada)
            func chore(_ title: String) async throws -> String {
                try id(
                    try await cli.json(
                        "chore", "create", "--community", community, "--title", title, "--points", "5", "--assign", maxID, "--as", ada))
            }
            let dishes = try id(try await cli.json("chore", "complete", try await chore("Dishes"), "--as", max))
            let laundry = try id(try await cli.json("chore", "complete", try await chore("Laundry"), "--as", max))

            let refused = try await cli.run("chore", "approve", dishes, "--as", max)
            #expect(!refused.succeeded && refused.errors.contains("admin"), "\(refused.errors)")
            #expect(try await text("chore", "approve", dishes, "--as", ada) == "Approved \(dishes): 5 points to user \(maxID).")
            let rejected = try await cli.json("chore", "reject", laundry, "--as", ada)
            #expect(rejected["id"] as? String == laundry && rejected["status"] as? String == "rejected")

            let reward = try id(try await cli.json("reward", "create", "--community", community, "--title", "Treat", "--cost", "2", "--as", ada))
            let first = try id(try await cli.json("reward", "redeem", reward, "--as", max))
            let second = try id(try await cli.json("reward", "redeem", reward, "--as", max))
            #expect(try await text("reward", "fulfil", first, "--as", ada) == "Fulfilled \(first).")
            #expect(try await text("reward", "cancel", second, "--as", ada) == "Cancelled \(second): 2 points refunded.")
            let again = try await cli.run("reward", "cancel", second, "--as", ada)
            #expect(!again.succeeded, "a redemption is resolved once")
            let points = try await cli.json("points", "show", "--community", community, "--as", max)
            #expect(points["balance"] as? Int == 3 && points["lifetime_earned"] as? Int == 5)
        }
    }
}

@Suite("orbitctl chore update, archive, unarchive, delete")
struct ChoreChangeCommandTests {
    @Test("an admin changes a chore, ends it, archives and unarchives it, and deletes one nobody did")
    func changes() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "mum@example.com", "--name", "Mum")
            let kid = try #require(try await cli.json("user", "create", "--email", "kid@example.com", "--name", "Kid")["id"] as? String)
            let home = try #require(try await cli.json("community", "create", "--name", "Home", "--as", "mum@example.com")["id"] as? String)
            _ = try await cli.json("community", "add-member", home, "--user", kid, "--as", "mum@example.com")
            let chore = try #require(
                try await cli.json(
                    "chore", "create", "--community", home, "--title", "Walk the dog", "--points", "10", "--assign", kid, "--due",
                    "2026-11-01T08:00:00Z", "--rrule", "FREQ=DAILY", "--as", "mum@example.com")["id"] as? String)
            let changed = try await cli.json(
                "chore", "update", chore, "--points", "15", "--ends-on", "2030-12-31", "--title", "Walk both dogs", "--as", "mum@example.com")
            #expect(changed["points"] as? Int == 15 && changed["recurrence_rule"] as? String == "FREQ=DAILY;UNTIL=20301231", "\(changed)")
            let refused = try await cli.run("chore", "update", chore, "--points", "99", "--as", "kid@example.com")
            #expect(!refused.succeeded, "\(refused.output)")
            let archived = try await cli.run("chore", "archive", chore, "--as", "mum@example.com")
            #expect(archived.succeeded && archived.output.contains("Archived"), "\(archived.errors)")
            let unarchived = try await cli.run("chore", "unarchive", chore, "--as", "mum@example.com")
            #expect(unarchived.succeeded, "\(unarchived.errors)")
            let deleted = try await cli.run("chore", "delete", chore, "--as", "mum@example.com")
            #expect(deleted.succeeded && deleted.output.contains("Deleted"), "\(deleted.errors)")
        }
    }

    @Test("an admin changes a reward, hides and shows it, archives it; the lists page with --limit and --cursor")
    func rewardChanges() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "mum@example.com", "--name", "Mum")
            let kid = try #require(try await cli.json("user", "create", "--email", "kid@example.com", "--name", "Kid")["id"] as? String)
            let home = try #require(try await cli.json("community", "create", "--name", "Home", "--as", "mum@example.com")["id"] as? String)
            _ = try await cli.json("community", "add-member", home, "--user", kid, "--as", "mum@example.com")
            let reward = try #require(
                try await cli.json(
                    "reward", "create", "--community", home, "--title", "Pizza", "--cost", "40", "--stock", "3", "--as", "mum@example.com")[
                        "id"] as? String)
            _ = try await cli.json("reward", "create", "--community", home, "--title", "Cinema", "--cost", "10", "--as", "mum@example.com")
            let changed = try await cli.json(
                "reward", "update", reward, "--cost", "45", "--unlimited", "--hide", "--title", "Big pizza", "--as", "mum@example.com")
            #expect(changed["points_cost"] as? Int == 45 && changed["stock"] is NSNull && changed["available"] as? Bool == false, "\(changed)")
            let both = try await cli.run("reward", "update", reward, "--hide", "--show", "--as", "mum@example.com")
            #expect(!both.succeeded && both.errors.contains("--hide and --show"), "\(both.errors)")
            let refused = try await cli.run("reward", "update", reward, "--show", "--as", "kid@example.com")
            #expect(!refused.succeeded, "\(refused.output)")
            // The kid (a member) sees what is on offer; the admin sees the hidden one too.
            let kidsList = try await cli.run("reward", "list", "--community", home, "--as", "kid@example.com")
            #expect(kidsList.succeeded && kidsList.output.contains("Cinema") && !kidsList.output.contains("Big pizza"), "\(kidsList.output)")
            let shown = try await cli.run("reward", "update", reward, "--show", "--as", "mum@example.com")
            #expect(shown.succeeded && shown.output.contains("Changed reward"), "\(shown.errors)")
            let page = try await cli.run("reward", "list", "--community", home, "--limit", "1", "--as", "kid@example.com")
            #expect(page.succeeded && page.output.contains("Cinema") && page.output.contains("More: --cursor"), "\(page.output)")
            let cursor = try #require(page.output.components(separatedBy: "--cursor ").last?.trimmingCharacters(in: .whitespacesAndNewlines))
            let next = try await cli.run("reward", "list", "--community", home, "--limit", "1", "--cursor", cursor, "--as", "kid@example.com")
            #expect(next.succeeded && next.output.contains("Big pizza") && !next.output.contains("More:"), "\(next.output)")
            let archived = try await cli.run("reward", "archive", reward, "--as", "mum@example.com")
            #expect(archived.succeeded && archived.output.contains("Archived reward"), "\(archived.errors)")
            let listed = try await cli.json("reward", "list", "--community", home, "--archived", "--as", "mum@example.com")
            #expect((listed["items"] as? [[String: Any]])?.count == 2, "\(listed)")
            let unarchived = try await cli.run("reward", "unarchive", reward, "--as", "mum@example.com")
            #expect(unarchived.succeeded, "\(unarchived.errors)")
        }
    }

    @Test("a chore that needs a photo: done with one uploaded by the parent; without, refused; the completions list the photo")
    func photoProof() async throws {
        try await withTestDatabase { database in
            let folder = FileManager.default.temporaryDirectory.appending(path: "orbit-media-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "mum@example.com", "--name", "Mum")
            let home = try #require(try await cli.json("community", "create", "--name", "Home", "--as", "mum@example.com")["id"] as? String)
            let kid = try #require(try await cli.json("family", "add", "--name", "Kit", "--as", "mum@example.com")["id"] as? String)
            let chore = try await cli.json(
                "chore", "create", "--community", home, "--title", "Tidy room", "--points", "10", "--assign", kid, "--requires-photo", "--as",
                "mum@example.com")
            let choreID = try #require(chore["id"] as? String)
            #expect(chore["requires_photo"] as? Bool == true, "\(chore)")
            let without = try await cli.run("chore", "complete", choreID, "--by", kid, "--as", "mum@example.com")
            #expect(!without.succeeded && without.errors.contains("photo"), "\(without.errors)")
            let picture = folder.appending(path: "room.jpg")
            try Data([0xFF, 0xD8, 0xFF, 0x00, 0x01]).write(to: picture)
            let media = try #require(
                try await cli.json(
                    "media", "upload", picture.path, "--community", home, "--media-dir", folder.appending(path: "store").path, "--width", "10",
                    "--height",
                    "10", "--as", "mum@example.com")["id"] as? String)
            let done = try await cli.json("chore", "complete", choreID, "--by", kid, "--photo", media, "--as", "mum@example.com")
            #expect(done["photo_media_id"] as? String == media, "\(done)")
            let listed = try await cli.run("chore", "completions", "--community", home, "--pending", "--as", "mum@example.com")
            #expect(listed.succeeded && listed.output.contains(media), "\(listed.output)")
            let off = try await cli.json("chore", "update", choreID, "--photo", "false", "--as", "mum@example.com")
            #expect(off["requires_photo"] as? Bool == false, "\(off)")
            let avatar = try await cli.json("family", "avatar", kid, "--media", media, "--as", "mum@example.com")
            #expect(avatar["avatar_media_id"] as? String == media, "\(avatar)")
            let neither = try await cli.run("family", "avatar", kid, "--as", "mum@example.com")
            #expect(!neither.succeeded && neither.errors.contains("--media or --clear"), "\(neither.errors)")
            let cleared = try await cli.run("family", "avatar", kid, "--clear", "--as", "mum@example.com")
            #expect(cleared.succeeded && cleared.output.contains("no avatar"), "\(cleared.output)")
        }
    }

    @Test("a member who is not an admin sets and approves their own child's chore; not another's")
    func parentWhoIsNotAnAdmin() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "mum@example.com", "--name", "Mum")
            let ned = try #require(try await cli.json("user", "create", "--email", "ned@example.com", "--name", "Ned")["id"] as? String)
            let home = try #require(try await cli.json("community", "create", "--name", "Home", "--as", "mum@example.com")["id"] as? String)
            _ = try await cli.json("community", "add-member", home, "--user", ned, "--as", "mum@example.com")
            let nina = try #require(try await cli.json("family", "add", "--name", "Nina", "--as", "ned@example.com")["id"] as? String)
            let mia = try #require(try await cli.json("family", "add", "--name", "Mia", "--as", "mum@example.com")["id"] as? String)
            let piano = try #require(
                try await cli.json(
                    "chore", "create", "--community", home, "--title", "Piano", "--points", "5", "--assign", nina, "--as", "ned@example.com")["id"]
                    as? String)
            let refused = try await cli.run(
                "chore", "create", "--community", home, "--title", "Dishes", "--points", "5", "--assign", mia, "--as", "ned@example.com")
            #expect(!refused.succeeded && refused.errors.contains("their own children"), "\(refused.errors)")
            let done = try #require(
                try await cli.json("chore", "complete", piano, "--by", nina, "--as", "ned@example.com")["id"] as? String)
            let approved = try await cli.run("chore", "approve", done, "--as", "ned@example.com")
            #expect(approved.succeeded && approved.output.contains("Approved"), "\(approved.errors)")
            let lego = try await cli.json("reward", "create", "--community", home, "--title", "Lego", "--cost", "5", "--as", "ned@example.com")
            #expect(lego["family_of"] as? String == ned, "\(lego)")
        }
    }

    @Test(
        "family guardians: Mum invites Ned, who accepts and then sets Mia's PIN and chores; the guardian of record moves; Mum leaves; the last cannot"
    )
    func twoGuardians() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            let mum = try #require(try await cli.json("user", "create", "--email", "mum@example.com", "--name", "Mum")["id"] as? String)
            let ned = try #require(try await cli.json("user", "create", "--email", "ned@example.com", "--name", "Ned")["id"] as? String)
            let home = try #require(try await cli.json("community", "create", "--name", "Home", "--as", "mum@example.com")["id"] as? String)
            _ = try await cli.json("community", "add-member", home, "--user", ned, "--as", "mum@example.com")
            let mia = try #require(try await cli.json("family", "add", "--name", "Mia", "--as", "mum@example.com")["id"] as? String)

            let before = try await cli.run("family", "set-pin", mia, "--community", home, "--pin", "2468", "--as", "ned@example.com")
            #expect(!before.succeeded && before.errors.contains("guardians only"), "\(before.errors)")
            let invited = try await cli.run("family", "guardians", "invite", mia, "--user", "ned@example.com", "--as", "mum@example.com")
            #expect(invited.succeeded && invited.output.contains("Invited Ned to be Mia's guardian"), "\(invited.output) \(invited.errors)")
            let invitations = try await cli.jsonArray("family", "guardians", "invitations", "--as", "ned@example.com")
            #expect(invitations.map { $0["family_member_id"] as? String } == [mia])
            let accepted = try await cli.run("family", "guardians", "accept", mia, "--as", "ned@example.com")
            #expect(accepted.succeeded && accepted.output.contains("You are now Mia's guardian"), "\(accepted.errors)")
            let pin = try await cli.run("family", "set-pin", mia, "--community", home, "--pin", "2468", "--as", "ned@example.com")
            #expect(pin.succeeded, "\(pin.errors)")
            let chore = try await cli.run(
                "chore", "create", "--community", home, "--title", "Piano", "--points", "5", "--assign", mia, "--as", "ned@example.com")
            #expect(chore.succeeded, "\(chore.errors)")
            let list = try await cli.run("family", "guardians", "list", mia, "--as", "ned@example.com")
            #expect(list.output.contains("of record") && list.output.contains("guardian"), "\(list.output)")

            let first = try await cli.run("family", "guardians", "leave", mia, "--as", "mum@example.com")
            #expect(!first.succeeded && first.errors.contains("guardian of record"), "\(first.errors)")
            let record = try await cli.json("family", "guardians", "record", mia, "--user", "ned@example.com", "--as", "mum@example.com")
            #expect(record["user_id"] as? String == ned, "\(record)")
            let left = try await cli.run("family", "guardians", "leave", mia, "--as", "mum@example.com")
            #expect(left.succeeded && left.output.contains("no longer"), "\(left.errors)")
            let last = try await cli.run("family", "guardians", "leave", mia, "--as", "ned@example.com")
            #expect(!last.succeeded && last.errors.contains("last guardian"), "\(last.errors)")
            #expect(try await cli.jsonArray("family", "list", "--as", "ned@example.com").map { $0["id"] as? String } == [mia])
            #expect(try await cli.jsonArray("family", "list", "--as", "mum@example.com").isEmpty)
            _ = mum
        }
    }
}
