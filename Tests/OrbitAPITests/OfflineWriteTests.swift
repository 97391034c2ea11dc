import Foundation
import HTTPTypes
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@testable import OrbitAPI

/// Offline writes (docs/sync.md): entity tags on GETs and in the change feed, `If-Match` on
/// updates and deletes, 412 with the current version.
@Suite("Offline writes")
struct OfflineWriteTests {
    /// A community with an event, a post with a comment, an expense and dues, made over HTTP
    /// by the admin; their paths.
    struct Fixture {
        var cast: APICast
        var event: String
        var post: String
        var comment: String
        var expense: String
        var dues: String

        static func make(_ harness: APIHarness) async throws -> Fixture {
            let cast = try await APICast.make(harness)
            let community = "/communities/\(cast.community)"
            func create(_ path: String, _ json: [String: Any]) async throws -> String {
                try await harness.create(path, json, token: cast.adminToken)
            }
            let event = try await create("\(community)/events", ["title": "Game", "starts_at": "2030-05-01T10:00:00Z"])
            let post = try await create("\(community)/posts", ["content": "Kit day", "poll": ["question": "Size?", "options": ["S", "M"]]])
            let comment = try await create("/posts/\(post)/comments", ["content": "I'll bring the bags"])
            let expense = try await create(
                "\(community)/expenses",
                [
                    "description": "Balls", "amount": 3000,
                    "split": ["method": "equal", "user_ids": [cast.admin.description, cast.member.description]],
                ])
            let dues = try await create("\(community)/dues", ["name": "Season", "amount": 5000, "due_date": "2030-01-31"])
            return Fixture(
                cast: cast, event: "/events/\(event)", post: "/posts/\(post)", comment: "/comments/\(comment)", expense: "/expenses/\(expense)",
                dues: "/dues/\(dues)")
        }
    }

    /// The feed from the start, as `token` pulls it: the tag of each entity upserted, by id.
    static func feedTags(_ harness: APIHarness, community: CommunityID, token: String) async throws -> [String: String] {
        var tags: [String: String] = [:]
        var cursor: String?
        repeat {
            let query = cursor.map { "?cursor=\($0)" } ?? ""
            let page = try await harness.request(.get, "/communities/\(community)/changes\(query)", token: token)
            #expect(page.status == 200, "\(page.text)")
            for change in try #require(try page.json["changes"] as? [[String: Any]]) where change["op"] as? String == "upsert" {
                tags[try #require(change["id"] as? String)] = try #require(change["etag"] as? String, "an upsert without etag")
            }
            cursor = try page.string("next_cursor")
            if try page.json["has_more"] as? Bool != true { break }
        } while true
        return tags
    }

    static func etag(_ response: TestResponse) throws -> String {
        try #require(response.headers[.eTag], "no ETag")
    }

    @Test("an entity's GET sends the ETag the change feed sends with it; If-None-Match with it is 304")
    func getsAndTheFeedAgree() async throws {
        try await withAPI { harness in
            let fixture = try await Fixture.make(harness)
            let token = fixture.cast.adminToken
            let tags = try await Self.feedTags(harness, community: fixture.cast.community, token: token)
            let member = try await harness.request(.get, "/communities/\(fixture.cast.community)/members/me", token: token)
            let paths = [
                "/communities/\(fixture.cast.community)": fixture.cast.community.description, fixture.event: nil, fixture.post: nil,
                fixture.expense: nil, fixture.dues: nil, "/communities/\(fixture.cast.community)/members/me": try member.string("id"),
            ]
            for (path, id) in paths {
                let response = try await harness.request(.get, path, token: token)
                #expect(response.status == 200, "\(path): \(response.text)")
                let entityID = id ?? String(path.split(separator: "/").last ?? "")
                #expect(try Self.etag(response) == tags[entityID], "\(path)")

                let again = try await harness.request(.get, path, token: token, headers: ["If-None-Match": try Self.etag(response)])
                #expect(again.status == 304, "\(path)")
                #expect(again.body.isEmpty)
                let other = try await harness.request(.get, path, token: token, headers: ["If-None-Match": "\"something-else\""])
                #expect(other.status == 200)
            }
            // The post's JSON carries its poll's counts: a vote is a new version of the post.
            let before = try Self.etag(try await harness.request(.get, fixture.post, token: token))
            let vote = try await harness.request(.post, "\(fixture.post)/votes", token: token, json: ["option": 1])
            #expect(vote.status < 300, "\(vote.text)")
            #expect(try Self.etag(try await harness.request(.get, fixture.post, token: token)) != before)
        }
    }

