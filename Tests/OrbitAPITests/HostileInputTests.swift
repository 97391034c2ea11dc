import Foundation
import OrbitCore
import OrbitTestSupport
import Testing

/// Attacks through the API: another community's ids in bodies, and an injection
/// corpus in every kind of field. Refusals are 4xx; nothing else changes; nothing is a 5xx.
@Suite("Hostile input through the API")
struct HostileInputTests {
    func rowCounts(_ harness: APIHarness) async throws -> [String: Int] {
        try await harness.database.withConnection { connection in
            var counts: [String: Int] = [:]
            for table in [
                "users", "communities", "members", "posts", "comments", "transactions", "splits", "rsvps", "dues_payments", "family_members",
            ] {
                counts[table] = Int(try await connection.query("SELECT count(*) FROM \(unescaped: table)").single().decode(0, as: Int64.self))
            }
            return counts
        }
    }

    @Test("another community's ids in body fields are refused and change nothing")
    func anotherCommunitysIdsInBodyFieldsAre() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let services = harness.services
            let theirEvent = try await services.events.create(
                in: cast.otherCommunity, EventDraft(title: "Theirs", startsAt: Date().addingTimeInterval(86_400)), as: cast.outsider
            ).id
            let theirPost = try await services.feed.createPost(in: cast.otherCommunity, PostDraft(content: "Theirs"), as: cast.outsider).id
            let theirComment = try await services.feed.addComment(to: theirPost, content: "Theirs", as: cast.outsider).id
            let theirKid = try await services.family.add(name: "Their kid", as: cast.outsider).id
            let myEvent = try await services.events.create(
                in: cast.community, EventDraft(title: "Mine", startsAt: Date().addingTimeInterval(86_400)), as: cast.admin
            ).id
            let myPost = try await services.feed.createPost(in: cast.community, PostDraft(content: "Mine"), as: cast.admin).id
            let dues = try await services.dues.create(
                in: cast.community, name: "Season", amount: try dollars("10.00"), dueDate: try day("2030-01-01"), as: cast.admin
            ).id
            let before = try await rowCounts(harness)

