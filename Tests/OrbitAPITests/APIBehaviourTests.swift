import Foundation
import OrbitAPI
import OrbitCore
import OrbitRuntime
import OrbitTestSupport
import Testing

@Suite("The HTTP API: flows, idempotency, problems, limits, health")
struct APIBehaviourTests {
    /// The session of the issue's note, in process: sign in, create a community, post, add an
    /// expense, read balances and settle-up suggestions.
    @Test("a member's day: community, post, expense, balances")
    func aMembersDayCommunityPostExpenseBalances() async throws {
        try await withAPI(configure: { $0.devAuth = true }) { harness in
            let ada = try await harness.services.users.create(email: "ada@example.com", displayName: "Ada").id
            let max = try await harness.services.users.create(email: "max@example.com", displayName: "Max").id
            let signIn = try await harness.request(.post, "/auth/dev", json: ["email": "ada@example.com"])
            let token = try signIn.string("access_token")

            let created = try await harness.request(
                .post, "/communities", token: token, json: ["name": "Tigers U10", "settings": ["timezone": "Europe/Berlin"]])
            #expect(created.status == 201, "\(created.text)")
            let community = try created.string("id")
            #expect(try (created.json["settings"] as? [String: Any])?["timezone"] as? String == "Europe/Berlin")
            #expect(try created.json["member_count"] as? Int == 1)
            #expect(try created.json["deleted_at"] is NSNull)

            let added = try await harness.request(.post, "/communities/\(community)/members", token: token, json: ["user_id": max.description])
            #expect(added.status == 201)

            let post = try await harness.request(.post, "/communities/\(community)/posts", token: token, json: ["content": "Practice moved to 6pm"])
            #expect(post.status == 201)
            let feed = try await harness.request(.get, "/communities/\(community)/posts?limit=10", token: token)
            #expect(try feed.items.map { $0["content"] as? String } == ["Practice moved to 6pm"])
            #expect(try feed.json["next_cursor"] is NSNull)

            let expense = try await harness.request(
                .post, "/communities/\(community)/expenses", token: token,
                json: [
                    "description": "Team dinner", "amount": 10001, "currency": "EUR",
                    "split": ["method": "equal", "user_ids": [ada.description, max.description]],
                ]
            )
            #expect(expense.status == 201, "\(expense.text)")
            #expect(try expense.json["total_amount"] as? Int == 10001)
            let splits = try #require(try expense.json["splits"] as? [[String: Any]])
            #expect(splits.compactMap { $0["amount"] as? Int }.sorted() == [5000, 5001])

            let balances = try await harness.request(.get, "/communities/\(community)/balances", token: token)
            let byUser = Dictionary(uniqueKeysWithValues: try balances.items.map { ($0["user_id"] as? String ?? "", $0["balance"] as? Int ?? 0) })
            let maxShare = splits.first { $0["user_id"] as? String == max.description }?["amount"] as? Int
            #expect(byUser[max.description] == maxShare.map { -$0 })
            #expect(byUser[ada.description] == maxShare)
            let settleUp = try await harness.request(.get, "/communities/\(community)/settle-up", token: token)
            #expect(try settleUp.items.first?["from_user_id"] as? String == max.description)
            #expect(try settleUp.items.first?["currency"] as? String == "EUR")
        }
    }

    @Test("a retried POST with the same Idempotency-Key returns the first response and creates one expense")
    func aRetriedPOSTWithTheSameIdempotency() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let body: [String: Any] = [
                "description": "Balls", "amount": 3000, "split": ["method": "equal", "user_ids": [cast.admin.description, cast.member.description]],
            ]
            let path = "/communities/\(cast.community)/expenses"
            let first = try await harness.request(.post, path, token: cast.adminToken, json: body, headers: ["Idempotency-Key": "retry-1"])
            let second = try await harness.request(.post, path, token: cast.adminToken, json: body, headers: ["Idempotency-Key": "retry-1"])
            #expect(first.status == 201)
            #expect(second.status == 201)
            #expect(second.body == first.body)
            #expect(second.headers[.init("Idempotent-Replayed")!] == "true")

            // Same key, different request: refused. Another user's key is their own.
            var other = body
            other["amount"] = 4000
            let mismatch = try await harness.request(.post, path, token: cast.adminToken, json: other, headers: ["Idempotency-Key": "retry-1"])
            #expect(mismatch.status == 422)
            #expect(try mismatch.string("type") == "https://orbitcove.app/problems/idempotency-mismatch")
            let members = try await harness.request(.post, path, token: cast.memberToken, json: body, headers: ["Idempotency-Key": "retry-1"])
            #expect(members.status == 201)

            // Without a key every POST counts.
            _ = try await harness.request(.post, path, token: cast.adminToken, json: body)
            let expenses = try await harness.request(.get, path, token: cast.adminToken)
            #expect(try expenses.items.count == 3)

