import Foundation
import HTTPTypes
import OrbitCore
import OrbitTestSupport
import Testing

/// Ids look the same everywhere (issue 37, item 4): every id in every JSON the API answers is
/// lower case, as PostgreSQL writes them and as the CLI prints them.
@Suite("Every id the API writes is lower case")
struct LowercaseIDTests {
    /// A community with one of everything a list shows, and the id of each, by path parameter.
    static func world(_ harness: APIHarness, storage: URL) async throws -> (cast: APICast, ids: [String: String]) {
        let cast = try await APICast.make(harness)
        let services = harness.services
        let (admin, member, community) = (cast.admin, cast.member, cast.community)
        let kid = try await services.family.add(name: "Kit", as: member).id
        let event = try await services.events.create(
            in: community,
            EventDraft(
                title: "Practice", startsAt: Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 86_400).rounded(.down)),
                recurrenceRule: "FREQ=WEEKLY;COUNT=4"),
            as: admin)
        _ = try await services.events.rsvp(event.id, occurrence: event.startsAt, status: .yes, as: member)
        let post = try await services.feed.createPost(in: community, PostDraft(content: "Hello @Max"), as: admin)
        let comment = try await services.feed.addComment(to: post.id, content: "Hi", as: member)
        _ = try await services.feed.react(to: post.id, type: .like, as: member)
        let expense = try await services.expenses.addExpense(
            in: community, description: "Pizza", total: try dollars("30.00"), payers: [admin: 2000, member: 1000],
            split: .equal([.user(admin), .user(member), .familyMember(kid)]), linkedEvent: event.id, as: admin)
        _ = try await services.settlements.recordSettlement(in: community, from: member, to: admin, amount: try dollars("5.00"), as: member)
        _ = try await services.rates.setRate(in: community, from: .usd, to: try Currency.parse("EUR"), rate: try .parse("0.9"), as: admin)
        let dues = try await services.dues.create(
            in: community, name: "Season", amount: try dollars("50.00"), dueDate: try day("2030-01-31"), as: admin)
        _ = try await services.dues.recordPayment(to: dues.id, by: member, amount: try dollars("20.00"), as: admin)
        let charge = try await services.recurringCharges.createDues(
            in: community, name: "Monthly", amount: try dollars("10.00"), rule: try .parse("FREQ=MONTHLY"), startsOn: try day("2030-01-01"), as: admin
        )
        let invite = try await services.invites.create(to: community, as: admin)
        let (conversation, _) = try await services.chat.start(in: community, kind: .direct, with: [member], as: admin)
        let (message, _) = try await services.chat.send(to: conversation.id, text: "See you", as: admin)
        let chore = try await services.chores.create(.init(title: "Dishes", points: 5, assignees: [kid.uuid, member.uuid]), in: community, as: admin)
        let completion = try await services.chores.complete(chore.id, by: kid.uuid, as: .user(member))
        let reward = try await services.chores.createReward(in: community, title: "Treat", cost: 1, as: admin)
        _ = try await services.chores.adjust(in: community, for: kid.uuid, delta: 3, reason: "Start", as: admin)
        let redemption = try await services.chores.redeem(reward.id, by: kid.uuid, as: .user(member))
        try await services.family.setPIN("2580", for: kid, in: community, as: member)
        let pairing = try await services.family.startPairing(for: kid, in: community, as: member)
        try await services.devices.register(
            token: String(repeating: "ab", count: 32), environment: .production, bundleID: "app.orbitcove.ios", locale: nil, as: admin)
        var stored = services
        stored.storage = LocalDirectoryStorage(root: storage)
        let media = try await stored.media.upload(
            to: community, filename: "wide.png", mimeType: "image/png", data: MediaSamples.widePNG, as: admin)
        let split = try #require(expense.splits.first { $0.userID == member && $0.familyMemberID == nil })
        return (
            cast,
            [
                "community_id": community.description, "user_id": member.description, "member_id": member.description,
                "event_id": event.id.description,
                "post_id": post.id.description, "comment_id": comment.id.description, "expense_id": expense.id.description,
                "split_id": split.id.description, "dues_id": dues.id.description, "charge_id": charge.id.description,
                "invite_id": invite.id.description, "code": invite.code, "conversation_id": conversation.id.description,
                "message_id": message.id.description,
                "chore_id": chore.id.description, "completion_id": completion.id.description, "reward_id": reward.id.description,
                "redemption_id": redemption.id.description, "family_member_id": kid.description, "device_id": pairing.deviceID.description,
                "media_id": media.id.description, "occurrence": event.startsAt.formatted(.iso8601),
            ]
        )
    }

    /// Operations that answer something else than JSON, or need more than a token.
    static let notJSON: Set<String> = [
        "/metrics", "/openapi.yaml", "/live", "/media/{media_id}", "/media/{media_id}/thumbnail", "/calendar/{token}.ics",
    ]

    /// Query parameters an operation needs (or that show more of it).
    static let queries: [String: String] = [
        "/communities/{community_id}/events": "?from=2020-01-01T00:00:00Z&days=92",
        "/communities/{community_id}/export": "?format=json",
        "/communities/{community_id}/balances": "?view=pairs",
        "/communities/{community_id}/search": "?q=pizza%20or%20hello%20or%20practice%20or%20see",
        "/events/{event_id}/rsvps": "?occurrence={occurrence}", "/events/{event_id}/attendance": "?occurrence={occurrence}",
    ]

    @Test("every GET of the document answers JSON whose ids (values and keys) are all lower case; the CSV export's too")
    func everyListAndExport() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "orbit-ids-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withAPI(configure: { $0.publicURL = "https://orbit.example.com" }, storage: LocalDirectoryStorage(root: folder)) { harness in
            let (cast, ids) = try await Self.world(harness, storage: folder)
            let yaml = try String(contentsOfFile: OpenAPIContractTests.documentPath, encoding: .utf8)
            let gets = OpenAPIContractTests.documentedOperations(yaml).filter { $0.hasPrefix("GET ") }.map { String($0.dropFirst(4)) }
            var walked = 0
            for template in gets.sorted() where !Self.notJSON.contains(template) {
                var path = template + (Self.queries[template] ?? "")
                for (name, id) in ids { path = path.replacingOccurrences(of: "{\(name)}", with: id) }
                try #require(!path.contains("{"), "no id for a parameter of \(template): add one to the world")
                // The kid is the member's: their devices and guardians are the member's to read.
                let token =
                    template.hasSuffix("/family/{family_member_id}/devices") || template.hasSuffix("/family/{family_member_id}/guardians")
                    ? cast.memberToken : cast.adminToken
                let response = try await harness.request(.get, path, token: token)
                #expect(response.status == 200, "GET \(template): \(response.status) \(response.text.prefix(300))")
                guard response.status == 200 else { continue }
                let json = try JSONSerialization.jsonObject(with: response.body, options: .fragmentsAllowed)
                let upper = Self.upperCaseIDs(in: json)
                #expect(upper.isEmpty, "GET \(template): \(upper.prefix(5))")
                walked += 1
            }
            #expect(walked >= 45, "walked \(walked) GET operations")
            let csv = try await harness.request(.get, "/communities/\(ids["community_id"] ?? "")/export", token: cast.adminToken)
            #expect(csv.status == 200 && csv.text.contains(ids["expense_id"] ?? "-"))
            #expect(Self.upperCaseIDs(in: csv.text).isEmpty, "\(Self.upperCaseIDs(in: csv.text).prefix(5))")
        }
    }

    /// Every UUID in `text` that is not all lower case.
    static func upperCaseIDs(in text: String) -> [String] {
        let uuid = /[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}/
        return text.matches(of: uuid).map { String($0.output) }.filter { $0 != $0.lowercased() }
    }

    /// Every UUID among the strings and keys of a JSON value that is not all lower case.
    static func upperCaseIDs(in json: Any) -> [String] {
        switch json {
        case let object as [String: Any]:
            return object.flatMap { upperCaseIDs(in: $0.key) + upperCaseIDs(in: $0.value) }
        case let array as [Any]:
            return array.flatMap { upperCaseIDs(in: $0) }
        case let string as String:
            return upperCaseIDs(in: string)
        default:
            return []
        }
    }
}
