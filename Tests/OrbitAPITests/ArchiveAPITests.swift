import Foundation
import HTTPTypes
import OrbitCore
import OrbitTestSupport
import Testing

@Suite("Archived communities over HTTP")
struct ArchiveAPITests {
    @Test("an admin archives: GET /communities leaves it out but with archived=true, a write is 409, reads work; unarchive undoes it")
    func archiveOverHTTP() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let base = "/communities/\(cast.community)"
            #expect(try await harness.request(.post, "\(base)/archive", token: cast.memberToken).status == 403)
            #expect(try await harness.request(.post, "\(base)/archive", token: cast.outsiderToken).status == 404)
            let archived = try await harness.request(.post, "\(base)/archive", token: cast.adminToken)
            #expect(try archived.status == 200 && archived.json["archived_at"] is String, "\(archived.text)")

            #expect(try await harness.request(.get, "/communities", token: cast.memberToken).items.isEmpty)
            let all = try await harness.request(.get, "/communities?archived=true", token: cast.memberToken)
            #expect(try all.items.map { $0["id"] as? String } == [cast.community.description], "\(all.text)")
            let post = try await harness.request(.post, "\(base)/posts", token: cast.memberToken, json: ["content": "Anyone?"])
            #expect(try post.status == 409 && (post.json["detail"] as? String ?? "").contains("archived"), "\(post.text)")
            #expect(try await harness.request(.get, "\(base)/balances", token: cast.memberToken).status == 200)

            let back = try await harness.request(.post, "\(base)/unarchive", token: cast.adminToken)
            #expect(try back.status == 200 && back.json["archived_at"] is NSNull, "\(back.text)")
            #expect(try await harness.request(.post, "\(base)/posts", token: cast.memberToken, json: ["content": "Spring!"]).status == 201)
        }
    }
}