    @Test("If-Match: an update or delete of a version that changed meanwhile is 412 with the current one, and changes nothing")
    func staleVersionsAreRefused() async throws {
        try await withAPI { harness in
            let fixture = try await Fixture.make(harness)
            let token = fixture.cast.adminToken
            let community = "/communities/\(fixture.cast.community)"
            // (path, its GET or nil, an edit, another edit)
            let updates: [(String, String?, [String: Any], [String: Any])] = [
                (community, community, ["name": "Tigers"], ["name": "Lions"]),
                ("\(community)/members/me", "\(community)/members/me", ["nickname": "Coach"], ["nickname": "Boss"]),
                (fixture.event, fixture.event, ["title": "Final"], ["title": "Semi-final"]),
                (fixture.post, fixture.post, ["content": "Kit day moved"], ["content": "Kit day cancelled"]),
                (fixture.comment, nil, ["content": "Bags here"], ["content": "No bags"]),
                (fixture.expense, fixture.expense, ["description": "Balls and cones"], ["description": "Cones"]),
                (fixture.dues, fixture.dues, ["name": "Season fee"], ["name": "Spring fee"]),
            ]
            for (path, getPath, edit, otherEdit) in updates {
                // The version the client saw (the comment's from the feed), then a change by
                // someone else.
                let seen: String
                if let getPath {
                    seen = try Self.etag(try await harness.request(.get, getPath, token: token))
                } else {
                    let tags = try await Self.feedTags(harness, community: fixture.cast.community, token: token)
                    seen = try #require(tags[String(path.split(separator: "/").last ?? "")])
                }
                let meanwhile = try await harness.request(.patch, path, token: token, json: edit)
                #expect(meanwhile.status == 200, "\(path): \(meanwhile.text)")
                let now = try Self.etag(meanwhile)
                #expect(now != seen, "\(path)")

                let stale = try await harness.request(.patch, path, token: token, json: otherEdit, headers: ["If-Match": seen])
                #expect(stale.status == 412, "\(path): \(stale.text)")
                #expect(try stale.string("type") == "https://orbitcove.app/problems/precondition-failed")
                #expect(try Self.etag(stale) == now)
                #expect(try stale.string("etag") == now)
                let current = try #require(try stale.json["current"] as? [String: Any])
                let expected = try JSONSerialization.jsonObject(with: meanwhile.body) as? NSDictionary
                #expect(NSDictionary(dictionary: current) == expected, "\(path)")
                if let getPath {
                    // Nothing changed.
                    #expect(try Self.etag(try await harness.request(.get, getPath, token: token)) == now)
                }

                // The current version (or any of a list holding it) is accepted; the answer has
                // the new version, which is what the GET then sends.
                let fresh = try await harness.request(.patch, path, token: token, json: otherEdit, headers: ["If-Match": "\"old\", \(now)"])
                #expect(fresh.status == 200, "\(path): \(fresh.text)")
                if let getPath {
                    #expect(try Self.etag(try await harness.request(.get, getPath, token: token)) == Self.etag(fresh), "\(path)")
                }
                // A weak tag never matches (If-Match compares strongly); `*` matches any version.
                let weak = try await harness.request(.patch, path, token: token, json: edit, headers: ["If-Match": "W/\(try Self.etag(fresh))"])
                #expect(weak.status == 412, "\(path)")
                let any = try await harness.request(.patch, path, token: token, json: edit, headers: ["If-Match": "*"])
                #expect(any.status == 200, "\(path)")
            }

            // Not a list of entity tags: refused as malformed.
            let malformed = try await harness.request(.patch, fixture.dues, token: token, json: ["name": "X"], headers: ["If-Match": "no-quotes"])
            #expect(malformed.status == 400)
            #expect(try malformed.string("field") == "If-Match")

            // Deletes likewise: a stale version is refused and deletes nothing.
            for path in [fixture.comment, fixture.post, fixture.event, fixture.expense, community] {
                let tags = try await Self.feedTags(harness, community: fixture.cast.community, token: token)
                let id = String(path.split(separator: "/").last ?? "")
                let current = try #require(tags[id], "\(path)")
                let stale = try await harness.request(.delete, path, token: token, headers: ["If-Match": "\"stale\""])
                #expect(stale.status == 412, "\(path): \(stale.text)")
                #expect(try stale.string("etag") == current)
                let deleted = try await harness.request(.delete, path, token: token, headers: ["If-Match": current])
                #expect(deleted.status == 204, "\(path): \(deleted.text)")
            }

        }
    }