            // Keys expire: the hourly job removes them, and the key is free again.
            let later = OrbitServices(pool: harness.services.pool, now: { Date().addingTimeInterval(86_400 + 60) })
            #expect(try await later.idempotency.purgeExpired() == 2)

            // A refusal is replayed too (it is the answer to that request).
            let refused = try await harness.request(
                .post, "/communities/\(cast.community)/dues", token: cast.memberToken,
                json: ["name": "Kit", "amount": 100, "due_date": "2027-01-01"], headers: ["Idempotency-Key": "k2"])
            #expect(refused.status == 403)
            let again = try await harness.request(
                .post, "/communities/\(cast.community)/dues", token: cast.memberToken,
                json: ["name": "Kit", "amount": 100, "due_date": "2027-01-01"], headers: ["Idempotency-Key": "k2"])
            #expect(again.status == 403)
            #expect(again.body == refused.body)
        }
    }

    @Test("concurrent requests with one Idempotency-Key create one expense")
    func concurrentRequestsWithOneIdempotencyKeyCreate() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let body: [String: Any] = ["description": "Balls", "amount": 3000, "split": ["method": "equal", "user_ids": [cast.admin.description]]]
            let data = try JSONSerialization.data(withJSONObject: body)
            let responses = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await harness.request(
                            .post, "/communities/\(cast.community)/expenses", token: cast.adminToken, body: data,
                            headers: ["Idempotency-Key": "same", "Content-Type": "application/json"]
                        )
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let created = responses.filter { $0.status == 201 }
            #expect(!created.isEmpty)
            #expect(Set(created.map(\.body)).count == 1)
            #expect(responses.allSatisfy { $0.status == 201 || $0.status == 409 })
            let count = try await harness.database.withConnection { connection in
                try await connection.query("SELECT count(*) AS n FROM transactions").single().decode("n", as: Int.self)
            }
            #expect(count == 1)
        }
    }

    @Test("problems name the field, the rule and the request id, and never carry SQL")
    func problemsNameTheFieldTheRuleAnd() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let missing = try await harness.request(.post, "/communities", token: cast.adminToken, json: ["description": "x"])
            #expect(missing.status == 400)
            #expect(try missing.string("field") == "name")
            #expect(missing.headers[.contentType] == "application/problem+json")
            #expect(try missing.string("request_id") == missing.headers[.init("X-Request-ID")!])

            let wrongType = try await harness.request(
                .post, "/communities/\(cast.community)/expenses", token: cast.adminToken,
                json: ["description": "x", "amount": "ten", "split": ["method": "equal"]])
            #expect(wrongType.status == 400)
            #expect(try wrongType.string("field") == "amount")

            let nested = try await harness.request(.patch, "/users/me", token: cast.adminToken, json: ["display_name": 5])
            #expect(try nested.string("field") == "display_name")

            let notJSON = try await harness.request(
                .post, "/communities", token: cast.adminToken, body: Data("{name".utf8), headers: ["Content-Type": "application/json"])
            #expect(notJSON.status == 400)
            #expect(try notJSON.string("detail") == "The body is not valid JSON.")

            let forbidden = try await harness.request(
                .put, "/communities/\(cast.community)/members/\(cast.admin)/role", token: cast.memberToken, json: ["role": "member"])
            #expect(forbidden.status == 403)
            #expect(try forbidden.string("rule").isEmpty == false)

            // The last admin cannot step down: a conflict, in the domain's words.
            let lastAdmin = try await harness.request(
                .put, "/communities/\(cast.community)/members/\(cast.admin)/role", token: cast.adminToken, json: ["role": "member"])
            #expect(lastAdmin.status == 409)
            for response in [missing, wrongType, forbidden, lastAdmin] {
                for word in ["SELECT", "INSERT", "UPDATE", "orbit_app", "SQLSTATE", "constraint"] {
                    #expect(!response.text.contains(word), "\(word) in \(response.text)")
                }
            }
        }
    }

    @Test("unknown paths are 404, known paths with another method 405 with Allow, big bodies 413")
    func unknownPathsAre404KnownPathsWith() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let unknown = try await harness.request(.get, "/nope", token: cast.adminToken)
            #expect(unknown.status == 404)
            let method = try await harness.request(.put, "/communities/\(cast.community)/balances", token: cast.adminToken)
            #expect(method.status == 405)
            #expect(method.headers[.allow] == "GET")
            let big = Data(repeating: UInt8(ascii: " "), count: (1 << 20) + 1)
            let tooLarge = try await harness.request(
                .post, "/communities", token: cast.adminToken, body: big, headers: ["Content-Type": "application/json"])
            #expect(tooLarge.status == 413)
            #expect(try tooLarge.string("type") == "https://orbitcove.app/problems/payload-too-large")
        }
    }

    @Test("writes are rate limited per user, reads are not")
    func writesAreRateLimitedPerUserReads() async throws {
        try await withAPI(configure: { $0.writeRateLimit = .init(perMinute: 2, burst: 2) }) { harness in
            let cast = try await APICast.make(harness)
            var statuses: [Int] = []
            for index in 0..<3 {
                statuses.append(try await harness.request(.post, "/users/me/family", token: cast.adminToken, json: ["name": "Kid \(index)"]).status)
            }
            #expect(statuses == [201, 201, 429])
            #expect(try await harness.request(.post, "/users/me/family", token: cast.memberToken, json: ["name": "Kid"]).status == 201)
            #expect(try await harness.request(.get, "/users/me/family", token: cast.adminToken).status == 200)
        }
    }

    @Test("healthz, readyz and metrics")
    func healthzReadyzAndMetrics() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            #expect(try await harness.request(.get, "/healthz").status == 200)
            let ready = try await harness.request(.get, "/readyz")
            #expect(ready.status == 200)
            #expect(try ready.string("migrations") == "current")
            _ = try await harness.request(.get, "/communities/\(cast.community)", token: cast.adminToken)
            _ = try await harness.request(.get, "/communities/\(cast.otherCommunity)", token: cast.adminToken)
            let metrics = try await harness.request(.get, "/metrics")
            #expect(metrics.text.contains(#"orbit_http_requests_total{route="/communities/{community_id}",method="GET",status="200"} 1"#))
            #expect(metrics.text.contains(#"orbit_http_requests_total{route="/communities/{community_id}",method="GET",status="404"} 1"#))
            #expect(metrics.text.contains("orbit_http_request_duration_seconds_bucket"))
            #expect(metrics.text.contains("orbit_pool_open_connections"))

            // Pending migrations make the server not ready.
            try await harness.database.withConnection { connection in
                try await connection.query("DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)")
            }
            let notReady = try await harness.request(.get, "/readyz")
            #expect(notReady.status == 503)
            #expect(try notReady.string("migrations") == "pending")
        }
    }

    @Test("the scheduled jobs of orbitctl serve create reminders once however often they run")
    func theScheduledJobsOfOrbitctlServeCreate() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let services = harness.services
            _ = try await services.events.create(
                in: cast.community, EventDraft(title: "Game", startsAt: Date().addingTimeInterval(3 * 3600)), as: cast.admin
            )
            let jobs = ScheduledJobs(services: services, pushes: LoggingPushSender(), logger: .init(label: "test"))
            await jobs.runJobs(round: 0)
            await jobs.runJobs(round: 1)
            let reminders = try await harness.database.withConnection { connection in
                try await connection.query("SELECT count(*) AS n FROM notifications WHERE type = 'event_reminder'").single().decode("n", as: Int.self)
            }
            #expect(reminders == 2)
            let undelivered = try await harness.database.withConnection { connection in
                try await connection.query("SELECT count(*) AS n FROM notifications WHERE delivered_at IS NULL").single().decode("n", as: Int.self)
            }
            #expect(undelivered == 0)
        }
    }
}

