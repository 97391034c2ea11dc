import Foundation
import OrbitAPI
import OrbitCore
import OrbitTestSupport
import Testing

/// The edges schemathesis found where the server and openapi.yaml disagreed: each request here
/// is valid by the document and accepted, or invalid by it and refused.
@Suite("The server accepts what openapi.yaml allows and refuses what it does not")
struct ContractEdgeTests {
    @Test("null is refused where a field is not nullable, clears where it is, and is ignored under unknown keys")
    func nullIsAValue() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let avatar = try await harness.request(.patch, "/users/me", token: cast.memberToken, json: ["avatar_url": NSNull()])
            #expect(avatar.status == 400)
            #expect(try avatar.json["field"] as? String == "avatar_url")

            let zone = try await harness.request(
                .patch, "/communities/\(cast.community)", token: cast.adminToken, json: ["settings": ["timezone": NSNull()]])
            #expect(zone.status == 400)
            #expect(try zone.json["field"] as? String == "settings.timezone")

            let me = "/communities/\(cast.community)/members/me"
            #expect(try await harness.request(.patch, me, token: cast.memberToken, json: ["nickname": "Maxi"]).json["nickname"] as? String == "Maxi")
            let cleared = try await harness.request(.patch, me, token: cast.memberToken, json: ["nickname": NSNull()])
            #expect(cleared.status == 200)
            #expect(try cleared.json["nickname"] is NSNull)

            let unknown = try await harness.request(.patch, "/users/me", token: cast.memberToken, json: ["display_name": "Max", "x_later": NSNull()])
            #expect(unknown.status == 200)

