import Foundation
import OrbitTestSupport
import Testing

@Suite("orbitctl keys, and encrypted content through post")
struct EncryptionCommandTests {
    @Test(
        "publish public keys, record key version 1, post ciphertext that comes back byte for byte; plaintext refused; a removed member shows a re-key is needed"
    )
    func keysAndCiphertext() async throws {
        try await withTestDatabase { database in
            let cli = Orbitctl(database: database)
            _ = try await cli.json("user", "create", "--email", "ada@example.com", "--name", "Ada")
            let max = try #require(try await cli.json("user", "create", "--email", "max@example.com", "--name", "Max")["id"] as? String)
            let ada = try #require(try await cli.json("user", "show", "ada@example.com")["id"] as? String)
            let community = try #require(try await cli.json("community", "create", "--name", "Family", "--as", "ada@example.com")["id"] as? String)
            _ = try await cli.json("community", "add-member", community, "--user", max, "--as", "ada@example.com")
            for who in ["ada@example.com", "max@example.com"] {
                _ = try await cli.json("keys", "publish", Data(repeating: 7, count: 32).base64EncodedString(), "--as", who)
            }
            _ = try await cli.json("community", "update", community, "--settings", #"{"endToEndEncryption": true}"#, "--as", "ada@example.com")
            let wrapped = Data(repeating: 9, count: 60).base64EncodedString()
            let recorded = try await cli.json(
                "keys", "record", "--community", community, "--version", "1", "--key", "\(ada)=\(wrapped)", "--key", "\(max)=\(wrapped)",
                "--as", "ada@example.com")
            #expect(recorded["current_version"] as? Int == 1)
            let status = try await cli.json("keys", "status", "--community", community, "--as", "max@example.com")
            #expect((status["my_keys"] as? [[String: Any]])?.first?["encrypted_key"] as? String == wrapped)

            let ciphertext = Data((0..<200).map { UInt8($0) }).base64EncodedString()
            let post = try await cli.json(
                "post", "create", "--community", community, "--ciphertext", ciphertext, "--key-version", "1", "--as", "max@example.com")
            #expect(post["content_encrypted"] as? String == ciphertext && post["content"] is NSNull)
            let postID = try #require(post["id"] as? String)
            let comment = try await cli.json("post", "comment", postID, "--ciphertext", ciphertext, "--key-version", "1", "--as", "ada@example.com")
            #expect(comment["content_encrypted"] as? String == ciphertext)
            let plain = try await cli.run("post", "create", "--community", community, "--content", "hello", "--as", "max@example.com")
            #expect(!plain.succeeded && plain.errors.contains("content_encrypted"), "\(plain.errors)")
            let half = try await cli.run("post", "create", "--community", community, "--ciphertext", ciphertext, "--as", "max@example.com")
            #expect(!half.succeeded && half.errors.contains("encryption_version"), "\(half.errors)")

            _ = try await cli.run("community", "remove-member", community, "--user", max, "--as", "ada@example.com")
            let table = try await cli.run("keys", "status", "--community", community, "--as", "ada@example.com")
            #expect(table.succeeded && table.output.contains("Re-key needed: \(max)"), "\(table.output)")
        }
    }
}
