import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    /// End-to-end encryption's keys (docs/e2e.md): a community's key status and versions, and a
    /// user's public key. Encrypted content itself goes through the posts, comments and chat
    /// routes (`content_encrypted`, `encryption_version`).
    func addEncryptionRoutes(to router: RouterGroup<APIContext>) {
        // Where the community's encryption stands, with the asker's own wrapped keys.
        router.get("communities/:community_id/keys") { _, context in
            JSON(try await services.communityKeys.status(of: try context.id("community_id"), as: try context.requireUser()))
        }
        // A new version of the community key, wrapped for every active member (admins).
        struct WrappedKey: Decodable {
            var userId: UserID
            var encryptedKey: String
        }
        struct NewVersion: Decodable {
            var keyVersion: Int
            var keys: [WrappedKey]
        }
        router.post("communities/:community_id/keys") { request, context in
            let body = try await request.decodeJSON(NewVersion.self, context: context)
            var keys: [UserID: Data] = [:]
            for key in body.keys {
                guard let data = Data(base64Encoded: key.encryptedKey) else {
                    throw APIProblem.validation(field: "keys.encrypted_key", "keys.encrypted_key must be base64 (RFC 4648, with padding).")
                }
                guard keys.updateValue(data, forKey: key.userId) == nil else {
                    throw APIProblem.validation(field: "keys.user_id", "keys names \(key.userId) twice.")
                }
            }
            return try APIJSON.response(
                try await services.communityKeys.record(
                    in: try context.id("community_id"), version: body.keyVersion, keys: keys, as: try context.requireUser()),
                status: .created)
        }
        // The user's public key, which others wrap the community key for.
        struct PublicKeyBody: Decodable {
            var publicKey: String
        }
        router.put("users/me/public-key") { request, context in
            let body = try await request.decodeJSON(PublicKeyBody.self, context: context)
            guard let key = Data(base64Encoded: body.publicKey) else {
                throw APIProblem.validation(field: "public_key", "public_key must be base64 (RFC 4648, with padding).")
            }
            return JSON(try await services.communityKeys.publish(publicKey: key, as: try context.requireUser()))
        }
    }
}
