import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    /// Chat (docs/chat.md): conversations of a community and their messages.
    func addChatRoutes(to router: RouterGroup<APIContext>) {
        router.get("chats") { request, context in
            let limit = try request.queryInt("limit", default: 50, range: 1...200)
            return JSON(
                try await services.chat.list(
                    in: try request.queryID("community_id"), limit: limit, cursor: request.query("cursor"), as: try context.requireUser()))
        }
        struct StartBody: Decodable {
            var kind: String
            var userIds: [UserID]
            var title: String?
        }
        // 201 with a new conversation; 200 with the direct conversation the pair has already.
        router.post("communities/:community_id/chats") { request, context in
            let body = try await request.decodeJSON(StartBody.self, context: context)
            guard let kind = ConversationKind(rawValue: body.kind), kind != .community else {
                throw APIProblem.validation(field: "kind", "kind must be group or direct.")
            }
            let user = try context.requireUser()
            // With the client's `id` (docs/sync.md, "Offline writes"): a replay of any age is 200
            // with the conversation; the id used otherwise, 409.
            return try await creating(
                .conversations, request, context: context, stored: { try await services.chat.get(ConversationID($0), as: user) }
            ) {
                try await services.chat.start(in: try context.id("community_id"), kind: kind, with: body.userIds, title: body.title, as: user)
            }
        }
        let chat = router.group("chats/:conversation_id")
        chat.get { _, context in
            JSON(try await services.chat.get(try context.id("conversation_id"), as: try context.requireUser()))
        }
        chat.get("messages") { request, context in
            let limit = try request.queryInt("limit", default: 50, range: 1...200)
            return JSON(
                try await services.chat.history(
                    of: try context.id("conversation_id"), limit: limit, cursor: request.query("cursor"), as: try context.requireUser()))
        }
        // Text, or ciphertext (`content_encrypted` and `encryption_version`, docs/e2e.md).
        struct SendBody: Decodable {
            var text: String?
            var clientMessageId: String?
            var contentEncrypted: String?
            var encryptionVersion: Int?
        }
        // 201 with the new message; 200 with the first one for a resend of its client_message_id;
        // 409 with it for the same id with other text (docs/chat.md).
        chat.post("messages") { request, context in
            let body = try await request.decodeJSON(SendBody.self, context: context)
            do {
                let (message, created) = try await services.chat.send(
                    to: try context.id("conversation_id"), text: body.text,
                    encrypted: try EncryptedContent.parse(base64: body.contentEncrypted, version: body.encryptionVersion),
                    clientMessageID: body.clientMessageId, as: try context.requireUser())
                return try APIJSON.response(message, status: created ? .created : .ok)
            } catch let differs as ChatService.ResendDiffers {
                var taken = ClientIDTaken(requestID: context.requestID, stored: differs.stored)
                taken.field = "client_message_id"
                taken.detail = "This client_message_id was used for a message with other text; stored is that message."
                return try taken.response()
            }
        }
        struct Watermark: Decodable {
            var messageId: MessageID
        }
        chat.put("read") { request, context in
            let body = try await request.decodeJSON(Watermark.self, context: context)
            return JSON(
                try await services.chat.mark(.read, upTo: body.messageId, in: try context.id("conversation_id"), as: try context.requireUser()))
        }
        chat.put("delivered") { request, context in
            let body = try await request.decodeJSON(Watermark.self, context: context)
            return JSON(
                try await services.chat.mark(.delivered, upTo: body.messageId, in: try context.id("conversation_id"), as: try context.requireUser()))
        }
        struct MuteBody: Decodable, NullableFields {
            static let nullableFields: Set<String> = ["until"]
            var until: Date?
            enum CodingKeys: String, CodingKey { case until }

            /// `until` is required: `null` unmutes, a missing key is a mistake, not an unmute.
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                guard container.contains(.until) else {
                    throw DecodingError.keyNotFound(CodingKeys.until, .init(codingPath: [], debugDescription: "until is required"))
                }
                until = try container.decode(Date?.self, forKey: .until)
            }
        }
        chat.put("mute") { request, context in
            let body = try await request.decodeJSON(MuteBody.self, context: context)
            return JSON(try await services.chat.mute(try context.id("conversation_id"), until: body.until, as: try context.requireUser()))
        }
        chat.post("leave") { _, context in
            try await services.chat.leave(try context.id("conversation_id"), as: try context.requireUser())
            return NoContent()
        }
        chat.delete("participants/:user_id") { _, context in
            try await services.chat.remove(try context.id("user_id"), from: try context.id("conversation_id"), as: try context.requireUser())
            return NoContent()
        }
        // Typing indicator (also a socket message of GET /live): to the others' sockets, not stored.
        chat.post("typing") { _, context in
            try await services.chat.typing(in: try context.id("conversation_id"), as: try context.requireUser())
            return NoContent()
        }

        // Presence: online while a live socket is open; seen by people who share a community.
        router.get("users/me/presence") { _, context in
            let user = try context.requireUser()
            return JSON(try await services.chat.presence(of: user, as: user))
        }
        router.get("users/:user_id/presence") { _, context in
            JSON(try await services.chat.presence(of: try context.id("user_id"), as: try context.requireUser()))
        }
        struct PresenceBody: Decodable {
            var visible: Bool
        }
        router.put("users/me/presence") { request, context in
            let body = try await request.decodeJSON(PresenceBody.self, context: context)
            return JSON(try await services.chat.setPresenceVisible(body.visible, as: try context.requireUser()))
        }

        struct EditBody: Decodable {
            var text: String?
            var contentEncrypted: String?
            var encryptionVersion: Int?
        }
        router.patch("messages/:message_id") { request, context in
            let body = try await request.decodeJSON(EditBody.self, context: context)
            return JSON(
                try await services.chat.edit(
                    try context.id("message_id"), text: body.text,
                    encrypted: try EncryptedContent.parse(base64: body.contentEncrypted, version: body.encryptionVersion),
                    as: try context.requireUser()))
        }
        router.delete("messages/:message_id") { _, context in
            try await services.chat.delete(try context.id("message_id"), as: try context.requireUser())
            return NoContent()
        }
    }
}
