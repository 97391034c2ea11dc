public import Foundation
public import OrbitPostgres

/// A UUID that knows what it identifies: a `UserID` cannot be passed where a `CommunityID` is
/// expected.
public struct Identifier<Subject>: Hashable, Sendable, Codable, CustomStringConvertible, LosslessStringConvertible {
    public var uuid: UUID

    public init(_ uuid: UUID) { self.uuid = uuid }

    /// Parses the textual form (any case); nil for anything else.
    public init?(_ description: String) {
        guard let uuid = UUID(uuidString: description) else { return nil }
        self.uuid = uuid
    }

    public static func random() -> Identifier { Identifier(UUID()) }

    /// Lower-case, as PostgreSQL prints UUIDs. Written by hand: Foundation's `uuidString`
    /// formats with sprintf, and responses print many ids.
    public var description: String {
        let hex: StaticString = "0123456789abcdef"
        return withUnsafeBytes(of: uuid.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { output in
                var position = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        output[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    output[position] = hex.utf8Start[Int(byte >> 4)]
                    output[position + 1] = hex.utf8Start[Int(byte & 0x0F)]
                    position += 2
                }
                return position
            }
        }
    }

    public init(from decoder: any Decoder) throws {
        uuid = try UUID(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension Identifier: PostgresEncodable, PostgresDecodable {
    public static var postgresType: PostgresType { .uuid }

    public func encode(into buffer: inout PostgresEncodingBuffer) throws {
        uuid.encode(into: &buffer)
    }

    public init(from value: PostgresValue) throws {
        uuid = try UUID(from: value)
    }
}

public enum UserTag {}
public enum CommunityTag {}
public enum MemberTag {}
public enum InviteTag {}
public enum FamilyMemberTag {}
public enum AuditEntryTag {}

public typealias UserID = Identifier<UserTag>
public typealias CommunityID = Identifier<CommunityTag>
public typealias MemberID = Identifier<MemberTag>
public typealias InviteID = Identifier<InviteTag>
public typealias FamilyMemberID = Identifier<FamilyMemberTag>
public typealias AuditEntryID = Identifier<AuditEntryTag>

extension Identifier: Comparable {
    /// Byte order, for stable sorting (cheaper than comparing `uuidString`s, which are formatted).
    public static func < (lhs: Identifier, rhs: Identifier) -> Bool {
        withUnsafeBytes(of: lhs.uuid.uuid) { left in
            withUnsafeBytes(of: rhs.uuid.uuid) { right in
                left.lexicographicallyPrecedes(right)
            }
        }
    }
}
