package import Foundation
import OrbitPostgres

/// A 6-character invite code from an alphabet without look-alikes (no 0/O, 1/I/L), stored
/// upper-case and matched case-insensitively.
package struct InviteCode: Sendable, Hashable, Codable, CustomStringConvertible {
    package static let alphabet = Array("ABCDEFGHJKMNPQRSTUVWXYZ23456789")
    package static let length = 6

    package let value: String

    /// Normalizes user input (case, surrounding spaces); nil if it cannot be a code.
    package init?(_ text: String) {
        let upper = text.trimmingCharacters(in: .whitespaces).uppercased()
        guard upper.count == Self.length, upper.allSatisfy({ Self.alphabet.contains($0) }) else { return nil }
        value = upper
    }

    /// The code a person typed, or a refusal saying what a code looks like.
    /// - Throws: `ServiceError.invalidInput(field: "code")`.
    package static func parse(_ text: String) throws -> InviteCode {
        guard let code = InviteCode(text) else {
            throw ServiceError.invalidInput(field: "code", reason: "must be 6 letters or digits from the invite")
        }
        return code
    }

    /// A random code.
    package static func random() -> InviteCode {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    static func random(using generator: inout some RandomNumberGenerator) -> InviteCode {
        let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
        return InviteCode(text)!
    }

    package var description: String { value }

    package init(from decoder: any Decoder) throws {
        let text = try String(from: decoder)
        guard let code = InviteCode(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an invite code"))
        }
        self = code
    }

    package func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
    }
}

/// An invitation to join a community (spec: Invites).
package struct Invite: Sendable, Codable, Equatable {
    package var id: InviteID
    package var communityID: CommunityID
    package var code: String
    package var createdBy: UserID
    package var usesRemaining: Int?
    package var expiresAt: Date?
    package var createdAt: Date
    /// A guest's invite (one use): the guest (their member id) whom the user who joins claims.
    package var guestMemberID: MemberID?

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", code, createdBy = "created_by", usesRemaining = "uses_remaining"
        case expiresAt = "expires_at", createdAt = "created_at", guestMemberID = "guest_member_id"
    }

    static let columns = "id, community_id, code, created_by, uses_remaining, expires_at, created_at, guest_member_id"

    init(row: PostgresRow) throws {
        let uses: Int32?
        (id, communityID, code, createdBy, uses, expiresAt, createdAt, guestMemberID) = try row.decode(
            (InviteID, CommunityID, String, UserID, Int32?, Date?, Date, MemberID?).self
        )
        usesRemaining = uses.map(Int.init)
    }
}

/// What an invite shows before anyone joins (`GET /invites/{code}`): the community's name, its
/// member count and who invited; nothing else of the community (One By Two's `groupName`).
package struct InvitePreview: Sendable, Codable, Equatable {
    package var code: String
    package var communityName: String
    package var memberCount: Int
    /// The inviter's display name; nil when their account is gone.
    package var inviterName: String?
    package var expiresAt: Date?
    /// A guest's invite: the guest whose shares, payments and settlements the one who joins takes
    /// over.
    package var guestName: String?

    enum CodingKeys: String, CodingKey {
        case code, communityName = "community_name", memberCount = "member_count", inviterName = "inviter_name", expiresAt = "expires_at"
        case guestName = "guest_name"
    }

    package init(code: String, communityName: String, memberCount: Int, inviterName: String?, expiresAt: Date?, guestName: String? = nil) {
        self.code = code
        self.communityName = communityName
        self.memberCount = memberCount
        self.inviterName = inviterName
        self.expiresAt = expiresAt
        self.guestName = guestName
    }
}

/// What redeeming an invite did.
package struct Redemption: Sendable, Codable, Equatable {
    package var communityID: CommunityID
    package var memberID: MemberID
    /// True when an earlier membership (the user had left) was reactivated.
    package var rejoined: Bool
    /// A guest's invite: the guest (their member id, now closed) whose money became the user's.
    package var claimedGuestMemberID: MemberID?

    enum CodingKeys: String, CodingKey {
        case communityID = "community_id", memberID = "member_id", rejoined, claimedGuestMemberID = "claimed_guest_member_id"
    }
}
