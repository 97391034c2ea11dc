package import Foundation
package import OrbitPostgres

/// A UUID that knows what it identifies: a `UserID` cannot be passed where a `CommunityID` is
/// expected.
package struct Identifier<Subject>: Hashable, Sendable, Codable, CustomStringConvertible, LosslessStringConvertible {
    package var uuid: UUID

    package init(_ uuid: UUID) { self.uuid = uuid }

    /// Parses the textual form (any case); nil for anything else.
    package init?(_ description: String) {
        guard let uuid = UUID(uuidString: description) else { return nil }
        self.uuid = uuid
    }

    package static func random() -> Identifier { Identifier(UUID()) }

    /// A new entity's id: the one its client generated, when the request is such a create of a
    /// row of `table` (`RequestRunner.clientCreate`), a random one otherwise.
    package static func new(in table: ClientCreatable) -> Identifier {
        if let create = RequestRunner.clientCreate, create.table == table { return Identifier(create.id) }
        return random()
    }

    /// Lower-case, as PostgreSQL prints UUIDs. Written by hand: Foundation's `uuidString`
    /// formats with sprintf, and responses print many ids.
    package var description: String {
        String(unsafeUninitializedCapacity: 36) { uuid.writeLowercased(into: $0) }
    }

    package init(from decoder: any Decoder) throws {
        uuid = try UUID(from: decoder)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension UUID {
    /// Writes the lower-case text form (36 bytes, as PostgreSQL prints it) at the start of
    /// `output`, which must hold 36 bytes; returns 36.
    package func writeLowercased(into output: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let hex: StaticString = "0123456789abcdef"
        return withUnsafeBytes(of: uuid) { bytes in
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

extension Identifier: PostgresEncodable, PostgresDecodable {
    package static var postgresType: PostgresType { .uuid }
    package static var postgresFormat: PostgresFormat { UUID.postgresFormat }

    package func encode(into buffer: inout PostgresEncodingBuffer) throws {
        uuid.encode(into: &buffer)
    }

    package init(from value: PostgresValue) throws {
        uuid = try UUID(from: value)
    }
}

package enum UserTag {}
package enum CommunityTag {}
package enum MemberTag {}
package enum InviteTag {}
package enum FamilyMemberTag {}
package enum AuditEntryTag {}
package enum DeviceTag {}

package typealias UserID = Identifier<UserTag>
package typealias CommunityID = Identifier<CommunityTag>
package typealias MemberID = Identifier<MemberTag>
package typealias InviteID = Identifier<InviteTag>
package typealias FamilyMemberID = Identifier<FamilyMemberTag>
package typealias AuditEntryID = Identifier<AuditEntryTag>
package typealias DeviceID = Identifier<DeviceTag>

extension Identifier: Comparable {
    /// Byte order, for stable sorting (cheaper than comparing `uuidString`s, which are formatted).
    package static func < (lhs: Identifier, rhs: Identifier) -> Bool {
        withUnsafeBytes(of: lhs.uuid.uuid) { left in
            withUnsafeBytes(of: rhs.uuid.uuid) { right in
                left.lexicographicallyPrecedes(right)
            }
        }
    }
}