            // "My groups": a pin and its position; `null` clears the position.
            let pinned = try await harness.request(.patch, me, token: cast.memberToken, json: ["pinned": true, "position": 3])
            #expect(try pinned.status == 200 && pinned.json["pinned"] as? Bool == true && pinned.json["position"] as? Int == 3, "\(pinned.text)")
            let groups = try await harness.request(.get, "/communities", token: cast.memberToken)
            let mine = try groups.items.first { $0["id"] as? String == cast.community.description }?["my"] as? [String: Any]
            #expect(mine?["pinned"] as? Bool == true && mine?["position"] as? Int == 3 && mine?["role"] as? String == "member", "\(groups.text)")
            #expect(mine?["balances"] is [Any] && mine?["last_activity_at"] is String, "\(groups.text)")
            let unplaced = try await harness.request(.patch, me, token: cast.memberToken, json: ["position": NSNull()])
            #expect(try unplaced.json["position"] is NSNull && unplaced.json["pinned"] as? Bool == true, "\(unplaced.text)")
            let tooFar = try await harness.request(.patch, me, token: cast.memberToken, json: ["position": 10_000])
            #expect(try tooFar.status == 400 && tooFar.json["field"] as? String == "position", "\(tooFar.text)")
            let notABool = try await harness.request(.patch, me, token: cast.memberToken, json: ["pinned": NSNull()])
            #expect(notABool.status == 400, "\(notABool.text)")
        }
    }

    @Test("timestamps: any RFC 3339 date-time (offsets to ±23:59, any fraction), nothing else")
    func timestampsAreRFC3339() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let events = "/communities/\(cast.community)/events"
            for valid in ["2026-03-01T00:00:00Z", "2026-03-01t00:00:00.123456789z", "0170-03-14T01:15:32.347-20:17", "2433-04-21T16:03:37+23:04"] {
                let encoded = try #require(valid.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
                let response = try await harness.request(.get, "\(events)?from=\(encoded)&days=92", token: cast.memberToken)
                #expect(response.status == 200, "\(valid): \(response.text)")
            }
            for invalid in [
                "2026-02-30T00:00:00Z", "2026-03-01 00:00:00Z", "2026-03-01T24:00:00Z", "2026-03-01T00:00:00+24:00", "2026-03-01T00:00:00",
            ] {
                let encoded = try #require(invalid.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
                #expect(try await harness.request(.get, "\(events)?from=\(encoded)", token: cast.memberToken).status == 400, "\(invalid)")
            }
            // The same instant however it is written.
            #expect(APIJSON.parseTimestamp("2026-03-01T05:45:00.5+05:45") == APIJSON.parseTimestamp("2026-03-01T00:00:00.500Z"))
        }
    }

    @Test("the calendar window is from + days (1 to 92), so every valid request is a valid window")
    func calendarWindowIsDays() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let events = "/communities/\(cast.community)/events?from=2026-03-01T00:00:00Z"
            #expect(try await harness.request(.get, events, token: cast.memberToken).status == 200)
            #expect(try await harness.request(.get, "\(events)&days=92", token: cast.memberToken).status == 200)
            #expect(try await harness.request(.get, "\(events)&days=93", token: cast.memberToken).status == 400)
            #expect(try await harness.request(.get, "\(events)&days=0", token: cast.memberToken).status == 400)
        }
    }

    @Test("currencies and time zones: the document's enums, exactly")
    func enumsAreExact() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let dues = "/communities/\(cast.community)/dues"
            let lower = try await harness.request(
                .post, dues, token: cast.adminToken, json: ["name": "Fee", "amount": 500, "currency": "eur", "due_date": "2026-12-01"])
            #expect(lower.status == 400)
            let upper = try await harness.request(
                .post, dues, token: cast.adminToken, json: ["name": "Fee", "amount": 500, "currency": "EUR", "due_date": "2026-12-01"])
            #expect(upper.status == 201, "\(upper.text)")

            let community = "/communities/\(cast.community)"
            // tzdata's links (US/Eastern, Asia/Calcutta) are places and are taken; abbreviations are not.
            for alias in ["EST", "GMT", "Etc/GMT+5", "Mars/Olympus_Mons"] {
                let refused = try await harness.request(.patch, community, token: cast.adminToken, json: ["settings": ["timezone": alias]])
                #expect(refused.status == 400, "\(alias)")
            }
            let named = try await harness.request(.patch, community, token: cast.adminToken, json: ["settings": ["timezone": "America/Indiana/Knox"]])
            #expect(named.status == 200)
        }
    }

    @Test("URLs and emails: the document's patterns, exactly")
    func patternsAreExact() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            for (url, status) in [
                ("https://cdn.example.com/a/b.png?x=1#f", 200), ("http://localhost:8080", 200), ("https://example.com*/a", 400),
                (" https://example.com", 400), ("https://exa mple.com", 400), ("ftp://example.com", 400), ("https://example.com:123456", 400),
            ] {
                let response = try await harness.request(.patch, "/users/me", token: cast.memberToken, json: ["avatar_url": url])
                #expect(response.status == status, "\(url): \(response.text)")
            }
            // A control character at an edge is refused like one inside (trimming does not hide it).
            for (name, status) in [("  Max  ", 200), ("\rMax", 400), ("Max\n", 400), ("Max\u{85}", 400)] {
                let response = try await harness.request(.patch, "/users/me", token: cast.memberToken, json: ["display_name": name])
                #expect(response.status == status, "\(name.debugDescription): \(response.text)")
            }
            for (email, status) in [("max+team@mail.example.org", 200), ("max@example.com*", 400), ("max@localhost", 400), (" max@example.com", 400)]
            {
                let response = try await harness.request(.patch, "/users/me", token: cast.memberToken, json: ["email": email])
                #expect(response.status == status, "\(email): \(response.text)")
            }
        }
    }

    @Test("Idempotency-Key: 1 to 255 visible ASCII characters, as documented")
    func idempotencyKeyShape() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            for bad in ["caf\u{e9}", "has space", String(repeating: "k", count: 256)] {
                let response = try await harness.request(
                    .post, "/users/me/family", token: cast.memberToken, json: ["name": "Mia"], headers: ["Idempotency-Key": bad])
                #expect(response.status == 400, "\(bad)")
                #expect(try response.json["field"] as? String == "Idempotency-Key")
            }
        }
    }

    @Test("a request the state refuses is 409 naming the field, not 400")
    func stateRefusalsAreConflicts() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let post = try await harness.request(.post, "/communities/\(cast.community)/posts", token: cast.memberToken, json: ["content": "Hi"])
            let vote = try await harness.request(.post, "/posts/\(try post.string("id"))/votes", token: cast.memberToken, json: ["option": 0])
            #expect(vote.status == 409)
            #expect(try vote.json["field"] as? String == "post")

            let invite = try await harness.request(
                .post, "/communities/\(cast.community)/invites", token: cast.adminToken, json: ["expires_at": "2001-01-01T00:00:00Z"])
            #expect(invite.status == 409)
            #expect(try invite.json["field"] as? String == "expires_at")

            // Found by schemathesis (issue 37, item 9): a payer who is no member, a day the series does not give.
            let stranger = UUID().uuidString
            let expense = try await harness.request(
                .post, "/communities/\(cast.community)/expenses", token: cast.adminToken,
                json: [
                    "description": "Pizza", "amount": 100, "paid_by": stranger, "split": ["method": "equal", "user_ids": [cast.admin.description]],
                ])
            #expect(try expense.status == 409 && expense.json["field"] is String, "\(expense.text)")
            let recurring = try await harness.request(
                .post, "/communities/\(cast.community)/recurring-charges", token: cast.adminToken,
                json: [
                    "kind": "expense", "description": "Rent", "amount": 100, "recurrence_rule": "FREQ=DAILY", "paid_by": stranger,
                    "split": ["method": "equal", "user_ids": [cast.admin.description]],
                ])
            #expect(try recurring.status == 409 && (recurring.json["field"] as? String) == "paid_by", "\(recurring.text)")
            let monthly = try await harness.request(
                .post, "/communities/\(cast.community)/recurring-charges", token: cast.adminToken,
                json: [
                    "kind": "dues", "description": "Monthly", "amount": 100, "recurrence_rule": "FREQ=MONTHLY;BYMONTHDAY=1",
                    "starts_on": "2030-01-01",
                ])
            let skip = try await harness.request(
                .post, "/recurring-charges/\(try monthly.string("id"))/skip", token: cast.adminToken, json: ["date": "2030-02-02"])
            #expect(try skip.status == 409 && (skip.json["field"] as? String) == "date", "\(skip.text)")
        }
    }

    @Test("an event's description and address: empty or any text without control characters; a NUL is 400 naming the field, never a 500")
    func eventFreeText() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let event = try await harness.request(
                .post, "/communities/\(cast.community)/events", token: cast.adminToken,
                json: ["title": "Game", "starts_at": "2030-01-05T10:00:00Z", "description": "", "location_address": "1 Field Rd\r\nTown"])
            #expect(event.status == 201, "\(event.text)")
            let path = "/events/\(try event.string("id"))"
            for field in ["description", "location_address"] {
                for text in ["a\u{0}b", "bell\u{7}"] {
                    let refused = try await harness.request(.patch, path, token: cast.adminToken, json: [field: text])
                    #expect(try refused.status == 400 && refused.string("field") == field, "\(field): \(refused.text)")
                }
            }
            let long = try await harness.request(.patch, path, token: cast.adminToken, json: ["location_address": String(repeating: "x", count: 501)])
            #expect(long.status == 400)
        }
    }

    @Test("every path parameter counts: an invite is revoked only through its own community's path")
    func pathParametersCount() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let invite = try await harness.request(.post, "/communities/\(cast.community)/invites", token: cast.adminToken, json: [:])
            let id = try invite.string("id")
            #expect(try await harness.request(.delete, "/communities/not-a-uuid/invites/\(id)", token: cast.adminToken).status == 400)
            #expect(try await harness.request(.delete, "/communities/\(cast.otherCommunity)/invites/\(id)", token: cast.adminToken).status == 404)
            #expect(try await harness.request(.delete, "/communities/\(cast.community)/invites/\(id)", token: cast.adminToken).status == 204)
        }
    }

    @Test("a literal path segment wins over a parameter: /members/me allows GET and PATCH only")
    func allowHeaderOfOverlappingRoutes() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let options = try await harness.request(.options, "/communities/\(cast.community)/members/me", token: cast.memberToken)
            #expect(options.status == 405)
            #expect(options.headers[.allow] == "GET, PATCH")
        }
    }

    @Test("a refresh token no server could have made is unknown: 401 to refresh, nothing to revoke on logout")
    func malformedRefreshTokens() async throws {
        try await withAPI { harness in
            for token in ["nul\u{0}byte", "caf\u{e9}", String(repeating: "a", count: 101)] {
                let refreshed = try await harness.request(.post, "/auth/refresh", json: ["refresh_token": token])
                #expect(refreshed.status == 401)
                let loggedOut = try await harness.request(.post, "/auth/logout", json: ["refresh_token": token])
                #expect(loggedOut.status == 204)
            }
        }
    }
}