            let c = cast.community.description
            let split: [String: Any] = ["method": "equal", "user_ids": [cast.admin.description, cast.outsider.description]]
            let attempts: [(String, String, [String: Any])] = [
                ("POST", "/communities/\(c)/expenses", ["description": "x", "amount": 100, "split": split]),
                (
                    "POST", "/communities/\(c)/expenses",
                    [
                        "description": "x", "amount": 100, "paid_by": cast.outsider.description,
                        "split": ["method": "equal", "user_ids": [cast.admin.description]],
                    ]
                ),
                (
                    "POST", "/communities/\(c)/expenses",
                    [
                        "description": "x", "amount": 100, "linked_event_id": theirEvent.description,
                        "split": ["method": "equal", "user_ids": [cast.admin.description]],
                    ]
                ),
                ("POST", "/communities/\(c)/posts", ["type": "event_share", "content": "x", "linked_event_id": theirEvent.description]),
                ("POST", "/posts/\(myPost)/comments", ["content": "x", "parent_id": theirComment.description]),
                ("PUT", "/events/\(myEvent)/rsvp", ["status": "yes", "family_member_id": theirKid.description]),
                (
                    "POST", "/communities/\(c)/settlements",
                    ["from_user_id": cast.outsider.description, "to_user_id": cast.admin.description, "amount": 100]
                ),
                ("POST", "/dues/\(dues)/payments", ["user_id": cast.outsider.description, "amount": 100]),
            ]
            for (method, path, body) in attempts {
                let response = try await harness.request(method == "PUT" ? .put : .post, path, token: cast.adminToken, json: body)
                #expect((400..<500).contains(response.status), "\(method) \(path) \(body): \(response.status) \(response.text)")
                #expect(!response.text.contains("Theirs"))
            }
            #expect(try await rowCounts(harness) == before)
        }
    }

    static let corpus: [String] = [
        "'; DROP TABLE users; --", "\" OR \"1\"=\"1", "Robert'); DELETE FROM posts; --", "/* comment */ SELECT 1", "-- comment", "$1 $2 :name ?",
        "a\u{0}b", "\u{202E}gnp.exe", "𝕬𝖉𝖆 ＡＤＭＩＮ", "admin\u{200B}", "%00%27", "\\x00\\'", "{\"json\": true}", "<script>alert(1)</script>",
        String(repeating: "x", count: 1 << 20),
    ]

    @Test("an injection corpus in text fields is stored literally or refused, never a server error")
    func anInjectionCorpusInTextFieldsIs() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let c = cast.community.description
            let post = try await harness.services.feed.createPost(in: cast.community, PostDraft(content: "Hello"), as: cast.admin).id
            var stored = 0
            for text in Self.corpus {
                let writes: [(String, [String: Any], String)] = [
                    ("/communities", ["name": text], "name"),
                    ("/communities/\(c)/posts", ["content": text], "content"),
                    ("/posts/\(post)/comments", ["content": text], "content"),
                    ("/users/me/family", ["name": text], "name"),
                    (
                        "/communities/\(c)/expenses",
                        ["description": text, "amount": 100, "split": ["method": "equal", "user_ids": [cast.admin.description]]], "description"
                    ),
                ]
                for (path, body, field) in writes {
                    let response = try await harness.request(.post, path, token: cast.adminToken, json: body)
                    #expect(response.status < 500, "\(path) \(field)=\(text.prefix(40)): \(response.status)")
                    if response.status == 201 {
                        stored += 1
                        // Trimmed of surrounding whitespace, otherwise exactly as sent.
                        #expect(try response.json[field] as? String == text.trimmingCharacters(in: .whitespacesAndNewlines))
                    } else {
                        #expect((400..<500).contains(response.status))
                    }
                }
                for path in ["/invites/redeem"] {
                    #expect(try await harness.request(.post, path, token: cast.adminToken, json: ["code": text]).status < 500)
                }
                let encoded = text.prefix(2000).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                for path in [
                    "/communities/\(c)/posts?cursor=\(encoded)", "/communities/\(c)/events?from=\(encoded)&days=\(encoded)",
                    "/communities/\(encoded)",
                ] {
                    let response = try await harness.request(.get, path, token: cast.adminToken)
                    #expect((400..<500).contains(response.status), "\(path.prefix(80)): \(response.status)")
                }
            }
            #expect(stored > 0)
            // The tables are all still there, with their rows.
            let counts = try await rowCounts(harness)
            #expect(counts["users"] == 3)
            #expect((counts["posts"] ?? 0) >= 1)
        }
    }

    @Test("hostile numbers and bodies: huge, negative zero, fractions, wrong types, invalid UTF-8")
    func hostileNumbersAndBodiesHugeNegativeZero() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let path = "/communities/\(cast.community)/expenses"
            let split = #"{"method":"equal","user_ids":["\#(cast.admin)"]}"#
            let bodies = [
                #"{"description":"x","amount":99999999999999999999999,"split":\#(split)}"#,
                #"{"description":"x","amount":1e309,"split":\#(split)}"#,
                #"{"description":"x","amount":-0,"split":\#(split)}"#,
                #"{"description":"x","amount":-100,"split":\#(split)}"#,
                #"{"description":"x","amount":10.5,"split":\#(split)}"#,
                #"{"description":"x","amount":"100","split":\#(split)}"#,
                #"{"description":"x","amount":2147483648,"split":\#(split)}"#,
                #"{"description":"x","amount":100,"currency":"XXX","split":\#(split)}"#,
                #"{"description":"x","amount":100,"split":{"method":"shares","shares":{"\#(cast.admin)":-1}}}"#,
                #"{"description":"x","amount":100,"split":{"method":"percent","basis_points":{"\#(cast.admin)":99999}}}"#,
                #"[1,2,3]"#, #""just a string""#, "", "{", #"{"description":"x","amount":100,"split":\#(split),"description":"y"}"#,
            ]
            var statuses: [Int] = []
            for body in bodies {
                let response = try await harness.request(
                    .post, path, token: cast.adminToken, body: Data(body.utf8), headers: ["Content-Type": "application/json"])
                statuses.append(response.status)
                #expect(response.status < 500, "\(body): \(response.status) \(response.text)")
            }
            var invalidUTF8 = Data(#"{"description":""#.utf8)
            invalidUTF8.append(contentsOf: [0xC3, 0x28, 0xFF])
            invalidUTF8.append(Data(#"","amount":100,"split":\#(split)}"#.utf8))
            let response = try await harness.request(
                .post, path, token: cast.adminToken, body: invalidUTF8, headers: ["Content-Type": "application/json"])
            #expect(response.status == 400)
            // Only the body with a duplicate key may have made an expense (JSON leaves that to the parser).
            let made = try await harness.request(.get, path, token: cast.adminToken)
            #expect(try made.items.count <= 1)
        }
    }
}
