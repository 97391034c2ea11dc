import Foundation
import HTTPTypes
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Offline writes survive any time offline (issue 38, item 3; docs/sync.md, "Offline writes"):
/// a create with the client's own id, replayed after the idempotency keys are long gone, finds
/// the entity it made.
@Suite("Creates with the client's id")
struct ClientIDTests {
    /// One create of the offline queue: where it goes, what it sends, and the table it fills.
    struct Create {
        var path: String
        var body: [String: Any]
        /// The same create with other content.
        var changed: [String: Any]
        var table: String
        var token: String
    }

    /// Sends `create` with `id` (and an idempotency key, as an app does).
    /// (Another body is another queued operation, with an idempotency key of its own.)
    static func send(_ harness: APIHarness, _ create: Create, id: UUID, body: [String: Any]? = nil, token: String? = nil) async throws
        -> TestResponse
    {
        var json = body ?? create.body
        json["id"] = id.uuidString
        let key = body == nil ? "queue-\(id.uuidString)" : UUID().uuidString
        return try await harness.request(.post, create.path, token: token ?? create.token, json: json, headers: ["Idempotency-Key": key])
    }

    static func rows(_ harness: APIHarness, in table: String, id: UUID) async throws -> Int {
        try await harness.database.withConnection { connection in
            // The table name is one of this test's own constants, never input.
            try await connection.query("SELECT count(*) FROM \(unescaped: table) WHERE id = \(id)").single().decode(Int.self)
        }
    }

    /// The admin's community with a post, a chore worth 30 points (no approval) for the member's
    /// child, a reward of 25, dues, and the child signed in on a paired device.
    struct Fixture {
        var cast: APICast
        var post: String
        var chore: String
        var reward: String
        var dues: String
        var kid: FamilyMemberID
        var childToken: String

        static func make(_ harness: APIHarness) async throws -> Fixture {
            let cast = try await APICast.make(harness)
            let kid = try await harness.services.family.add(name: "Kit", as: cast.member).id
            let community = "/communities/\(cast.community)"
            func create(_ path: String, _ json: [String: Any]) async throws -> String {
                try await harness.create(path, json, token: cast.adminToken)
            }
            let post = try await create("\(community)/posts", ["content": "Kit day"])
            let chore = try await create(
                "\(community)/chores", ["title": "Tidy room", "points": 30, "assignees": [kid.description], "requires_approval": false])
            let reward = try await create("\(community)/rewards", ["title": "Ice cream", "points_cost": 25])
            let dues = try await create("\(community)/dues", ["name": "Season", "amount": 5000, "due_date": "2030-01-31"])
            let pin = try await harness.request(.put, "\(community)/family/\(kid)/pin", token: cast.memberToken, json: ["pin": "2580"])
            #expect(pin.status == 204, "\(pin.text)")
            let pairing = try await harness.request(.post, "\(community)/family/\(kid)/devices", token: cast.memberToken)
            let paired = try await harness.request(.post, "/auth/child", json: ["pairing_code": try pairing.string("pairing_code")])
            let signedIn = try await harness.request(.post, "/auth/child", json: ["device_token": try paired.string("device_token"), "pin": "2580"])
            #expect(signedIn.status == 200, "\(signedIn.text)")
            return Fixture(
                cast: cast, post: post, chore: chore, reward: reward, dues: dues, kid: kid, childToken: try signedIn.string("access_token"))
        }