@Suite("Timestamps in responses")
struct TimestampFormatTests {
    @Test(
        "timestamps are RFC 3339 in UTC with milliseconds",
        arguments: [
            (0.0, "1970-01-01T00:00:00.000Z"), (0.25, "1970-01-01T00:00:00.250Z"), (951_782_400.0, "2000-02-29T00:00:00.000Z"),
            (951_868_799.5, "2000-02-29T23:59:59.500Z"), (1_709_210_096.123, "2024-02-29T12:34:56.123Z"), (-1.0, "1969-12-31T23:59:59.000Z"),
            (-86_400.5, "1969-12-30T23:59:59.500Z"), (4_102_444_799.75, "2099-12-31T23:59:59.750Z"), (253_402_300_799.0, "9999-12-31T23:59:59.000Z"),
        ])
    func timestampsAreRFC3339InUTCWith(_ seconds: Double, _ expected: String) {
        #expect(APIJSON.formatTimestamp(Date(timeIntervalSince1970: seconds)) == expected)
    }

    @Test("random dates from 1900 to 2200 read back as the same millisecond")
    func randomDatesFrom1900To2200Read() throws {
        var generator = SystemRandomNumberGenerator()
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
        for _ in 0..<10_000 {
            let milliseconds = Int64.random(in: -2_208_988_800_000...7_258_118_400_000, using: &generator)
            let text = APIJSON.formatTimestamp(Date(timeIntervalSince1970: Double(milliseconds) / 1000))
            let parsed = try style.parse(text)
            #expect((parsed.timeIntervalSince1970 * 1000).rounded() == Double(milliseconds), "\(milliseconds) → \(text)")
        }
    }
}