    @Test("two clients editing the same version at once: exactly one wins, the others get 412")
    func concurrentEditsOfOneVersion() async throws {
        try await withAPI { harness in
            let fixture = try await Fixture.make(harness)
            let token = fixture.cast.adminToken
            let seen = try Self.etag(try await harness.request(.get, fixture.post, token: token))
            let postID = try #require(UUID(uuidString: String(fixture.post.split(separator: "/").last ?? "")))
            // Hold the post's row, so that every writer has checked the version and waits to
            // write it when the row is let go: the check and the write must still be one step.
            let holder = try await harness.database.connect()
            try await holder.executeScript("BEGIN")
            try await holder.query("SELECT id FROM posts WHERE id = \(postID) FOR UPDATE")
            let writers = 4
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        try await harness.request(
                            .patch, fixture.post, token: token, json: ["content": "Edit \(writer)"], headers: ["If-Match": seen]
                        )
                        .status
                    }
                }
                let deadline = ContinuousClock.now + .seconds(20)
                while ContinuousClock.now < deadline {
                    let waiting = try await harness.database.withConnection { connection in
                        try await connection.query(
                            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                        ).single().decode(0, as: Int64.self)
                    }
                    if waiting >= writers { break }
                    try await Task.sleep(for: .milliseconds(5))  // polling until every writer waits for the row
                }
                try await holder.executeScript("COMMIT")
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            await holder.close()
            #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0 == 412 }.count == writers - 1, "\(statuses)")
        }
    }

    @Test("a browser app may send If-Match with a PATCH or DELETE and read the ETag (CORS)")
    func crossOriginWrites() async throws {
        try await withAPI(configure: { $0.corsOrigin = "https://app.example" }) { harness in
            let preflight = try await harness.request(
                .options, "/posts/00000000-0000-4000-8000-000000000001",
                headers: ["Origin": "https://app.example", "Access-Control-Request-Method": "PATCH", "Access-Control-Request-Headers": "If-Match"])
            #expect(preflight.status < 300)
            let methods = preflight.headers[HTTPField.Name("Access-Control-Allow-Methods")!] ?? ""
            #expect(methods.contains("PATCH") && methods.contains("DELETE") && methods.contains("PUT"), "\(methods)")
            #expect((preflight.headers[HTTPField.Name("Access-Control-Allow-Headers")!] ?? "").lowercased().contains("if-match"))
            let get = try await harness.request(.get, "/healthz", headers: ["Origin": "https://app.example"])
            #expect((get.headers[HTTPField.Name("Access-Control-Expose-Headers")!] ?? "").contains("ETag"))
        }
    }
}

/// `If-Match` as RFC 9110 writes it (issue 37, item 9; found by schemathesis): a list of entity
/// tags whose characters may include commas, between commas and optional spaces or tabs.
@Suite("If-Match's grammar")
struct EntityTagGrammarTests {
    @Test(
        "lists of entity tags are read quote to quote; anything else is not an If-Match",
        arguments: [
            ("*", ["*"]), ("  *\t", ["*"]), (#""a""#, [#""a""#]), (#""""#, [#""""#]), (#"W/"a""#, [#"W/"a""#]),
            (#""a,b" , W/"c", "d""#, [#""a,b""#, #"W/"c""#, #""d""#]), ("\t\"0X2+IV<,_(#.!*`*$Vs\"\t,  \"f\"", ["\"0X2+IV<,_(#.!*`*$Vs\"", "\"f\""]),
        ])
    func valid(header: String, tags: [String]) {
        #expect(EntityTags.list(header) == tags)
    }

    @Test("not entity tags", arguments: ["0", "", "*, \"a\"", "\"a", "a\"", "\"a\" \"b\"", "\"a\",", ",\"a\"", "w/\"a\"", "\"a\u{7F}\"", "\"a b\""])
    func invalid(header: String) {
        #expect(EntityTags.list(header) == nil)
    }
}
