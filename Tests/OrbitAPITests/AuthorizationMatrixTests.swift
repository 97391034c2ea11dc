import Foundation
import HTTPTypes
import OrbitCore
import OrbitTestSupport
import Testing

/// Every endpoint that touches a community, called by each kind of caller, with the status
/// each must get: no token and an expired token 401; a non-member 404 (never 403: the
/// community's existence is not disclosed); the admin naming another community's resource 404;
/// a member 403 where the rule is admins-only.
@Suite("The authorization matrix of the API")
struct AuthorizationMatrixTests {
    struct Case {
        var method: HTTPRequest.Method
        var path: String
        var body: [String: Any]?
        /// Expected status for: no token, expired token, non-member, other community's id, member, admin.
        var expected: [Int]
    }

    @Test("status codes of every community endpoint for admin, member, non-member, no token, expired token and another community's id")
    func statusCodesOfEveryCommunityEndpointFor()
        async throws
    {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let services = harness.services
            let start = Date().addingTimeInterval(86_400)
            func resources(in community: CommunityID, admin: UserID, members: [UserID]) async throws -> [String: String] {
                let event = try await services.events.create(in: community, EventDraft(title: "Practice", startsAt: start), as: admin).id
                let post = try await services.feed.createPost(in: community, PostDraft(content: "Hello"), as: admin).id
                let expense = try await services.expenses.addExpense(
                    in: community, description: "Balls", total: try dollars("30.00"), paidBy: admin, split: .equal(members), as: admin
                ).id
                let dues = try await services.dues.create(
                    in: community, name: "Season", amount: try dollars("50.00"), dueDate: try day("2027-01-31"), as: admin
                ).id
                let chore = try await services.chores.create(
                    .init(title: "Dishes", points: 10, requiresApproval: true, assignees: members.map(\.uuid)), in: community, as: admin
                ).id
                let reward = try await services.chores.createReward(
                    in: community, title: "Ice cream", description: nil, cost: 5, stock: nil, as: admin
                ).id
                // Every community has its conversation, with every member in it.
                let chat = try #require(try await services.chat.list(in: community, as: admin).items.first { $0.kind == .community }).id
                return [
                    "{c}": community.description, "{e}": event.description, "{p}": post.description, "{x}": expense.description,
                    "{d}": dues.description, "{h}": chore.description, "{r}": reward.description, "{v}": chat.description,
                    "{a}": admin.description,
                ]
            }
            let mine = try await resources(in: cast.community, admin: cast.admin, members: [cast.admin, cast.member])
            let other = try await resources(in: cast.otherCommunity, admin: cast.outsider, members: [cast.outsider])
            let expired = try await harness.api.tokens.issue(for: cast.admin, now: Date().addingTimeInterval(-3600))

            let expenseBody: [String: Any] = [
                "description": "Snacks", "amount": 1000, "currency": "USD",
                "split": ["method": "equal", "user_ids": [cast.admin.description, cast.member.description]],
            ]
            let cases: [Case] = [
                Case(method: .get, path: "/communities/{c}", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .patch, path: "/communities/{c}", body: ["description": "New"], expected: [401, 401, 404, 404, 403, 200]),
                Case(method: .get, path: "/communities/{c}/members", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .get, path: "/communities/{c}/invites", expected: [401, 401, 404, 404, 403, 200]),
                Case(method: .post, path: "/communities/{c}/invites", body: ["max_uses": 3], expected: [401, 401, 404, 404, 403, 201]),
                Case(method: .get, path: "/communities/{c}/audit-log", expected: [401, 401, 404, 404, 403, 200]),
                Case(
                    method: .get, path: "/communities/{c}/events?from=2026-01-01T00:00:00Z&days=59",
                    expected: [401, 401, 404, 404, 200, 200]),
                Case(
                    method: .post, path: "/communities/{c}/events", body: ["title": "Game", "starts_at": "2030-05-01T10:00:00Z"],
                    expected: [401, 401, 404, 404, 201, 201]
                ),
                Case(method: .get, path: "/events/{e}", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .get, path: "/events/{e}/attendance", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .put, path: "/events/{e}/rsvp", body: ["status": "yes"], expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .get, path: "/communities/{c}/posts", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .post, path: "/communities/{c}/posts", body: ["content": "Hi"], expected: [401, 401, 404, 404, 201, 201]),
                Case(method: .get, path: "/posts/{p}", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .put, path: "/posts/{p}/pin", body: ["pinned": true], expected: [401, 401, 404, 404, 403, 200]),
                Case(method: .post, path: "/posts/{p}/comments", body: ["content": "Nice"], expected: [401, 401, 404, 404, 201, 201]),
                Case(method: .get, path: "/communities/{c}/media", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .get, path: "/communities/{c}/expenses", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .post, path: "/communities/{c}/expenses", body: expenseBody, expected: [401, 401, 404, 404, 201, 201]),
                Case(method: .get, path: "/expenses/{x}", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .get, path: "/communities/{c}/balances", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .get, path: "/communities/{c}/balances?view=pairs", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .get, path: "/communities/{c}/balances/with/{a}", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .get, path: "/communities/{c}/settle-up", expected: [401, 401, 404, 404, 200, 200]),
                // Payment handles: read by the people who share a community with their owner; anyone else is
                // told the user was not found.
                Case(method: .get, path: "/users/{a}/payment-handles", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .get, path: "/communities/{c}/dues", expected: [401, 401, 404, 404, 200, 200]),
                Case(
                    method: .post, path: "/communities/{c}/dues", body: ["name": "Kit", "amount": 2500, "due_date": "2027-03-01"],
                    expected: [401, 401, 404, 404, 403, 201]
                ),
                Case(method: .get, path: "/dues/{d}/report", expected: [401, 401, 404, 404, 200, 200]),
                Case(
                    method: .post, path: "/dues/{d}/payments", body: ["user_id": cast.member.description, "amount": 5000],
                    expected: [401, 401, 404, 404, 403, 201]
                ),
                // Money's rates, export and recurring charges, the change feed, the keys and search: members.
                Case(method: .get, path: "/communities/{c}/exchange-rates", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .get, path: "/communities/{c}/export", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .get, path: "/communities/{c}/recurring-charges", expected: [401, 401, 404, 404, 200, 200]),
                // Someone not in the community is told to drop it (docs/sync.md): one `delete` of
                // the community, whatever its id, so its existence is not disclosed.
                Case(method: .get, path: "/communities/{c}/changes", expected: [401, 401, 200, 200, 200, 200]),
                Case(method: .get, path: "/communities/{c}/keys", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .get, path: "/communities/{c}/search?q=practice", expected: [401, 401, 404, 404, 200, 200]),
                // Chores, points and rewards: members read; admins set chores and rewards.
                Case(method: .get, path: "/communities/{c}/chores", expected: [401, 401, 404, 404, 200, 200]),
                Case(
                    method: .post, path: "/communities/{c}/chores", body: ["title": "Laundry", "points": 5, "assignees": [cast.member.description]],
                    expected: [401, 401, 404, 404, 403, 201]),
                Case(method: .get, path: "/chores/{h}", expected: [401, 401, 404, 404, 200, 200]),
                // The member marks the occurrence done; the admin, an assignee too, then finds it done.
                Case(method: .post, path: "/chores/{h}/completions", body: [:], expected: [401, 401, 404, 404, 201, 409]),
                Case(method: .get, path: "/communities/{c}/chore-completions", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .get, path: "/communities/{c}/rewards", expected: [401, 401, 404, 404, 200, 200]),
                Case(
                    method: .post, path: "/communities/{c}/rewards", body: ["title": "Movie night", "points_cost": 50],
                    expected: [401, 401, 404, 404, 403, 201]),
                Case(method: .get, path: "/rewards/{r}", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .patch, path: "/rewards/{r}", body: ["points_cost": 6], expected: [401, 401, 404, 404, 403, 200]),
                Case(method: .post, path: "/rewards/{r}/archive", expected: [401, 401, 404, 404, 403, 200]),
                Case(method: .post, path: "/rewards/{r}/unarchive", expected: [401, 401, 404, 404, 403, 200]),
                Case(method: .get, path: "/communities/{c}/reward-redemptions", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .get, path: "/communities/{c}/points", expected: [401, 401, 404, 404, 200, 200]),
                Case(
                    method: .post, path: "/communities/{c}/points/adjustments",
                    body: ["holder_id": cast.member.description, "delta": 5, "reason": "Helping"], expected: [401, 401, 404, 404, 403, 200]),
                // Chat: the participants of a conversation (here, the community's: every member).
                Case(
                    method: .post, path: "/communities/{c}/chats",
                    body: ["kind": "group", "user_ids": [cast.admin.description, cast.member.description], "title": "Kit"],
                    expected: [401, 401, 404, 404, 201, 201]),
                Case(method: .get, path: "/chats/{v}", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .get, path: "/chats/{v}/messages", expected: [401, 401, 404, 404, 200, 200]),
                Case(method: .post, path: "/chats/{v}/messages", body: ["text": "Hi"], expected: [401, 401, 404, 404, 201, 201]),
                Case(method: .delete, path: "/posts/{p}", expected: [401, 401, 404, 404, 403, 204]),
                Case(method: .delete, path: "/expenses/{x}", expected: [401, 401, 404, 404, 403, 204]),
                Case(method: .delete, path: "/communities/{c}", expected: [401, 401, 404, 404, 403, 204]),
            ]

            var mismatches: [String] = []
            for testCase in cases {
                func path(_ ids: [String: String]) -> String {
                    ids.reduce(testCase.path) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
                }
                let callers: [(name: String, token: String?, ids: [String: String])] = [
                    ("no token", nil, mine), ("expired token", expired, mine), ("non-member", cast.outsiderToken, mine),
                    ("other community's id", cast.adminToken, other), ("member", cast.memberToken, mine), ("admin", cast.adminToken, mine),
                ]
                for (caller, expected) in zip(callers, testCase.expected) {
                    let response = try await harness.request(testCase.method, path(caller.ids), token: caller.token, json: testCase.body)
                    if response.status != expected {
                        mismatches.append(
                            "\(testCase.method) \(testCase.path) as \(caller.name): \(response.status), expected \(expected): \(response.text)")
                    }
                    if response.status >= 400 {
                        #expect(response.headers[.contentType] == "application/problem+json")
                        // A refusal never names the other community's resources.
                        for id in other.values where caller.ids != other {
                            #expect(!response.text.contains(id))
                        }
                    }
                }
            }
            #expect(mismatches == [])
        }
    }

    /// A member's attempts at admin actions the spec audit-logs are refused, change nothing and
    /// appear in the community's audit log with the rule that refused them; a non-member's
    /// attempts are 404 and leave no trace in a log that is not theirs.
    @Test("refused admin actions are in the audit log, and change nothing")
    func refusedAdminActionsAreInTheAudit() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let c = cast.community.description
            let attempts: [(HTTPRequest.Method, String, [String: Any]?)] = [
                (.post, "/communities/\(c)/members", ["user_id": cast.outsider.description]),
                (.put, "/communities/\(c)/members/\(cast.admin)/role", ["role": "member"]),
                (.delete, "/communities/\(c)/members/\(cast.admin)", nil),
                (.patch, "/communities/\(c)", ["description": "Taken over"]),
                (.delete, "/communities/\(c)", nil),
            ]
            for (method, path, body) in attempts {
                let asMember = try await harness.request(method, path, token: cast.memberToken, json: body)
                #expect(asMember.status == 403, "\(method) \(path): \(asMember.text)")
                let asOutsider = try await harness.request(method, path, token: cast.outsiderToken, json: body)
                #expect(asOutsider.status == 404, "\(method) \(path): \(asOutsider.text)")
            }

            let log = try await harness.request(.get, "/communities/\(c)/audit-log?limit=200", token: cast.adminToken).items
            let refused = log.filter { ($0["action"] as? String)?.hasSuffix(".refused") == true }
            #expect(refused.count == 5)
            #expect(
                Set(refused.compactMap { $0["action"] as? String })
                    == [
                        "member.added.refused", "member.role_changed.refused", "member.removed.refused", "community.updated.refused",
                        "community.deleted.refused",
                    ]
            )
            for entry in refused {
                #expect(entry["user_id"] as? String == cast.member.description)
                #expect((entry["metadata"] as? String)?.contains("only") == true, "the rule: \(entry)")
            }
            #expect(!log.contains { $0["user_id"] as? String == cast.outsider.description })

            // Nothing changed.
            let community = try await harness.request(.get, "/communities/\(c)", token: cast.adminToken).json
            #expect(community["description"] is NSNull || community["description"] == nil)
            let members = try await harness.request(.get, "/communities/\(c)/members", token: cast.adminToken).items
            #expect(members.count == 2)
            #expect(members.contains { $0["user_id"] as? String == cast.admin.description && $0["role"] as? String == "admin" })
        }
    }
}