        /// Every create an app queues offline, in an order in which each can run.
        var creates: [Create] {
            let community = "/communities/\(cast.community)"
            let admin = cast.adminToken
            let split: [String: Any] = ["method": "equal", "user_ids": [cast.admin.description, cast.member.description]]
            return [
                Create(path: "/communities", body: ["name": "Hornets"], changed: ["name": "Wasps"], table: "communities", token: admin),
                Create(path: "\(community)/posts", body: ["content": "Boots"], changed: ["content": "Shoes"], table: "posts", token: admin),
                Create(path: "/posts/\(post)/comments", body: ["content": "Mine"], changed: ["content": "Yours"], table: "comments", token: admin),
                Create(
                    path: "\(community)/events", body: ["title": "Game", "starts_at": "2030-05-01T10:00:00Z"],
                    changed: ["title": "Game", "starts_at": "2030-05-02T10:00:00Z"], table: "events", token: admin),
                Create(
                    path: "\(community)/expenses", body: ["description": "Balls", "amount": 3000, "split": split],
                    changed: ["description": "Balls", "amount": 3100, "split": split], table: "transactions", token: admin),
                Create(
                    path: "\(community)/settlements",
                    body: ["from_user_id": cast.member.description, "to_user_id": cast.admin.description, "amount": 500],
                    changed: ["from_user_id": cast.member.description, "to_user_id": cast.admin.description, "amount": 600],
                    table: "transactions", token: admin),
                Create(
                    path: "\(community)/dues", body: ["name": "Kit", "amount": 2000, "due_date": "2030-02-28"],
                    changed: ["name": "Kit", "amount": 2500, "due_date": "2030-02-28"], table: "dues", token: admin),
                Create(
                    path: "/dues/\(dues)/payments", body: ["user_id": cast.member.description, "amount": 1000],
                    changed: ["user_id": cast.member.description, "amount": 900], table: "dues_payments", token: admin),
                Create(
                    path: "\(community)/recurring-charges",
                    body: ["kind": "dues", "description": "Monthly", "amount": 1500, "recurrence_rule": "FREQ=MONTHLY;BYMONTHDAY=1"],
                    changed: ["kind": "dues", "description": "Monthly", "amount": 1600, "recurrence_rule": "FREQ=MONTHLY;BYMONTHDAY=1"],
                    table: "recurring_charges", token: admin),
                Create(
                    path: "/users/me/family", body: ["name": "Robin"], changed: ["name": "Rowan"], table: "family_members", token: cast.memberToken),
                Create(
                    path: "\(community)/chores", body: ["title": "Dishes", "points": 10, "assignees": [kid.description]],
                    changed: ["title": "Dishes", "points": 20, "assignees": [kid.description]], table: "chores",
                    token: admin),
                Create(
                    path: "\(community)/rewards", body: ["title": "Film", "points_cost": 40], changed: ["title": "Film", "points_cost": 50],
                    table: "rewards", token: admin),
                Create(
                    path: "\(community)/chats", body: ["kind": "group", "user_ids": [cast.member.description], "title": "Coaches"],
                    changed: ["kind": "group", "user_ids": [cast.member.description], "title": "Parents"], table: "conversations", token: admin),
                Create(path: "\(community)/invites", body: ["max_uses": 5], changed: ["max_uses": 6], table: "invites", token: admin),
                // The child's own queue: a chore done and a reward redeemed on their device.
                Create(
                    path: "/chores/\(chore)/completions", body: ["note": "Done"], changed: ["note": "Really done"], table: "chore_completions",
                    token: childToken),
                Create(
                    path: "/rewards/\(reward)/redemptions", body: [:], changed: ["by": kid.description], table: "reward_redemptions",
                    token: childToken),
            ]
        }
    }

