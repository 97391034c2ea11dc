import Foundation
import OrbitAPI
import OrbitCore
import OrbitTestSupport
import Testing

@Suite("Devices over HTTP")
struct DeviceAPITests {
    @Test("register a token, list it, sign out with it, and it is gone; someone else's token is not found")
    func devices() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let token = String(repeating: "A1", count: 32)
            let registered = try await harness.request(
                .post, "/users/me/devices", token: cast.memberToken,
                json: ["token": token, "environment": "production", "bundle_id": "app.orbitcove.ios", "locale": "en-US"])
            #expect(registered.status == 201, "\(registered.text)")
            #expect(try registered.string("token") == token.lowercased())
            let bad = try await harness.request(
                .post, "/users/me/devices", token: cast.memberToken, json: ["token": token, "environment": "staging", "bundle_id": "app.x"])
            #expect(bad.status == 400)
            #expect(try bad.json["field"] as? String == "environment")

            #expect(try await harness.request(.get, "/users/me/devices", token: cast.memberToken).items.count == 1)
            #expect(try await harness.request(.get, "/users/me/devices", token: cast.adminToken).items.isEmpty)
            #expect(try await harness.request(.delete, "/users/me/devices/\(token)", token: cast.adminToken).status == 404)

            let session = try await harness.services.sessions.start(for: cast.member, device: "iPhone", lifetime: .seconds(3600))
            let out = try await harness.request(.post, "/auth/logout", json: ["refresh_token": session.token, "device_token": token])
            #expect(out.status == 204)
            #expect(try await harness.request(.get, "/users/me/devices", token: cast.memberToken).items.isEmpty)
        }
    }
}
