import Foundation
import HTTPTypes
import OrbitCore
import OrbitScaleData
import OrbitTestSupport
import Testing

/// Money never overflows into a 500 (issue 37, item 10): amounts and rates at and past their
/// stated bounds, through every money operation of the API, are answered 2xx, or refused with a
/// 4xx that names the field — never a 5xx, never a database error.
@Suite("Money at and past its bounds")
struct MoneyBoundsTests {
    /// Minor units around the bounds: zero, one, the largest amount (2³¹ − 1) and past it, and
    /// what no column holds.
    static let amounts: [Int64] = [
        -1, 0, 1, 2, 99, 1_000_000, 1_073_741_824, 2_147_483_646, 2_147_483_647, 2_147_483_648, 4_294_967_296, 1 << 53, .max, .min,
    ]
    /// Rates around their bounds (at most 14 digits before the point and 10 after), and past them.
    static let rates = [
        "0", "0.0000000001", "0.00000000001", "0.5", "1", "3.1234567891", "161.2", "66560293420104", "99999999999999.9999999999",
        "100000000000000", "1e5", "-1", "", "١", "0.0",
    ]
    static let currencies = ["USD", "JPY", "BHD", "IQD", "NPR", "CLF", "EUR"]

    @Test("random money operations with amounts and rates at and past the bounds: no 5xx, every 400 names its field, balances add up to zero")
    func boundsThroughEveryOperation() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let (admin, member, community) = (cast.admin.description, cast.member.description, cast.community.description)
            let kid = try await harness.services.family.add(name: "Kit", as: cast.member).id.description
            let event = try await harness.request(
                .post, "/communities/\(community)/events", token: cast.adminToken,
                json: ["title": "Game", "starts_at": "2030-01-05T10:00:00Z"])
            let eventID = try event.string("id")
            _ = try await harness.request(.put, "/events/\(eventID)/rsvp", token: cast.memberToken, json: ["status": "yes", "plus_ones": 2])
            var random = SplitMix64(seed: 37_10)
            func amount() -> Int64 { Self.amounts[Int(random.next() % UInt64(Self.amounts.count))] }
            func rate() -> String { Self.rates[Int(random.next() % UInt64(Self.rates.count))] }
            func currency() -> String { Self.currencies[Int(random.next() % UInt64(Self.currencies.count))] }
            func split(total: Int64) -> [String: Any] {
                switch random.next() % 5 {
                case 0: return ["method": "equal", "user_ids": [admin, member]]
                case 1: return ["method": "exact", "amounts": [admin: amount(), member: total &- amount()]]
                case 2: return ["method": "percent", "basis_points": [admin: amount(), member: 10_000 &- amount()]]
                case 3: return ["method": "shares", "shares": [admin: amount(), kid: amount()]]
                default:
                    return [
                        "method": "items", "tax": amount(), "tip": amount(),
                        "items": [
                            ["description": "A", "amount": amount(), "split": ["method": "equal", "user_ids": [admin]]],
                            ["description": "B", "amount": amount(), "split": ["method": "shares", "shares": [member: amount(), kid: 1]]],
                        ],
                    ]
                }
            }
            var expenses: [String] = []
            var dues: [String] = []
            var statuses: [Int: Int] = [:]
            for round in 0..<400 {
                let (method, path, body): (HTTPRequest.Method, String, [String: Any])
                let total = amount()
                switch round % 10 {
                case 0, 1:
                    var expense: [String: Any] = ["description": "Thing", "amount": total, "currency": currency(), "split": split(total: total)]
                    if random.next() % 2 == 0 {
                        expense["payers"] = [["user_id": admin, "amount": amount()], ["user_id": member, "amount": amount()]]
                    }
                    (method, path, body) = (.post, "/communities/\(community)/expenses", expense)
                case 2:
                    guard let id = expenses.randomElement(using: &random) else { continue }
                    var change: [String: Any] = ["amount": total]
                    if random.next() % 2 == 0 { change["split"] = split(total: total) }
                    if random.next() % 3 == 0 {
                        change["payers"] = [["user_id": admin, "amount": amount()], ["user_id": member, "amount": amount()]]
                    }
                    (method, path, body) = (.patch, "/expenses/\(id)", change)
                case 3, 4:
                    var settlement: [String: Any] = ["from_user_id": member, "to_user_id": admin, "amount": total, "currency": currency()]
                    if random.next() % 4 != 0 {
                        settlement["settles_currency"] = currency()
                        settlement["rate"] = rate()
                    }
                    (method, path, body) = (.post, "/communities/\(community)/settlements", settlement)
                case 5:
                    (method, path, body) = (
                        .post, "/communities/\(community)/exchange-rates", ["base": currency(), "quote": currency(), "rate": rate()]
                    )
                case 6:
                    (method, path, body) = (
                        .post, "/communities/\(community)/dues",
                        ["name": "Season", "amount": total, "currency": currency(), "due_date": "2030-01-31"]
                    )
                case 7:
                    guard let id = dues.randomElement(using: &random) else { continue }
                    (method, path, body) =
                        random.next() % 2 == 0
                        ? (.post, "/dues/\(id)/payments", ["user_id": member, "amount": total])
                        : (.patch, "/dues/\(id)", ["amount": total])
                case 8:
                    var charge: [String: Any] = [
                        "kind": "expense", "description": "Rent", "amount": total, "currency": currency(), "recurrence_rule": "FREQ=MONTHLY",
                        "split": split(total: total),
                    ]
                    if random.next() % 2 == 0 {
                        charge["kind"] = "dues"
                        charge["split"] = nil
                    }
                    (method, path, body) = (.post, "/communities/\(community)/recurring-charges", charge)
                default:
                    (method, path, body) =
                        random.next() % 2 == 0
                        ? (.post, "/events/\(eventID)/attendance-fee", ["amount": total, "currency": currency()])
                        : (.post, "/events/\(eventID)/attendance-dues", ["amount": total, "currency": currency(), "due_date": "2030-02-01"])
                }
                let response = try await harness.request(method, path, token: cast.adminToken, json: body)
                statuses[response.status, default: 0] += 1
                #expect(response.status < 500, "round \(round): \(method) \(path) \(body) → \(response.status) \(response.text)")
                #expect(!response.text.contains("PostgresError"), "round \(round): \(response.text)")
                let answer = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
                if response.status == 400 {
                    #expect(answer?["field"] is String, "round \(round): a 400 names its field: \(response.text)")
                }
                if response.status == 201, let id = answer?["id"] as? String {
                    if path.hasSuffix("/expenses") { expenses.append(id) }
                    if path.hasSuffix("/dues") { dues.append(id) }
                }
            }
            // Every kind of answer was seen, successes too.
            #expect(statuses[201] ?? 0 > 40 && statuses[400] ?? 0 > 40, "\(statuses)")
            let balances = try await harness.request(.get, "/communities/\(community)/balances", token: cast.adminToken)
            var sums: [String: Int64] = [:]
            for line in try balances.items {
                sums[line["currency"] as? String ?? "", default: 0] += (line["balance"] as? NSNumber)?.int64Value ?? 0
            }
            #expect(sums.values.allSatisfy { $0 == 0 }, "\(sums)")
        }
    }

    @Test("a cursor written by hand with numbers past their range is refused (400 cursor), never a crash")
    func forgedCursors() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let id = UUID().uuidString
            for (list, keys) in [
                (
                    "dues",
                    [["99999999999", "1", id], ["-99999999999999999999", "1", id], ["1", "9223372036854775807", id], ["2147483648", "0", id]]
                ),
                ("expenses", [["9223372036854775807", id], ["-9223372036854775808", id]]),
                ("recurring-charges", [["9223372036854775807", id]]), ("money-activity", [["9223372036854775807", id]]),
                ("media", [["9223372036854775807", id]]), ("audit-log", [["9223372036854775807", id]]), ("invites", [["9223372036854775807", id]]),
            ] {
                for key in keys {
                    // The cursors' format, with its (public) checksum: anyone can write one.
                    let cursor = PageCursor(list: list, key: key).encoded
                    let response = try await harness.request(.get, "/communities/\(cast.community)/\(list)?cursor=\(cursor)", token: cast.adminToken)
                    #expect(response.status == 400 && response.text.contains("cursor"), "\(list) \(key): \(response.status) \(response.text)")
                }
            }
        }
    }
}