    @Test(
        "every create takes the client's id: replayed after the idempotency keys are purged it is 200 with the stored entity and no second row; other content is 409 with the stored version; someone else's replay is 409 without it"
    )
    func replaysOfAnyAge() async throws {
        try await withAPI { harness in
            let fixture = try await Fixture.make(harness)
            for create in fixture.creates {
                let id = UUID()
                let first = try await Self.send(harness, create, id: id)
                #expect(first.status == 201, "\(create.path): \(first.text)")
                #expect(try first.string("id") == id.uuidString.lowercased(), "\(create.path)")

                // A weekend later: the idempotency keys (24 hours) are gone; the queue sends it again.
                try await harness.database.withConnection { try await $0.query("DELETE FROM idempotency_keys") }
                let replay = try await Self.send(harness, create, id: id)
                #expect(replay.status == 200, "\(create.path): \(replay.text)")
                #expect(try replay.string("id") == id.uuidString.lowercased(), "\(create.path)")
                #expect(try await Self.rows(harness, in: create.table, id: id) == 1, "\(create.path)")

                // The same id with other content: refused, with the stored version to reconcile.
                let changed = try await Self.send(harness, create, id: id, body: create.changed)
                #expect(changed.status == 409, "\(create.path): \(changed.text)")
                #expect(try changed.string("field") == "id")
                let stored = try #require(try changed.json["stored"] as? [String: Any], "\(create.path): \(changed.text)")
                #expect(stored["id"] as? String == id.uuidString.lowercased())

                // Someone else who sends the same request with this id does not get the entity.
                let stranger = try await Self.send(harness, create, id: id, token: fixture.cast.outsiderToken)
                #expect([404, 409].contains(stranger.status), "\(create.path): \(stranger.text)")
                if stranger.status == 409 { #expect(try stranger.json["stored"] == nil, "\(create.path): \(stranger.text)") }
                #expect(try await Self.rows(harness, in: create.table, id: id) == 1, "\(create.path)")
            }

            // The replayed redemption was debited once: 30 earned, 25 spent.
            let points = try await harness.request(.get, "/communities/\(fixture.cast.community)/points", token: fixture.childToken)
            #expect(try points.json["balance"] as? Int == 5, "\(points.text)")
        }
    }

    @Test("a create without an id still gets one from the server; an id that is not a UUID is 400; an entity's id taken by another create is 409")
    func idsThatAreNotTheClients() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let path = "/communities/\(cast.community)/posts"
            let plain = try await harness.request(.post, path, token: cast.adminToken, json: ["content": "No id"])
            #expect(plain.status == 201)
            let bad = try await harness.request(.post, path, token: cast.adminToken, json: ["content": "Bad id", "id": "not-a-uuid"])
            #expect(bad.status == 400, "\(bad.text)")
            #expect(try bad.string("field") == "id")
            let null = try await harness.request(.post, path, token: cast.adminToken, json: ["content": "Null id", "id": NSNull()])
            #expect(null.status == 400, "\(null.text)")
            // The id of a post the server made, sent as a client's: no second post, and not this one either.
            let taken = try await harness.request(.post, path, token: cast.adminToken, json: ["content": "Copy", "id": try plain.string("id")])
            #expect(taken.status == 409, "\(taken.text)")
            #expect(try (taken.json["stored"] as? [String: Any])?["content"] as? String == "No id", "\(taken.text)")
        }
    }

    @Test(
        "a media upload takes the client's id from the query: replayed it is 200 with the upload and one file; other bytes are 409; an upload of that id in progress is 409, and its file stays; a direct chat the pair has is 200"
    )
    func mediaAndDirectChats() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "orbit-media-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withAPI(storage: LocalDirectoryStorage(root: folder)) { harness in
            let cast = try await APICast.make(harness)
            let id = UUID()
            let path = "/communities/\(cast.community)/media?filename=rules.pdf&id=\(id.uuidString)"
            func upload(_ text: String, at path: String) async throws -> TestResponse {
                try await harness.request(
                    .post, path, token: cast.memberToken, body: Data(text.utf8), headers: ["Content-Type": "application/pdf"])
            }
            let first = try await upload("%PDF-1.4 rules", at: path)
            #expect(first.status == 201, "\(first.text)")
            #expect(try first.string("id") == id.uuidString.lowercased())
            try await harness.database.withConnection { try await $0.query("DELETE FROM idempotency_keys") }
            let replay = try await upload("%PDF-1.4 rules", at: path)
            #expect(replay.status == 200, "\(replay.text)")
            #expect(try replay.string("id") == id.uuidString.lowercased())
            let other = try await upload("%PDF-1.4 other rules", at: path)
            #expect(other.status == 409, "\(other.text)")
            #expect(try await ClientIDTests.rows(harness, in: "media", id: id) == 1)
            let stored = try await harness.request(.get, "/media/\(id.uuidString)", token: cast.adminToken)
            #expect(stored.text == "%PDF-1.4 rules", "the first upload's file, untouched")
            let bad = try await upload("%PDF-1.4", at: "/communities/\(cast.community)/media?filename=a.pdf&id=nope")
            #expect(bad.status == 400, "\(bad.text)")
            #expect(try bad.string("field") == "id")

            // Another upload of an id whose file is being stored (its row not yet written): 409,
            // and the file in place stays.
            let racing = UUID()
            let folderOfIt = folder.appending(path: "\(cast.community)/\(racing.uuidString.lowercased())")
            try FileManager.default.createDirectory(at: folderOfIt, withIntermediateDirectories: true)
            try Data("in progress".utf8).write(to: folderOfIt.appending(path: "b.pdf"))
            let raced = try await upload("%PDF-1.4 b", at: "/communities/\(cast.community)/media?filename=b.pdf&id=\(racing.uuidString)")
            #expect(raced.status == 409, "\(raced.text)")
            #expect(try String(contentsOf: folderOfIt.appending(path: "b.pdf"), encoding: .utf8) == "in progress")

            // A direct conversation the pair has already: 200 with it (its id, not the client's).
            let direct = try await harness.request(
                .post, "/communities/\(cast.community)/chats", token: cast.adminToken,
                json: ["kind": "direct", "user_ids": [cast.member.description], "id": UUID().uuidString])
            #expect(direct.status == 201, "\(direct.text)")
            let again = try await harness.request(
                .post, "/communities/\(cast.community)/chats", token: cast.memberToken,
                json: ["kind": "direct", "user_ids": [cast.admin.description], "id": UUID().uuidString])
            #expect(again.status == 200, "\(again.text)")
            #expect(try again.string("id") == (try direct.string("id")))
        }
    }

    @Test("a replay of a create that was deleted since is 410 and does not bring it back")
    func deletedSince() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let create = Create(
                path: "/communities/\(cast.community)/posts", body: ["content": "Soon gone"], changed: [:], table: "posts", token: cast.adminToken)
            let id = UUID()
            #expect(try await Self.send(harness, create, id: id).status == 201)
            #expect(try await harness.request(.delete, "/posts/\(id.uuidString)", token: cast.adminToken).status == 204)
            try await harness.database.withConnection { try await $0.query("DELETE FROM idempotency_keys") }
            let replay = try await Self.send(harness, create, id: id)
            #expect(replay.status == 410, "\(replay.text)")
            let feed = try await harness.request(.get, "/communities/\(cast.community)/posts", token: cast.adminToken)
            #expect(try feed.items.isEmpty, "\(feed.text)")
        }
    }

    @Test("the same create sent twice at once makes one entity: one 201, the other 200 with it")
    func concurrentReplays() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            for _ in 0..<10 {
                let id = UUID()
                let json: [String: Any] = [
                    "id": id.uuidString, "description": "Pizza", "amount": 2400,
                    "split": ["method": "equal", "user_ids": [cast.admin.description, cast.member.description]],
                ]
                let body = try JSONSerialization.data(withJSONObject: json)
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<2 {
                        group.addTask {
                            try await harness.request(
                                .post, "/communities/\(cast.community)/expenses", token: cast.adminToken, body: body,
                                headers: ["Content-Type": "application/json"]
                            ).status
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }.sorted()
                }
                #expect(statuses == [200, 201], "\(statuses)")
                #expect(try await Self.rows(harness, in: "transactions", id: id) == 1)
            }
        }
    }

    @Test("over a real socket, where a body is a stream read once: a create with an id is 201, again 200; one without an id is 201")
    func overASocket() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            try await SocketTests().withServer(harness) { port, _ in
                let path = "/communities/\(cast.community)/posts"
                let id = UUID().uuidString.lowercased()
                let first = try await rawRequest(port: port, "POST", path, token: cast.adminToken, json: #"{"id": "\#(id)", "content": "Hi"}"#)
                #expect(first.hasPrefix("HTTP/1.1 201") && first.contains(id), "\(first)")
                let again = try await rawRequest(port: port, "POST", path, token: cast.adminToken, json: #"{"content": "Hi", "id": "\#(id)"}"#)
                #expect(again.hasPrefix("HTTP/1.1 200") && again.contains(id), "\(again)")
                let plain = try await rawRequest(port: port, "POST", path, token: cast.adminToken, json: #"{"content": "No id"}"#)
                #expect(plain.hasPrefix("HTTP/1.1 201"), "\(plain)")
            }
        }
    }
}

