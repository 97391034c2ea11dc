import Foundation
import HTTPTypes
import OrbitCore
import OrbitTestSupport
import Testing

@Suite("Corrections over HTTP: a time of day and a receipt image")
struct CorrectionAPITests {
    @Test("POST and PATCH /expenses take transaction_time and receipt_media_id; null clears them; a bad time is a 400 naming it")
    func timeAndReceipt() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "orbit-media-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withAPI(storage: LocalDirectoryStorage(root: folder)) { harness in
            let cast = try await APICast.make(harness)
            let receipt = try await harness.services.media.upload(
                to: cast.community, filename: "receipt.jpg", mimeType: "image/jpeg", data: Data([0xFF, 0xD8, 0xFF, 0x00]), width: 6, height: 8,
                as: cast.member)
            let added = try await harness.request(
                .post, "/communities/\(cast.community)/expenses", token: cast.memberToken,
                json: [
                    "description": "Dinner", "amount": 6000, "currency": "USD", "transaction_time": "19:30",
                    "receipt_media_id": receipt.id.description,
                    "split": ["method": "equal", "user_ids": [cast.member.description, cast.admin.description]],
                ])
            #expect(added.status == 201, "\(added.text)")
            #expect(try added.json["transaction_time"] as? String == "19:30" && added.json["receipt_media_id"] as? String == receipt.id.description)
            let id = try added.string("id")
            let bad = try await harness.request(.patch, "/expenses/\(id)", token: cast.memberToken, json: ["transaction_time": "7:30"])
            #expect(try bad.status == 400 && bad.json["field"] as? String == "transaction_time", "\(bad.text)")
            let unknown = try await harness.request(
                .patch, "/expenses/\(id)", token: cast.memberToken, json: ["receipt_media_id": UUID().uuidString.lowercased()])
            #expect(unknown.status == 404, "\(unknown.text)")
            let cleared = try await harness.request(
                .patch, "/expenses/\(id)", token: cast.memberToken, json: ["transaction_time": NSNull(), "receipt_media_id": NSNull()])
            #expect(
                try cleared.status == 200 && cleared.json["transaction_time"] is NSNull && cleared.json["receipt_media_id"] is NSNull,
                "\(cleared.text)")
        }
    }
}
