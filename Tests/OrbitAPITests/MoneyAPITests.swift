import Foundation
import OrbitAPI
import OrbitCore
import OrbitTestSupport
import Testing

@Suite("Money over HTTP: several payers, family shares")
struct MoneyAPITests {
    @Test("a dinner paid by two with a child's share: payers, 'for', balances; payers that do not add up are a 400")
    func dinnerPaidByTwo() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let tim = try await harness.services.family.add(name: "Tim", as: cast.member)
            let path = "/communities/\(cast.community)/expenses"
            let dinner = try await harness.request(
                .post, path, token: cast.adminToken,
                json: [
                    "description": "Dinner", "amount": 9000,
                    "payers": [["user_id": cast.admin.description, "amount": 5000], ["user_id": cast.member.description, "amount": 4000]],
                    "split": ["method": "equal", "user_ids": [cast.admin.description, cast.member.description, tim.id.description]],
                ])
            #expect(dinner.status == 201, "\(dinner.text)")
            #expect(try dinner.string("paid_by") == cast.admin.description)
            let payers = try #require(try dinner.json["payers"] as? [[String: Any]])
            #expect(payers.compactMap { $0["amount"] as? Int }.sorted() == [4000, 5000])
            let splits = try #require(try dinner.json["splits"] as? [[String: Any]])
            let forTim = try #require(splits.first { $0["family_member_id"] as? String == tim.id.description })
            #expect(forTim["for"] as? String == "Tim" && forTim["user_id"] as? String == cast.member.description)
            #expect(splits.allSatisfy { $0["amount"] as? Int == 3000 })

            let balances = try await harness.request(.get, "/communities/\(cast.community)/balances", token: cast.memberToken)
            let byUser = Dictionary(uniqueKeysWithValues: try balances.items.map { ($0["user_id"] as? String ?? "", $0["balance"] as? Int ?? 0) })
            #expect(byUser == [cast.admin.description: 2000, cast.member.description: -2000])

            let short = try await harness.request(
                .post, path, token: cast.adminToken,
                json: [
                    "description": "Dinner", "amount": 9000,
                    "payers": [["user_id": cast.admin.description, "amount": 5000], ["user_id": cast.member.description, "amount": 3000]],
                    "split": ["method": "equal", "user_ids": [cast.admin.description]],
                ])
            #expect(short.status == 400, "\(short.text)")
            #expect(short.text.contains("payers"))