/// Issue 38, item 2: a child's device syncs its own chores, points and rewards with its token, and
/// hears of a parent's approval on `/live`.
@Suite("A child's device syncs")
struct ChildSyncTests {
    /// Pulls `path` with `token` from `after` until there is no more: the ids seen per entity,
    /// and the cursor to go on from.
    static func pull(_ harness: APIHarness, _ path: String, token: String, after: String?) async throws -> ([String: Set<String>], String) {
        var seen: [String: Set<String>] = [:]
        var cursor = after
        while true {
            let page = try await harness.request(.get, path + (cursor.map { "?cursor=\($0)" } ?? ""), token: token)
            #expect(page.status == 200, "\(page.text)")
            for change in try #require(try page.json["changes"] as? [[String: Any]]) {
                seen[change["entity"] as? String ?? "?", default: []].insert(change["id"] as? String ?? "?")
            }
            cursor = try page.string("next_cursor")
            if try page.json["has_more"] as? Bool != true { return (seen, cursor ?? "") }
        }
    }

    @Test(
        "a child's token pulls its community's feed: chores, completions, rewards, redemptions and points only; a parent's approval reaches the child's socket, and the next pull has it"
    )
    func childFeedAndLive() async throws {
        try await withAPI { harness in
            let fixture = try await ClientIDTests.Fixture.make(harness)
            let community = "/communities/\(fixture.cast.community)"
            // Something of every other kind too, which the child must not get.
            _ = try await harness.request(.post, "\(community)/posts", token: fixture.cast.adminToken, json: ["content": "Grown-ups only"])
            let approval = try await harness.request(
                .post, "\(community)/chores", token: fixture.cast.adminToken,
                json: ["title": "Feed the cat", "points": 5, "assignees": [fixture.kid.description], "requires_approval": true])
            #expect(approval.status == 201, "\(approval.text)")

            // The state, with the child's token.
            var (seen, cursor) = try await Self.pull(harness, "\(community)/changes", token: fixture.childToken, after: nil)
            #expect(Set(seen.keys).isSubset(of: ["chore", "chore_completion", "reward", "reward_redemption", "points"]), "\(seen.keys.sorted())")
            let approvalID = try approval.string("id")
            #expect(seen["chore"]?.contains(fixture.chore) == true && seen["chore"]?.contains(approvalID) == true)
            #expect(seen["reward"]?.contains(fixture.reward) == true)

            // The child marks the chore done; the parent approves it while the child's socket listens.
            let done = try await harness.request(.post, "/chores/\(try approval.string("id"))/completions", token: fixture.childToken, json: [:])
            #expect(done.status == 201, "\(done.text)")
            (seen, cursor) = try await Self.pull(harness, "\(community)/changes", token: fixture.childToken, after: cursor)
            let doneID = try done.string("id")
            let cursorBeforeApproval = cursor
            #expect(seen["chore_completion"]?.contains(doneID) == true, "\(seen)")
            try await LiveTests().withServer(harness, heartbeat: .seconds(30)) { port in
                let child = Received()
                try await withThrowingTaskGroup(of: Void.self) { sockets in
                    sockets.addTask { try await LiveTests.listen(port: port, token: fixture.childToken, into: child) }
                    // The socket is registered at some point after the upgrade: approve, then
                    // (if it was not yet there) touch the chore again until it hears.
                    let approved = try await harness.request(
                        .post, "/chore-completions/\(try done.string("id"))/approve", token: fixture.cast.adminToken)
                    #expect(approved.status == 200, "\(approved.text)")
                    try await waitUntil("the child's socket hears of the approval") {
                        if child.changes.isEmpty {
                            _ = try await harness.request(
                                .post, "\(community)/rewards", token: fixture.cast.adminToken, json: ["title": "Sticker", "points_cost": 1])
                            try await Task.sleep(for: .milliseconds(200))
                        }
                        return !child.changes.isEmpty
                    }
                    sockets.cancelAll()
                }
                #expect(child.changes.allSatisfy { $0.contains(fixture.cast.community.description) })
                // (Pulled while the server runs: its shutdown closes the services' pool.)
                let (later, _) = try await Self.pull(harness, "\(community)/changes", token: fixture.childToken, after: cursorBeforeApproval)
                #expect(later["chore_completion"]?.contains(doneID) == true && later["points"]?.isEmpty == false, "\(later)")

                // Another community's feed is not the child's: a non-member's tombstone.
                let elsewhere = try await harness.request(.get, "/communities/\(fixture.cast.otherCommunity)/changes", token: fixture.childToken)
                #expect(try (elsewhere.json["changes"] as? [[String: Any]])?.map { $0["op"] as? String } == ["delete"], "\(elsewhere.text)")
            }
        }
    }
}
