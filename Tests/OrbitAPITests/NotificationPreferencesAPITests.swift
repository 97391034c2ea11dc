import Foundation
import HTTPTypes
import OrbitCore
import OrbitTestSupport
import Testing

@Suite("Notification preferences over HTTP")
struct NotificationPreferencesAPITests {
    @Test("GET and PATCH /users/me/notification-preferences: all on at first, a switch left out stays, a non-boolean is a 400")
    func preferences() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let path = "/users/me/notification-preferences"
            let first = try await harness.request(.get, path, token: cast.memberToken)
            #expect(
                try first.status == 200 && first.json["expenses"] as? Bool == true && first.json["weekly_digest"] as? Bool == true, "\(first.text)")
            let off = try await harness.request(.patch, path, token: cast.memberToken, json: ["weekly_digest": false])
            #expect(try off.status == 200 && off.json["weekly_digest"] as? Bool == false && off.json["reminders"] as? Bool == true, "\(off.text)")
            let bad = try await harness.request(.patch, path, token: cast.memberToken, json: ["expenses": "no"])
            #expect(try bad.status == 400 && bad.json["field"] as? String == "expenses", "\(bad.text)")
            #expect(try await harness.request(.get, path, token: cast.memberToken).json["weekly_digest"] as? Bool == false)
        }
    }
}
