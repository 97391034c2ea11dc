import Crypto
import Foundation
import HTTPTypes
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// A member's app as docs/e2e.md describes it, with swift-crypto: an X25519 key pair, the
/// community key unwrapped from its wrapped copy, content sealed with AES-GCM under it.
struct E2EClient {
    let privateKey = Curve25519.KeyAgreement.PrivateKey()
    var publicKeyBase64: String { privateKey.publicKey.rawRepresentation.base64EncodedString() }

    static let info = Data("orbitcove community key".utf8)

    /// The community key wrapped for the holder of `publicKey`: an ephemeral X25519 public key
    /// (32 bytes), then AES-GCM's nonce, ciphertext and tag under the HKDF of the shared secret.
    static func wrap(_ key: SymmetricKey, for publicKey: String) throws -> String {
        let recipient = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: try #require(Data(base64Encoded: publicKey)))
        let ephemeral = Curve25519.KeyAgreement.PrivateKey()
        let wrapping = try ephemeral.sharedSecretFromKeyAgreement(with: recipient)
            .hkdfDerivedSymmetricKey(using: SHA256.self, salt: Data(), sharedInfo: info, outputByteCount: 32)
        let sealed = try AES.GCM.seal(key.withUnsafeBytes { Data($0) }, using: wrapping)
        return (ephemeral.publicKey.rawRepresentation + (try #require(sealed.combined))).base64EncodedString()
    }

    func unwrap(_ wrapped: String) throws -> SymmetricKey {
        let data = try #require(Data(base64Encoded: wrapped))
        let ephemeral = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: data.prefix(32))
        let wrapping = try privateKey.sharedSecretFromKeyAgreement(with: ephemeral)
            .hkdfDerivedSymmetricKey(using: SHA256.self, salt: Data(), sharedInfo: Self.info, outputByteCount: 32)
        return SymmetricKey(data: try AES.GCM.open(try AES.GCM.SealedBox(combined: data.dropFirst(32)), using: wrapping))
    }

    static func seal(_ text: String, with key: SymmetricKey) throws -> String {
        try #require(try AES.GCM.seal(Data(text.utf8), using: key).combined).base64EncodedString()
    }

    static func open(_ base64: String, with key: SymmetricKey) throws -> String {
        String(decoding: try AES.GCM.open(try AES.GCM.SealedBox(combined: try #require(Data(base64Encoded: base64))), using: key), as: UTF8.self)
    }
}

@Suite("End-to-end encryption: ciphertext in, the same bytes out, never indexed; re-keying")
struct EncryptionTests {
    /// The cast's community with encryption on and key version 1 recorded by the admin for every
    /// member; the members' clients and the key.
    static func encryptedCommunity(_ harness: APIHarness, _ cast: APICast, extra: [(UserID, String)] = []) async throws
        -> (admin: E2EClient, member: E2EClient, extras: [E2EClient], key: SymmetricKey)
    {
        let admin = E2EClient(), member = E2EClient()
        let extras = extra.map { _ in E2EClient() }
        for (client, token) in [(admin, cast.adminToken), (member, cast.memberToken)] + zip(extras, extra.map(\.1)).map({ ($0, $1) }) {
            let published = try await harness.request(.put, "/users/me/public-key", token: token, json: ["public_key": client.publicKeyBase64])
            #expect(published.status == 200, "\(published.text)")
        }
        let on = try await harness.request(
            .patch, "/communities/\(cast.community)", token: cast.adminToken, json: ["settings": ["endToEndEncryption": true]])
        #expect(on.status == 200, "\(on.text)")
        // The admin's app reads the members' public keys and wraps a new key for each.
        let status = try await harness.request(.get, "/communities/\(cast.community)/keys", token: cast.adminToken)
        let members = try #require(status.json["members"] as? [[String: Any]])
        #expect(members.count == 2 + extra.count && members.allSatisfy { $0["public_key"] is String })
        let key = SymmetricKey(size: .bits256)
        let keys = try members.map {
            [
                "user_id": try #require($0["user_id"] as? String),
                "encrypted_key": try E2EClient.wrap(key, for: try #require($0["public_key"] as? String)),
            ]
        }
        let recorded = try await harness.request(
            .post, "/communities/\(cast.community)/keys", token: cast.adminToken, json: ["key_version": 1, "keys": keys])
        #expect(recorded.status == 201, "\(recorded.text)")
        return (admin, member, extras, key)
    }

    @Test(
        "a post, a comment and a chat message round-trip byte for byte through the API; plaintext, a stale key and polls are refused; search finds nothing"
    )
    func roundTrip() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            // Off: ciphertext is refused (no client could read it).
            let early = try await harness.request(
                .post, "/communities/\(cast.community)/posts", token: cast.memberToken,
                json: ["content_encrypted": Data("x".utf8).base64EncodedString(), "encryption_version": 1])
            #expect(try early.status == 409 && (early.json["field"] as? String) == "content_encrypted", "\(early.text)")
            // On, before any key: nothing can be posted.
            _ = try await harness.request(
                .patch, "/communities/\(cast.community)", token: cast.adminToken, json: ["settings": ["endToEndEncryption": true]])
            let keyless = try await harness.request(
                .post, "/communities/\(cast.community)/posts", token: cast.memberToken,
                json: ["content_encrypted": Data("x".utf8).base64EncodedString(), "encryption_version": 1])
            #expect(try keyless.status == 409 && (keyless.json["field"] as? String) == "encryption_version", "\(keyless.text)")

            let (_, member, _, _) = try await Self.encryptedCommunity(harness, cast)
            // The member's app unwraps its copy of the key.
            let keys = try await harness.request(.get, "/communities/\(cast.community)/keys", token: cast.memberToken)
            #expect(try keys.json["current_version"] as? Int == 1 && (keys.json["needs_rekey"] as? Bool) == false)
            let mine = try #require((try keys.json["my_keys"] as? [[String: Any]])?.first)
            let key = try member.unwrap(try #require(mine["encrypted_key"] as? String))

            let secret = "Surprise party for the coach: zebra cake, Saturday 3 pm 🎂"
            let ciphertext = try E2EClient.seal(secret, with: key)
            let created = try await harness.request(
                .post, "/communities/\(cast.community)/posts", token: cast.memberToken,
                json: ["content_encrypted": ciphertext, "encryption_version": 1])
            #expect(created.status == 201, "\(created.text)")
            let postID = try created.string("id")
            let read = try await harness.request(.get, "/posts/\(postID)", token: cast.adminToken)
            #expect(try read.string("content_encrypted") == ciphertext)
            #expect(try read.json["content"] is NSNull && (read.json["encryption_version"] as? Int) == 1)
            #expect(try E2EClient.open(read.string("content_encrypted"), with: key) == secret)
            // In the feed page too (written by DirectJSON).
            let page = try await harness.request(.get, "/communities/\(cast.community)/posts", token: cast.adminToken)
            #expect(try page.items.first { $0["id"] as? String == postID }?["content_encrypted"] as? String == ciphertext)

            let commentText = try E2EClient.seal("I'll bring the zebra candles", with: key)
            let comment = try await harness.request(
                .post, "/posts/\(postID)/comments", token: cast.adminToken, json: ["content_encrypted": commentText, "encryption_version": 1])
            #expect(comment.status == 201, "\(comment.text)")
            let comments = try await harness.request(.get, "/posts/\(postID)/comments", token: cast.memberToken)
            #expect(try comments.items.first?["content_encrypted"] as? String == commentText)
            #expect(try comments.items.first?["content"] is NSNull)

            let (direct, _) = try await harness.services.chat.start(in: cast.community, kind: .direct, with: [cast.member], as: cast.admin)
            let messageText = try E2EClient.seal("zebra cake ordered", with: key)
            let sent = try await harness.request(
                .post, "/chats/\(direct.id)/messages", token: cast.adminToken, json: ["content_encrypted": messageText, "encryption_version": 1])
            #expect(sent.status == 201, "\(sent.text)")
            let history = try await harness.request(.get, "/chats/\(direct.id)/messages", token: cast.memberToken)
            let message = try #require(try history.items.first)
            #expect(message["content_encrypted"] as? String == messageText && message["text"] is NSNull)
            #expect(try E2EClient.open(#require(message["content_encrypted"] as? String), with: key) == "zebra cake ordered")

            // Search never finds it, and nothing of it is in any index.
            let search = try await harness.request(.get, "/communities/\(cast.community)/search?q=zebra", token: cast.adminToken)
            #expect(try search.status == 200 && (search.items).isEmpty, "\(search.text)")
            let indexed = try await harness.database.withConnection { connection in
                try await connection.query(
                    """
                    SELECT (SELECT count(*) FROM posts WHERE search_vector IS NOT NULL AND content_encrypted IS NOT NULL)
                         + (SELECT count(*) FROM comments WHERE search_vector IS NOT NULL AND content_encrypted IS NOT NULL)
                         + (SELECT count(*) FROM messages WHERE search_vector IS NOT NULL AND content_encrypted IS NOT NULL) AS n
                    """
                ).single().decode("n", as: Int64.self)
            }
            #expect(indexed == 0)

            // Plaintext is refused everywhere; so are a key version that is not the current one,
            // both forms at once, a poll and turning encryption off.
            for (path, body, field) in [
                ("/communities/\(cast.community)/posts", ["content": "hello"] as [String: Any], "content_encrypted"),
                ("/posts/\(postID)/comments", ["content": "hello"], "content_encrypted"),
                ("/chats/\(direct.id)/messages", ["text": "hello"], "content_encrypted"),
                ("/communities/\(cast.community)/posts", ["content_encrypted": ciphertext, "encryption_version": 2], "encryption_version"),
                (
                    "/communities/\(cast.community)/posts",
                    [
                        "type": "poll", "content_encrypted": ciphertext, "encryption_version": 1,
                        "poll": ["question": "Cake?", "options": ["yes", "no"]],
                    ],
                    "poll_data"
                ),
            ] {
                let refused = try await harness.request(.post, path, token: cast.memberToken, json: body)
                #expect(try refused.status == 409 && (refused.json["field"] as? String) == field, "\(path) \(body): \(refused.text)")
            }
            let both = try await harness.request(
                .post, "/communities/\(cast.community)/posts", token: cast.memberToken,
                json: ["content": "hi", "content_encrypted": ciphertext, "encryption_version": 1])
            #expect(both.status == 400, "\(both.text)")
            let edit = try await harness.request(.patch, "/posts/\(postID)", token: cast.memberToken, json: ["content": "in the clear"])
            #expect(edit.status == 409, "\(edit.text)")
            let newText = try E2EClient.seal("Surprise party moved to Sunday", with: key)
            let edited = try await harness.request(
                .patch, "/posts/\(postID)", token: cast.memberToken, json: ["content_encrypted": newText, "encryption_version": 1])
            #expect(try edited.status == 200 && (edited.string("content_encrypted")) == newText, "\(edited.text)")
            let off = try await harness.request(
                .patch, "/communities/\(cast.community)", token: cast.adminToken, json: ["settings": ["endToEndEncryption": false]])
            #expect(try off.status == 409 && (off.json["field"] as? String) == "settings.endToEndEncryption", "\(off.text)")
        }
    }

    @Test("a removed member marks the key as needing a re-key; the admin records version 2 for the others; version 1 is refused from then on")
    func rekey() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let third = try await harness.services.users.create(email: "third@example.com", displayName: "Theo Third").id
            _ = try await harness.services.members.add(third, to: cast.community, as: cast.admin)
            let thirdToken = try await harness.token(for: third)
            let (admin, member, _, oldKey) = try await Self.encryptedCommunity(harness, cast, extra: [(third, thirdToken)])

            try await harness.services.members.remove(third, from: cast.community, as: cast.admin)
            let status = try await harness.request(.get, "/communities/\(cast.community)/keys", token: cast.adminToken)
            #expect(try status.json["needs_rekey"] as? Bool == true)
            #expect(try status.json["removed_holders"] as? [String] == [third.description])
            // The removed member reads no keys any more.
            #expect(try await harness.request(.get, "/communities/\(cast.community)/keys", token: thirdToken).status == 404)

            // Version 2 must cover exactly the remaining members, and follow version 1.
            let newKey = SymmetricKey(size: .bits256)
            let remaining = [(cast.admin, admin), (cast.member, member)]
            let keys = try remaining.map { ["user_id": $0.0.description, "encrypted_key": try E2EClient.wrap(newKey, for: $0.1.publicKeyBase64)] }
            let partial = try await harness.request(
                .post, "/communities/\(cast.community)/keys", token: cast.adminToken, json: ["key_version": 2, "keys": Array(keys.prefix(1))])
            #expect(try partial.status == 409 && (partial.json["field"] as? String) == "keys", "\(partial.text)")
            let withRemoved = try await harness.request(
                .post, "/communities/\(cast.community)/keys", token: cast.adminToken,
                json: ["key_version": 2, "keys": keys + [["user_id": third.description, "encrypted_key": "AAAA"]]])
            #expect(withRemoved.status == 409, "\(withRemoved.text)")
            let skipped = try await harness.request(
                .post, "/communities/\(cast.community)/keys", token: cast.adminToken, json: ["key_version": 3, "keys": keys])
            #expect(try skipped.status == 409 && (skipped.json["field"] as? String) == "key_version", "\(skipped.text)")
            let byMember = try await harness.request(
                .post, "/communities/\(cast.community)/keys", token: cast.memberToken, json: ["key_version": 2, "keys": keys])
            #expect(byMember.status == 403, "\(byMember.text)")
            let recorded = try await harness.request(
                .post, "/communities/\(cast.community)/keys", token: cast.adminToken, json: ["key_version": 2, "keys": keys])
            #expect(recorded.status == 201, "\(recorded.text)")
            #expect(try recorded.json["needs_rekey"] as? Bool == false && (recorded.json["current_version"] as? Int) == 2)

            // The member unwraps version 2; content under version 1 is refused now.
            let mine = try #require(
                (try await harness.request(.get, "/communities/\(cast.community)/keys", token: cast.memberToken).json["my_keys"]
                    as? [[String: Any]])?.first)
            #expect(mine["key_version"] as? Int == 2)
            let unwrapped = try member.unwrap(try #require(mine["encrypted_key"] as? String))
            #expect(unwrapped == newKey)
            let stale = try await harness.request(
                .post, "/communities/\(cast.community)/posts", token: cast.memberToken,
                json: ["content_encrypted": try E2EClient.seal("old key", with: oldKey), "encryption_version": 1])
            #expect(try stale.status == 409 && (stale.json["field"] as? String) == "encryption_version", "\(stale.text)")
            let fresh = try await harness.request(
                .post, "/communities/\(cast.community)/posts", token: cast.memberToken,
                json: ["content_encrypted": try E2EClient.seal("new key", with: unwrapped), "encryption_version": 2])
            #expect(fresh.status == 201, "\(fresh.text)")

            // A new member who has not published a public key cannot be given the key yet, and
            // does not hold up the next version.
            let quiet = try await harness.services.users.create(email: "quiet@example.com", displayName: "Quinn Quiet").id
            _ = try await harness.services.members.add(quiet, to: cast.community, as: cast.admin)
            let version3 = try await harness.request(
                .post, "/communities/\(cast.community)/keys", token: cast.adminToken, json: ["key_version": 3, "keys": keys])
            #expect(version3.status == 201, "\(version3.text)")
            let quietEntry = try #require((try version3.json["members"] as? [[String: Any]])?.first { $0["user_id"] as? String == quiet.description })
            #expect(quietEntry["public_key"] is NSNull && quietEntry["has_current_key"] as? Bool == false)
        }
    }
}
