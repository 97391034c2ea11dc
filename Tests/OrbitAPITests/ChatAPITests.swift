import Foundation
import OrbitCore
import OrbitTestSupport
import Testing

@Suite("Chat over HTTP")
struct ChatAPITests {
    @Test("a direct conversation: start (then the same one again), send with a client id twice, read receipts, unread counts; outsiders get 404")
    func directConversation() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let start = try await harness.request(
                .post, "/communities/\(cast.community)/chats", token: cast.adminToken,
                json: ["kind": "direct", "user_ids": [cast.member.description]])
            #expect(start.status == 201, "\(start.text)")
            let conversation = try start.string("id")
            #expect(try start.string("with_user_id") == cast.member.description)
            let again = try await harness.request(
                .post, "/communities/\(cast.community)/chats", token: cast.memberToken,
                json: ["kind": "direct", "user_ids": [cast.admin.description]])
            #expect(again.status == 200)
            #expect(try again.string("id") == conversation)

            let path = "/chats/\(conversation)/messages"
            let sent = try await harness.request(.post, path, token: cast.adminToken, json: ["text": "Kit in the car?", "client_message_id": "m-1"])
            #expect(sent.status == 201, "\(sent.text)")
            #expect(try sent.string("status") == "sent")
            let resent = try await harness.request(
                .post, path, token: cast.adminToken, json: ["text": "Kit in the car?", "client_message_id": "m-1"])
            #expect(resent.status == 200)
            #expect(try resent.string("id") == (try sent.string("id")))
            // The same id with other text is another message: 409 with the stored one (issue 38).
            let other = try await harness.request(.post, path, token: cast.adminToken, json: ["text": "Boots too?", "client_message_id": "m-1"])
            #expect(other.status == 409, "\(other.text)")
            #expect(try other.string("field") == "client_message_id")
            #expect(try (other.json["stored"] as? [String: Any])?["text"] as? String == "Kit in the car?", "\(other.text)")
            // Once the message was edited, the first text sent again is a late resend: 200 with it.
            let edited = try await harness.request(
                .patch, "/messages/\(try sent.string("id"))", token: cast.adminToken, json: ["text": "Kit and boots in the car?"])
            #expect(edited.status == 200, "\(edited.text)")
            let late = try await harness.request(.post, path, token: cast.adminToken, json: ["text": "Kit in the car?", "client_message_id": "m-1"])
            #expect(late.status == 200, "\(late.text)")

            let list = try await harness.request(.get, "/chats?community_id=\(cast.community)", token: cast.memberToken)
            #expect(list.status == 200)
            let direct = try #require(try list.items.first { $0["id"] as? String == conversation })
            #expect(direct["unread_count"] as? Int == 1)
            #expect((direct["last_message"] as? [String: Any])?["text"] as? String == "Kit and boots in the car?")

            let read = try await harness.request(
                .put, "/chats/\(conversation)/read", token: cast.memberToken, json: ["message_id": try sent.string("id")])
            #expect(read.status == 200, "\(read.text)")
            #expect(try read.json["unread_count"] as? Int == 0)
            let history = try await harness.request(.get, path, token: cast.adminToken)
            #expect(try history.items.first?["status"] as? String == "read")

            let muted = try await harness.request(.put, "/chats/\(conversation)/mute", token: cast.memberToken, json: ["until": NSNull()])
            #expect(muted.status == 200)
            // `until` is required (null unmutes); a direct conversation has no title; naming oneself is the state's refusal.
            let noUntil = try await harness.request(.put, "/chats/\(conversation)/mute", token: cast.memberToken, json: [String: Any]())
            #expect(noUntil.status == 400)
            let titled = try await harness.request(
                .post, "/communities/\(cast.community)/chats", token: cast.adminToken,
                json: ["kind": "direct", "user_ids": [cast.member.description], "title": "Us"])
            #expect(titled.status == 400)
            let oneself = try await harness.request(
                .post, "/communities/\(cast.community)/chats", token: cast.adminToken, json: ["kind": "direct", "user_ids": [cast.admin.description]])
            #expect(oneself.status == 409)
            let edit = try await harness.request(.patch, "/messages/\(try sent.string("id"))", token: cast.memberToken, json: ["text": "Mine now"])
            #expect(edit.status == 403)

            for (method, route) in [("GET", "/chats/\(conversation)"), ("GET", path), ("POST", path)] {
                let response = try await harness.request(
                    .init(method)!, route, token: cast.outsiderToken, json: method == "POST" ? ["text": "Let me in"] : nil)
                #expect(response.status == 404, "\(method) \(route): \(response.status)")
            }
            let invalid = try await harness.request(.post, path, token: cast.adminToken, json: ["text": String(repeating: "x", count: 4001)])
            #expect(invalid.status == 400)
            let leave = try await harness.request(.post, "/chats/\(conversation)/leave", token: cast.memberToken)
            #expect(leave.status == 409)
        }
    }
}
