import Foundation
import HTTPTypes
import OrbitCore
import OrbitTestSupport
import Testing

@Suite("Nudges over HTTP")
struct NudgeAPITests {
    @Test("POST …/nudges is 201, then 429 with Retry-After for the same pair; owing nothing is 409")
    func nudgeOverHTTP() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            _ = try await harness.services.expenses.addExpense(
                in: cast.community, description: "Pizza", total: try dollars("30.00"), paidBy: cast.admin,
                split: .equal([cast.admin, cast.member]), as: cast.admin)
            let path = "/communities/\(cast.community)/nudges"
            let sent = try await harness.request(.post, path, token: cast.adminToken, json: ["member": cast.member.description])
            #expect(sent.status == 201, "\(sent.text)")
            let again = try await harness.request(.post, path, token: cast.adminToken, json: ["member": cast.member.description])
            #expect(again.status == 429 && Int(again.headers[.retryAfter] ?? "") ?? 0 > 86_000, "\(again.text)")
            let nothing = try await harness.request(.post, path, token: cast.memberToken, json: ["member": cast.admin.description])
            #expect(nothing.status == 409, "\(nothing.text)")
        }
    }
}
