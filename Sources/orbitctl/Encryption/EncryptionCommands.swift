import ArgumentParser
import Foundation
import OrbitCore

/// `--ciphertext` and `--key-version`: content a client encrypted (docs/e2e.md), in place of
/// the text, for `post create|edit|comment` and `chat send|edit`.
struct EncryptedOptions: ParsableArguments {
    @Option(help: "End-to-end encrypted content instead of the text: the ciphertext in base64.") var ciphertext: String?
    @Option(help: "With --ciphertext: the version of the community key it was encrypted with.") var keyVersion: Int?

    var content: EncryptedContent? {
        get throws { try EncryptedContent.parse(base64: ciphertext, version: keyVersion) }
    }
}

/// `orbitctl keys status|record|publish`: end-to-end encryption's keys (docs/e2e.md).
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "End-to-end encryption: a community's key versions, and users' public keys.",
        subcommands: [Status.self, Record.self, Publish.self])

    struct Status: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Where a community's encryption stands: on or off, the current key version, who left holding it (a re-key is needed), members' public keys."
        )
        @Option(help: "Community id.") var community: CommunityID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> CommunityKeyStatus {
            try await services.communityKeys.status(of: community, as: actor)
        }

        func tell(_ status: CommunityKeyStatus) {
            print("End-to-end encryption: \(status.enabled ? "on" : "off"); current key version: \(status.currentVersion.map(String.init) ?? "none")")
            if status.needsRekey {
                print("Re-key needed: \(status.removedHolders.map(\.description).joined(separator: ", ")) left holding the current key.")
            }
            printTable(
                ["MEMBER", "PUBLIC KEY", "HAS CURRENT KEY"],
                status.members.map { [$0.userID.description, $0.publicKey ?? "(none)", $0.hasCurrentKey ? "yes" : "no"] })
        }
    }

    struct Record: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Record a new version of the community key, wrapped for every active member (admins).",
            discussion: "Each --key is USER=BASE64: the new key wrapped with that member's public key. Every active member needs one.")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "The new version: the current one plus one.") var version: Int
        @Option(help: "USER=BASE64, the key wrapped for one member; repeat for each.") var key: [String] = []
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        /// The status after recording, and beside it how many members the key was wrapped for;
        /// `--json` prints the status alone.
        typealias Recorded = JSONPart<CommunityKeyStatus, Int>

        /// The wrapped keys by member (validate() parses them before connecting).
        private var keys: [UserID: Data] {
            get throws {
                var keys: [UserID: Data] = [:]
                for entry in key {
                    let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
                    guard parts.count == 2, let user = UserID(parts[0]), let data = Data(base64Encoded: parts[1]) else {
                        throw ValidationError("--key must be USER=BASE64 (a user id, then the wrapped key in base64): \(entry)")
                    }
                    keys[user] = data
                }
                return keys
            }
        }

        func validate() throws { _ = try keys }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Recorded {
            let keys = try keys
            return Recorded(
                value: try await services.communityKeys.record(in: community, version: version, keys: keys, as: actor), aside: keys.count)
        }

        func tell(_ recorded: Recorded) {
            print("Recorded key version \(version) for \(recorded.aside) members of \(community).")
        }
    }

    struct Publish: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Publish the acting user's public key (others wrap community keys with it).")
        @Argument(help: "The public key, in base64.") var publicKey: String
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        /// The public key, decoded (validate() decodes it before connecting).
        private var data: Data {
            get throws {
                guard let data = Data(base64Encoded: publicKey) else { throw ValidationError("The public key must be base64.") }
                return data
            }
        }

        func validate() throws { _ = try data }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> UserPublicKey {
            try await services.communityKeys.publish(publicKey: try data, as: actor)
        }

        func tell(_ published: UserPublicKey) {
            print("Published the public key of \(published.userID).")
        }
    }
}
