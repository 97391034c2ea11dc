import Foundation
import HTTPTypes
import OrbitCore
import OrbitTestSupport
import Testing

@Suite("Search over HTTP")
struct SearchAPITests {
    @Test("GET /communities/{id}/search: ranked hits with marked snippets, paged by cursor; bad input is 400, a stranger 404")
    func searchOverHTTP() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            for index in 0..<3 {
                _ = try await harness.request(
                    .post, "/communities/\(cast.community)/posts", token: cast.adminToken,
                    json: ["content": "Tournament in Zürich, day \(index)"])
            }
            let (direct, _) = try await harness.services.chat.start(in: cast.community, kind: .direct, with: [cast.member], as: cast.admin)
            _ = try await harness.services.chat.send(to: direct.id, text: "Zurich hotel booked", as: cast.admin)

            let first = try await harness.request(.get, "/communities/\(cast.community)/search?q=zurich&limit=2", token: cast.memberToken)
            #expect(first.status == 200, "\(first.text)")
            let items = try first.items
            #expect(items.count == 2)
            let hit = try #require(items.first)
            #expect(Set(hit.keys) == ["kind", "id", "link_id", "snippet", "highlights", "rank", "created_at"])
            let snippet = try #require(hit["snippet"] as? String)
            let highlight = try #require((hit["highlights"] as? [[String: Int]])?.first)
            let start = try #require(highlight["start"]), length = try #require(highlight["length"])
            let marked = (snippet as NSString).substring(with: NSRange(location: start, length: length))
            #expect(marked.lowercased() == "zürich" || marked.lowercased() == "zurich", "\(snippet)")

            let cursor = try first.string("next_cursor")
            let second = try await harness.request(
                .get, "/communities/\(cast.community)/search?q=zurich&limit=2&cursor=\(cursor)", token: cast.memberToken)
            #expect(second.status == 200)
            let secondItems = try second.items
            let ids = items.compactMap { $0["id"] as? String } + secondItems.compactMap { $0["id"] as? String }
            #expect(Set(ids).count == 4)
            #expect(try second.json["next_cursor"] is NSNull)
            #expect((items + secondItems).contains { $0["kind"] as? String == "message" && $0["link_id"] as? String == direct.id.description })

            // The admin is in the conversation too; the outsider is not a member at all.
            let missing = try await harness.request(.get, "/communities/\(cast.community)/search", token: cast.memberToken)
            let missingField = try missing.json["field"] as? String
            #expect(missing.status == 400 && missingField == "q", "\(missing.text)")
            // A NUL (schemathesis sent one) is the field's fault, said by name: not PostgreSQL's.
            let nul = try await harness.request(.get, "/communities/\(cast.community)/search?q=%00zurich", token: cast.memberToken)
            let nulField = try nul.json["field"] as? String
            #expect(nul.status == 400 && nulField == "q", "\(nul.text)")
            let tooMany = try await harness.request(.get, "/communities/\(cast.community)/search?q=zurich&limit=51", token: cast.memberToken)
            #expect(tooMany.status == 400)
            let stranger = try await harness.request(.get, "/communities/\(cast.community)/search?q=zurich", token: cast.outsiderToken)
            #expect(stranger.status == 404)
            let anonymous = try await harness.request(.get, "/communities/\(cast.community)/search?q=zurich")
            #expect(anonymous.status == 401)
        }
    }
}
