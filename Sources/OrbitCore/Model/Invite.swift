public import Foundation
import OrbitPostgres

/// A 6-character invite code from an alphabet without look-alikes (no 0/O, 1/I/L), stored
/// upper-case and matched case-insensitively.
public struct InviteCode: Sendable, Hashable, Codable, CustomStringConvertible {
    public static let alphabet = Array("ABCDEFGHJKMNPQRSTUVWXYZ23456789")
    public static let length = 6

    public let value: String

    /// Normalizes user input (case, surrounding spaces); nil if it cannot be a code.
    public init?(_ text: String) {
        let upper = text.trimmingCharacters(in: .whitespaces).uppercased()
        guard upper.count == Self.length, upper.allSatisfy({ Self.alphabet.contains($0) }) else { return nil }
        value = upper
    }

    /// A random code.
    public static func random() -> InviteCode {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    static func random(using generator: inout some RandomNumberGenerator) -> InviteCode {
        let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
        return InviteCode(text)!
    }

    public var description: String { value }

    public init(from decoder: any Decoder) throws {
        let text = try String(from: decoder)
        guard let code = InviteCode(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an invite code"))
        }
        self = code
    }

    public func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
    }
}

/// An invitation to join a community (spec: Invites).
public struct Invite: Sendable, Codable, Equatable {
    public var id: InviteID
    public var communityID: CommunityID
    public var code: String
    public var createdBy: UserID
    public var usesRemaining: Int?
    public var expiresAt: Date?
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", code, createdBy = "created_by", usesRemaining = "uses_remaining"
        case expiresAt = "expires_at", createdAt = "created_at"
    }

    /// Encodes every column, `null` included (synthesized Codable would leave nil keys out).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(communityID, forKey: .communityID)
        try container.encode(code, forKey: .code)
        try container.encode(createdBy, forKey: .createdBy)
        try container.encode(usesRemaining, forKey: .usesRemaining)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(createdAt, forKey: .createdAt)
    }

    static let columns = "id, community_id, code, created_by, uses_remaining, expires_at, created_at"

    init(row: PostgresRow) throws {
        let uses: Int32?
        (id, communityID, code, createdBy, uses, expiresAt, createdAt) = try row.decode(
            (InviteID, CommunityID, String, UserID, Int32?, Date?, Date).self
        )
        usesRemaining = uses.map(Int.init)
    }
}

/// What redeeming an invite did.
public struct Redemption: Sendable, Codable, Equatable {
    public var communityID: CommunityID
    public var memberID: MemberID
    /// True when an earlier membership (the user had left) was reactivated.
    public var rejoined: Bool

    enum CodingKeys: String, CodingKey {
        case communityID = "community_id", memberID = "member_id", rejoined
    }
}