            // A new amount alone is refused for an expense paid by two; with payers it is taken.
            let id = try dinner.string("id")
            let amountOnly = try await harness.request(.patch, "/expenses/\(id)", token: cast.adminToken, json: ["amount": 12000])
            #expect(amountOnly.status == 400, "\(amountOnly.text)")
            let changed = try await harness.request(
                .patch, "/expenses/\(id)", token: cast.adminToken,
                json: ["amount": 12000, "payers": [["user_id": cast.member.description, "amount": 12000]]])
            #expect(changed.status == 200, "\(changed.text)")
            #expect(try changed.string("paid_by") == cast.member.description)
            #expect(try (changed.json["payers"] as? [[String: Any]])?.count == 1)
        }
    }

    @Test("an itemised dinner: items with their own splits, tip in proportion, kept as entered; items that do not add up are a 400")
    func itemised() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let path = "/communities/\(cast.community)/expenses"
            func dinner(amount: Int, tip: Int, wine: [String: Any]) -> [String: Any] {
                [
                    "description": "Dinner", "amount": amount,
                    "split": [
                        "method": "items", "tip": tip,
                        "items": [
                            [
                                "description": "Pizza", "amount": 2400,
                                "split": ["method": "equal", "user_ids": [cast.admin.description, cast.member.description]],
                            ],
                            ["description": "Wine", "amount": 1800, "split": wine],
                        ],
                    ] as [String: Any],
                ]
            }
            let wine: [String: Any] = ["method": "exact", "amounts": [cast.admin.description: 1000, cast.member.description: 800]]
            let created = try await harness.request(.post, path, token: cast.memberToken, json: dinner(amount: 4830, tip: 630, wine: wine))
            #expect(created.status == 201, "\(created.text)")
            // Admin's items 22.00, member's 20.00 of 42.00: the tip 6.30 as 3.30 and 3.00.
            let splits = try #require(try created.json["splits"] as? [[String: Any]])
            let byUser = Dictionary(uniqueKeysWithValues: splits.map { ($0["user_id"] as? String ?? "", $0["amount"] as? Int ?? 0) })
            #expect(byUser == [cast.admin.description: 2530, cast.member.description: 2300])
            let entered = try #require(try created.json["split_input"] as? [String: Any])
            #expect(entered["method"] as? String == "items" && entered["tip"] as? Int == 630 && entered["tax"] as? Int == 0)
            #expect((entered["items"] as? [[String: Any]])?.map { $0["description"] as? String } == ["Pizza", "Wine"])

            let short = try await harness.request(.post, path, token: cast.memberToken, json: dinner(amount: 5000, tip: 630, wine: wine))
            #expect(short.status == 400 && short.text.contains("items"), "\(short.text)")
            let nested = try await harness.request(
                .post, path, token: cast.memberToken, json: dinner(amount: 4830, tip: 630, wine: ["method": "items", "items": []]))
            #expect(nested.status == 400, "\(nested.text)")
            let amountOnly = try await harness.request(
                .patch, "/expenses/\(try created.string("id"))", token: cast.memberToken, json: ["amount": 6000])
            #expect(amountOnly.status == 400 && amountOnly.text.contains("items again"), "\(amountOnly.text)")
        }
    }

    @Test("an event's attendance fee: per head among who said yes, plus-ones to who brought them; nobody yes is a 409")
    func attendanceFee() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let event = try await harness.services.events.create(
                in: cast.community, EventDraft(title: "Away game", startsAt: Date().addingTimeInterval(86_400)), as: cast.admin)
            let empty = try await harness.request(
                .post, "/events/\(event.id)/attendance-fee", token: cast.adminToken, json: ["amount": 9000])
            #expect(empty.status == 409, "\(empty.text)")
            _ = try await harness.services.events.rsvp(event.id, status: .yes, plusOnes: 2, as: cast.member)
            _ = try await harness.services.events.rsvp(event.id, status: .yes, as: cast.admin)
            let fee = try await harness.request(
                .post, "/events/\(event.id)/attendance-fee", token: cast.adminToken, json: ["amount": 9000, "currency": "EUR"])
            #expect(fee.status == 201, "\(fee.text)")
            #expect(try fee.string("linked_event_id") == event.id.description)
            let splits = try #require(try fee.json["splits"] as? [[String: Any]])
            let byUser = Dictionary(uniqueKeysWithValues: splits.map { ($0["user_id"] as? String ?? "", $0["amount"] as? Int ?? 0) })
            #expect(byUser == [cast.member.description: 6750, cast.admin.description: 2250])
            let outsider = try await harness.request(
                .post, "/events/\(event.id)/attendance-fee", token: cast.outsiderToken, json: ["amount": 9000])
            #expect(outsider.status == 404, "\(outsider.text)")

            // Dues per attendee: admins only, per head; the report owes who came.
            let byMember = try await harness.request(
                .post, "/events/\(event.id)/attendance-dues", token: cast.memberToken, json: ["amount": 1500])
            #expect(byMember.status == 403, "\(byMember.text)")
            let dues = try await harness.request(
                .post, "/events/\(event.id)/attendance-dues", token: cast.adminToken, json: ["amount": 1500, "name": "Away game bus"])
            #expect(dues.status == 201, "\(dues.text)")
            #expect(try dues.string("linked_event_id") == event.id.description && dues.json["amount"] as? Int == 1500)
            let report = try await harness.request(.get, "/dues/\(try dues.string("id"))/report", token: cast.memberToken)
            #expect(report.status == 200, "\(report.text)")
            let due = Dictionary(uniqueKeysWithValues: try report.items.map { ($0["user_id"] as? String ?? "", $0["amount_due"] as? Int ?? 0) })
            #expect(due == [cast.member.description: 4500, cast.admin.description: 1500])
        }
    }

    @Test("money's history over HTTP: every member reads who did what, before and after")
    func history() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let added = try await harness.request(
                .post, "/communities/\(cast.community)/expenses", token: cast.memberToken,
                json: ["description": "Balls", "amount": 3000, "split": ["method": "equal", "user_ids": [cast.admin.description]]])
            #expect(added.status == 201, "\(added.text)")
            let id = try added.string("id")
            let edited = try await harness.request(.patch, "/expenses/\(id)", token: cast.adminToken, json: ["description": "New balls"])
            #expect(edited.status == 200, "\(edited.text)")
            let history = try await harness.request(.get, "/communities/\(cast.community)/money-activity?expense_id=\(id)", token: cast.memberToken)
            #expect(history.status == 200, "\(history.text)")
            let items = try history.items
            #expect(items.map { $0["action"] as? String } == ["edited", "created"])
            #expect(items.map { $0["entity_id"] as? String } == [id, id])
            #expect(items.map { $0["actor_id"] as? String } == [cast.admin.description, cast.member.description])
            #expect((items[0]["before"] as? [String: Any])?["description"] as? String == "Balls")
            #expect((items[0]["after"] as? [String: Any])?["description"] as? String == "New balls")
            #expect(items[1]["before"] is NSNull)
            let outsider = try await harness.request(.get, "/communities/\(cast.community)/money-activity", token: cast.outsiderToken)
            #expect(outsider.status == 404)
        }
    }

    @Test("the export over HTTP: CSV with CRLF and a header by default, JSON on request, a bad format is a 400")
    func export() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let added = try await harness.request(
                .post, "/communities/\(cast.community)/expenses", token: cast.memberToken,
                json: ["description": "Balls, new", "amount": 3050, "split": ["method": "equal", "user_ids": [cast.admin.description]]])
            #expect(added.status == 201, "\(added.text)")
            let csv = try await harness.request(.get, "/communities/\(cast.community)/export", token: cast.memberToken)
            #expect(csv.status == 200)
            #expect(csv.headers[.contentType]?.hasPrefix("text/csv") == true)
            #expect(csv.text.hasPrefix("record,id,parent_id,date,"))
            #expect(csv.text.contains("\"Balls, new\",") && csv.text.contains(",30.50,USD,"))
            #expect(csv.text.components(separatedBy: "\r\n").count == 4)  // header, expense, split, and the end
            let json = try await harness.request(.get, "/communities/\(cast.community)/export?format=json", token: cast.memberToken)
            #expect(try (json.json["rows"] as? [[String: Any]])?.map { $0["record"] as? String } == ["expense", "split"])
            let bad = try await harness.request(.get, "/communities/\(cast.community)/export?format=xlsx", token: cast.memberToken)
            #expect(bad.status == 400)
            let outsider = try await harness.request(.get, "/communities/\(cast.community)/export", token: cast.outsiderToken)
            #expect(outsider.status == 404)
        }
    }

    @Test("recurring charges over HTTP: dues by admins, an expense by a member with its split as entered; pause, skip, resume, end")
    func recurringCharges() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let path = "/communities/\(cast.community)/recurring-charges"
            let refused = try await harness.request(
                .post, path, token: cast.memberToken,
                json: ["kind": "dues", "description": "Monthly", "amount": 2500, "recurrence_rule": "FREQ=MONTHLY"])
            #expect(refused.status == 403, "\(refused.text)")
            let dues = try await harness.request(
                .post, path, token: cast.adminToken,
                json: [
                    "kind": "dues", "description": "Monthly", "amount": 2500, "recurrence_rule": "FREQ=MONTHLY;BYMONTHDAY=1",
                    "starts_on": "2099-01-01",
                ])
            #expect(dues.status == 201, "\(dues.text)")
            #expect(try dues.string("next_on") == "2099-01-01")
            #expect(try dues.json["split"] is NSNull)
            let badRule = try await harness.request(
                .post, path, token: cast.adminToken, json: ["kind": "dues", "description": "x", "amount": 1, "recurrence_rule": "FREQ=HOURLY"])
            #expect(badRule.status == 400 && badRule.text.contains("recurrence_rule"), "\(badRule.text)")
            let noSplit = try await harness.request(
                .post, path, token: cast.memberToken, json: ["kind": "expense", "description": "x", "amount": 1, "recurrence_rule": "FREQ=WEEKLY"])
            #expect(noSplit.status == 400 && noSplit.text.contains("split"), "\(noSplit.text)")

            let expense = try await harness.request(
                .post, path, token: cast.memberToken,
                json: [
                    "kind": "expense", "description": "Pitch", "amount": 3000, "currency": "EUR", "recurrence_rule": "FREQ=WEEKLY",
                    "split": ["method": "shares", "shares": [cast.admin.description: 2, cast.member.description: 1]], "category": "equipment",
                ])
            #expect(expense.status == 201, "\(expense.text)")
            // Today is a day of a weekly rule starting today: the first expense exists already.
            let split = try #require(try expense.json["split"] as? [String: Any])
            #expect(split["method"] as? String == "shares")
            #expect((split["parts"] as? [[String: Any]])?.compactMap { $0["value"] as? Int }.sorted() == [1, 2])
            let id = try expense.string("id")
            let made = try await harness.request(.get, "/communities/\(cast.community)/expenses", token: cast.memberToken)
            #expect(try made.items.filter { $0["recurring_charge_id"] as? String == id }.count == 1)

            let listed = try await harness.request(.get, path, token: cast.memberToken)
            #expect(try listed.items.count == 2)
            #expect(try await harness.request(.post, "/recurring-charges/\(id)/pause", token: cast.memberToken).status == 200)
            #expect(try await harness.request(.post, "/recurring-charges/\(id)/pause", token: cast.memberToken).status == 409)
            #expect(try await harness.request(.post, "/recurring-charges/\(id)/resume", token: cast.adminToken).status == 200)
            let next = try await harness.request(.get, "/recurring-charges/\(id)", token: cast.memberToken).string("next_on")
            let skip = try await harness.request(.post, "/recurring-charges/\(id)/skip", token: cast.memberToken, json: ["date": next])
            #expect(skip.status == 200, "\(skip.text)")
            #expect((try skip.json["skipped"] as? [String]) == [next])
            let ended = try await harness.request(.post, "/recurring-charges/\(id)/end", token: cast.memberToken)
            #expect(try ended.string("status") == "ended")
            #expect(try await harness.request(.post, "/recurring-charges/\(dues.string("id"))/end", token: cast.memberToken).status == 403)
        }
    }

    @Test("corrections over HTTP: an expense's notes set and cleared (null), a settlement's day and notes; a day after today is 409")
    func notesAndDays() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let base = "/communities/\(cast.community)"
            let added = try await harness.request(
                .post, "\(base)/expenses", token: cast.memberToken,
                json: [
                    "description": "Kit", "amount": 1000, "currency": "USD", "notes": "Size M",
                    "split": ["method": "equal", "user_ids": [cast.admin.description, cast.member.description]],
                ])
            #expect(try added.status == 201 && added.string("notes") == "Size M", "\(added.text)")
            let id = try added.string("id")
            let cleared = try await harness.request(.patch, "/expenses/\(id)", token: cast.memberToken, json: ["notes": NSNull()])
            #expect(try cleared.status == 200 && cleared.json["notes"] is NSNull, "\(cleared.text)")
            let long = try await harness.request(
                .patch, "/expenses/\(id)", token: cast.memberToken, json: ["notes": String(repeating: "x", count: 2001)])
            #expect(try long.status == 400 && long.json["field"] as? String == "notes", "\(long.text)")
            let settled = try await harness.request(
                .post, "\(base)/settlements", token: cast.adminToken,
                json: [
                    "from_user_id": cast.member.description, "to_user_id": cast.admin.description, "amount": 500, "transaction_date": "2026-01-02",
                    "notes": "Paid at the game",
                ])
            #expect(
                try settled.status == 201 && settled.string("transaction_date") == "2026-01-02" && settled.string("notes") == "Paid at the game",
                "\(settled.text)")
            let future = try await harness.request(
                .post, "\(base)/settlements", token: cast.adminToken,
                json: [
                    "from_user_id": cast.member.description, "to_user_id": cast.admin.description, "amount": 500, "transaction_date": "2099-01-01",
                ])
            #expect(try future.status == 409 && future.json["field"] as? String == "transaction_date", "\(future.text)")
        }
    }

    @Test("who owes whom over HTTP: balances?view=pairs, balances/with/{member} with its entries, settle-up?simplify, minimizeDebts")
    func pairs() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let third = try await harness.services.users.create(email: "third@example.com", displayName: "Third").id
            _ = try await harness.services.members.add(third, to: cast.community, as: cast.admin)
            let everyone = [cast.admin, cast.member, third].map(\.description)
            for (token, amount) in [(cast.adminToken, 3000), (cast.memberToken, 1200)] {
                let added = try await harness.request(
                    .post, "/communities/\(cast.community)/expenses", token: token,
                    json: ["description": "Share", "amount": amount, "currency": "USD", "split": ["method": "equal", "user_ids": everyone]])
                #expect(added.status == 201, "\(added.text)")
            }
            let base = "/communities/\(cast.community)"
            let pairs = try await harness.request(.get, "\(base)/balances?view=pairs", token: cast.memberToken)
            #expect(pairs.status == 200, "\(pairs.text)")
            #expect(
                try pairs.items.map { [$0["from_user_id"] as? String, $0["to_user_id"] as? String, ($0["amount"] as? Int).map(String.init)] }
                    == [
                        [third.description, cast.admin.description, "1000"], [cast.member.description, cast.admin.description, "600"],
                        [third.description, cast.member.description, "400"],
                    ], "\(pairs.text)")
            let members = try await harness.request(.get, "\(base)/balances?view=members", token: cast.memberToken)
            #expect(try members.items.count == 3, "\(members.text)")
            let badView = try await harness.request(.get, "\(base)/balances?view=graph", token: cast.memberToken)
            #expect(try badView.status == 400 && ((try badView.json)["field"] as? String) == "view", "\(badView.text)")

            let with = try await harness.request(.get, "\(base)/balances/with/\(cast.member)?limit=1", token: cast.adminToken)
            #expect(with.status == 200, "\(with.text)")
            #expect(try ((try with.json)["member_id"] as? String) == cast.member.description)
            let figures = (try with.json)["balances"] as? [[String: Any]] ?? []
            #expect(figures.count == 1 && figures.first?["balance"] as? Int == 600 && figures.first?["currency"] as? String == "USD")
            let entries = (try with.json)["entries"] as? [[String: Any]] ?? []
            #expect(entries.count == 1 && entries.first?["amount"] as? Int == -400 && entries.first?["type"] as? String == "expense", "\(with.text)")
            let cursor = try #require((try with.json)["next_cursor"] as? String)
            let rest = try await harness.request(
                .get, "\(base)/balances/with/\(cast.member)?limit=1&cursor=\(cursor)", token: cast.adminToken)
            #expect(
                try ((try rest.json)["entries"] as? [[String: Any]])?.first?["amount"] as? Int == 1000 && (try rest.json)["next_cursor"] is NSNull,
                "\(rest.text)")
            let yourself = try await harness.request(.get, "\(base)/balances/with/\(cast.admin)", token: cast.adminToken)
            #expect(try yourself.status == 200 && (yourself.json["balances"] as? [Any])?.isEmpty == true, "\(yourself.text)")
            let stranger = try await harness.request(.get, "\(base)/balances/with/\(cast.outsider)", token: cast.adminToken)
            #expect(stranger.status == 404, "\(stranger.text)")
            let outsider = try await harness.request(.get, "\(base)/balances/with/\(cast.admin)", token: cast.outsiderToken)
            #expect(outsider.status == 404, "\(outsider.text)")

            let simplified = try await harness.request(.get, "\(base)/settle-up", token: cast.memberToken)
            #expect(try simplified.items.map { $0["amount"] as? Int } == [1400, 200], "\(simplified.text)")
            let pairwise = try await harness.request(.get, "\(base)/settle-up?simplify=false", token: cast.memberToken)
            #expect(try pairwise.items.map { $0["amount"] as? Int } == [1000, 600, 400], "\(pairwise.text)")
            let badFlag = try await harness.request(.get, "\(base)/settle-up?simplify=maybe", token: cast.memberToken)
            #expect(badFlag.status == 400, "\(badFlag.text)")
            let off = try await harness.request(.patch, base, token: cast.adminToken, json: ["settings": ["minimizeDebts": false]])
            #expect(off.status == 200, "\(off.text)")
            let byDefault = try await harness.request(.get, "\(base)/settle-up", token: cast.memberToken)
            #expect(try byDefault.items.map { $0["amount"] as? Int } == [1000, 600, 400], "\(byDefault.text)")
            let notBool = try await harness.request(.patch, base, token: cast.adminToken, json: ["settings": ["minimizeDebts": "no"]])
            #expect(notBool.status == 400, "\(notBool.text)")

            // Undo over HTTP: a deleted expense comes back, with its balances.
            let expenses = try await harness.request(.get, "\(base)/expenses", token: cast.adminToken)
            let id = try #require(try expenses.items.first?["id"] as? String)
            #expect(try await harness.request(.delete, "/expenses/\(id)", token: cast.adminToken).status == 204)
            let restored = try await harness.request(.post, "/expenses/\(id)/restore", token: cast.adminToken)
            #expect(try restored.status == 200 && restored.string("id") == id, "\(restored.text)")
            let again = try await harness.request(.post, "/expenses/\(id)/restore", token: cast.adminToken)
            #expect(again.status == 409, "\(again.text)")
            #expect(try await harness.request(.post, "/expenses/\(id)/restore", token: cast.outsiderToken).status == 404)
            let after = try await harness.request(.get, "\(base)/settle-up?simplify=false", token: cast.memberToken)
            #expect(try after.items.map { $0["amount"] as? Int } == [1000, 600, 400], "\(after.text)")
        }
    }

    @Test(
        "currencies over HTTP: admins set rates, a settlement in euros settles dollars at the recorded rate, settle-up in one currency, the base currency"
    )
    func currencies() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let rates = "/communities/\(cast.community)/exchange-rates"
            let refused = try await harness.request(.post, rates, token: cast.memberToken, json: ["base": "EUR", "quote": "USD", "rate": "1.1"])
            #expect(refused.status == 403, "\(refused.text)")
            let set = try await harness.request(.post, rates, token: cast.adminToken, json: ["base": "EUR", "quote": "USD", "rate": "1.1"])
            #expect(set.status == 201, "\(set.text)")
            #expect(try set.string("rate") == "1.1" && set.string("source") == "admin")
            let bad = try await harness.request(.post, rates, token: cast.adminToken, json: ["base": "EUR", "quote": "USD", "rate": "-2"])
            #expect(bad.status == 400 && bad.text.contains("rate"), "\(bad.text)")
            #expect(try await harness.request(.get, rates, token: cast.memberToken).items.count == 1)

            _ = try await harness.request(
                .post, "/communities/\(cast.community)/expenses", token: cast.adminToken,
                json: ["description": "Kit", "amount": 4400, "split": ["method": "equal", "user_ids": [cast.member.description]]])
            let settlement = try await harness.request(
                .post, "/communities/\(cast.community)/settlements", token: cast.memberToken,
                json: [
                    "from_user_id": cast.member.description, "to_user_id": cast.admin.description, "amount": 2000, "currency": "EUR",
                    "settles_currency": "USD",
                ])
            #expect(settlement.status == 201, "\(settlement.text)")
            #expect(try settlement.string("currency") == "USD" && settlement.json["total_amount"] as? Int == 2200)
            let conversion = try #require(try settlement.json["conversion"] as? [String: Any])
            #expect(
                conversion["paid_amount"] as? Int == 2000 && conversion["paid_currency"] as? String == "EUR" && conversion["rate"] as? String == "1.1"
            )
            // 22.00 USD still owed, proposed in euros: 20.00.
            let inEuros = try await harness.request(.get, "/communities/\(cast.community)/settle-up?in=EUR", token: cast.memberToken)
            #expect(try inEuros.items.map { $0["amount"] as? Int } == [2000], "\(inEuros.text)")
            #expect(try inEuros.items.first?["currency"] as? String == "EUR")
            let noRate = try await harness.request(.get, "/communities/\(cast.community)/settle-up?in=GBP", token: cast.memberToken)
            #expect(noRate.status == 409, "\(noRate.text)")

            // A base currency: money entered without a currency is in it.
            _ = try await harness.services.communities.update(cast.community, settings: CommunitySettings(baseCurrency: "EUR"), as: cast.admin)
            let inBase = try await harness.request(
                .post, "/communities/\(cast.community)/expenses", token: cast.adminToken,
                json: ["description": "Cake", "amount": 1000, "split": ["method": "equal", "user_ids": [cast.member.description]]])
            #expect(try inBase.string("currency") == "EUR", "\(inBase.text)")
            await #expect(throws: ServiceError.self) {
                try await harness.services.communities.update(cast.community, settings: CommunitySettings(baseCurrency: "eur"), as: cast.admin)
            }
        }
    }
    @Test("an income (type income): the receiver owes each share; a type that is neither is a 400 naming it")
    func income() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let body: [String: Any] = [
                "type": "income", "description": "Sold the old goal", "amount": 5000, "paid_by": cast.member.description,
                "split": ["method": "equal", "user_ids": [cast.admin.description, cast.member.description]],
            ]
            let sold = try await harness.request(.post, "/communities/\(cast.community)/expenses", token: cast.adminToken, json: body)
            #expect(try sold.status == 201 && sold.string("type") == "income", "\(sold.text)")
            let pairs = try await harness.request(.get, "/communities/\(cast.community)/balances?view=pairs", token: cast.adminToken)
            #expect(
                try pairs.items.map { [$0["from_user_id"] as? String, $0["to_user_id"] as? String] } == [
                    [cast.member.description, cast.admin.description]
                ])
            var wrong = body
            wrong["type"] = "refund"
            let refused = try await harness.request(.post, "/communities/\(cast.community)/expenses", token: cast.adminToken, json: wrong)
            #expect(try refused.status == 400 && refused.json["field"] as? String == "type", "\(refused.text)")
        }
    }
    @Test("an expense without a split takes the community's default split; PATCH …/members/{user} leaves a member out of new splits")
    func defaultSplit() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let path = "/communities/\(cast.community)/expenses"
            let both = try await harness.request(.post, path, token: cast.memberToken, json: ["description": "Balls", "amount": 3000])
            #expect(try both.status == 201 && both.json["splits"].map { ($0 as? [Any])?.count } == 2, "\(both.text)")
            // Corrections: another currency comes with the amount in it; a day; no linked event.
            let bothID = try both.string("id")
            let noAmount = try await harness.request(.patch, "/expenses/\(bothID)", token: cast.memberToken, json: ["currency": "EUR"])
            #expect(noAmount.status == 409, "\(noAmount.text)")
            let euros = try await harness.request(
                .patch, "/expenses/\(bothID)", token: cast.memberToken,
                json: ["amount": 2000, "currency": "EUR", "transaction_date": "2026-01-05", "linked_event_id": NSNull()])
            #expect(try euros.status == 200 && euros.string("currency") == "EUR" && euros.string("transaction_date") == "2026-01-05", "\(euros.text)")
            let away = try await harness.request(
                .patch, "/communities/\(cast.community)/members/\(cast.member)", token: cast.adminToken, json: ["active": false])
            #expect(try away.status == 200 && away.json["active"] as? Bool == false && away.json["default_weight"] as? Int == 1, "\(away.text)")
            // An event that is not this community's is not found (schemathesis: a made-up id was a 400).
            let unknown = try await harness.request(
                .post, path, token: cast.memberToken, json: ["description": "Cones", "amount": 100, "linked_event_id": UUID().uuidString])
            #expect(unknown.status == 404, "\(unknown.text)")
            let mine = try await harness.request(
                .patch, "/communities/\(cast.community)/members/me", token: cast.memberToken, json: ["nickname": "Maxi"])
            #expect(mine.status == 200, "\(mine.text)")
            let alone = try await harness.request(.post, path, token: cast.memberToken, json: ["description": "Cones", "amount": 1000])
            let splits = try #require(try alone.json["splits"] as? [[String: Any]])
            #expect(splits.map { $0["user_id"] as? String } == [cast.admin.description], "\(alone.text)")
            let forbidden = try await harness.request(
                .patch, "/communities/\(cast.community)/members/\(cast.admin)", token: cast.memberToken, json: ["default_weight": 2])
            #expect(forbidden.status == 403, "\(forbidden.text)")
            let bad = try await harness.request(
                .patch, "/communities/\(cast.community)/members/\(cast.member)", token: cast.memberToken, json: ["default_weight": 0])
            #expect(try bad.status == 400 && bad.json["field"] as? String == "default_weight", "\(bad.text)")
        }
    }
}
