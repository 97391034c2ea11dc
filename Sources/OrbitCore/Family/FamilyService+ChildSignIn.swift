package import Foundation
import OrbitPostgres

package enum ChildDeviceTag {}
/// A device paired to sign one child in, in one community (`child_devices`).
package typealias ChildDeviceID = Identifier<ChildDeviceTag>

/// A paired child device's first step: the pairing code a parent got, used once.
package struct ChildPairing: Sendable, Codable, Equatable {
    package var deviceID: ChildDeviceID
    package var familyMemberID: FamilyMemberID
    package var communityID: CommunityID
    /// Eight characters to type on the child's device; valid once, until `expiresAt`.
    package var pairingCode: String
    package var expiresAt: Date

    enum CodingKeys: String, CodingKey {
        case deviceID = "device_id", familyMemberID = "family_member_id", communityID = "community_id", pairingCode = "pairing_code"
        case expiresAt = "expires_at"
    }
}

/// A device paired (or being paired) for a child, as their parent sees it.
package struct ChildDevice: Sendable, Codable, Equatable {
    package enum Status: String, Sendable, Codable {
        /// A pairing code was issued and not used yet.
        case pending
        /// Signs the child in with their PIN.
        case paired
        /// The pairing code was not used in time, or the device went unused for
        /// `FamilyService.deviceIdleLimit`: it must be paired again.
        case expired
        /// A parent revoked it: it signs in no more, and its tokens reach nothing.
        case revoked
    }

    package var id: ChildDeviceID
    package var familyMemberID: FamilyMemberID
    package var communityID: CommunityID
    package var status: Status
    package var createdBy: UserID?
    package var createdAt: Date
    package var pairedAt: Date?
    package var lastUsedAt: Date?
    /// When a pending code expires, or when a paired device expires unless it signs in before.
    package var expiresAt: Date
    package var revokedAt: Date?
    package var revokedBy: UserID?

    enum CodingKeys: String, CodingKey {
        case id, familyMemberID = "family_member_id", communityID = "community_id", status, createdBy = "created_by", createdAt = "created_at"
        case pairedAt = "paired_at", lastUsedAt = "last_used_at", expiresAt = "expires_at", revokedAt = "revoked_at", revokedBy = "revoked_by"
    }

    static let columns =
        "id, family_member_id, community_id, status, created_by, created_at, paired_at, last_used_at, expires_at, revoked_at, revoked_by"

    init(row: PostgresRow) throws {
        let status: String
        (id, familyMemberID, communityID, status, createdBy, createdAt, pairedAt, lastUsedAt, expiresAt, revokedAt, revokedBy) = try row.decode(
            (ChildDeviceID, FamilyMemberID, CommunityID, String, UserID?, Date, Date?, Date?, Date, Date?, UserID?).self)
        guard let known = Status(rawValue: status) else { throw ServiceError.changedMeanwhile }
        self.status = known
    }
}

/// What a child's sign-in attempt came to (`orbit.child_sign_in`).
package enum ChildSignInOutcome: Sendable, Equatable {
    /// Signed in on that device: the session a child's token names, and the one community it reaches.
    case signedIn(ChildSession, community: CommunityID)
    case wrongPIN
    /// Five wrong PINs in a row: locked until then (the child's parent was told). Each lockout
    /// in a row lasts longer: 15 minutes, 1 hour, then 24 hours.
    case locked(until: Date)
    /// The device token is unknown or revoked.
    case unknownDevice
    /// The device went unused for `FamilyService.deviceIdleLimit`: a parent pairs it again.
    case deviceExpired
    /// No PIN was set for the child yet.
    case noPIN
}

/// Children's sign-in (issue 23, item 3; issue 37, items 1–2; docs/chores.md, docs/security.md).
/// A child belongs to their guardian, the user whose family member they are: only the guardian
/// sets the child's 4–6 digit PIN (a bcrypt hash in the database, never stored in clear), pairs
/// a device for one of their communities with a one-time code, lists and revokes the devices. The
/// device exchanges the code for its own token once, then signs the child in with the token and
/// the PIN; the child's access token names the device, and reaches that device's community only.
/// The PIN is checked against that device's child only, never looked up across children; five
/// wrong PINs lock the child's sign-in (15 minutes, then 1 hour, then 24 hours for lockouts in a
/// row) and notify the guardian. A device unused for 30 days must be paired again.
extension FamilyService {
    static let pairingLifetime: TimeInterval = 15 * 60
    /// How long a paired device may go without signing its child in (`orbit.child_device_idle_limit()`).
    package static let deviceIdleLimit: TimeInterval = 30 * 24 * 60 * 60

    static let guardianRule = "a child's sign-in is managed by the child's own guardians only"

    /// Sets or replaces `child`'s PIN (their parent, a member of `community`); clears a lockout.
    package func setPIN(_ pin: String, for child: FamilyMemberID, in community: CommunityID, as actor: UserID) async throws {
        guard (4...6).contains(pin.utf8.count), pin.utf8.allSatisfy(Validate.isDigit) else {
            throw ServiceError.invalidInput(field: "pin", reason: "must be 4 to 6 digits")
        }
        try await asGuardian(actor, of: child, in: community, action: "child.pin_set") { connection in
            try await connection.query("SELECT orbit.set_child_pin(\(child), \(community), \(pin))")
            try await runner.audit("child.pin_set", by: actor, community: community, target: ("family_member", child.uuid), on: connection)
        }
    }

    /// Starts pairing a device for `child` in `community` (the one community its token reaches):
    /// a one-time code, valid for 15 minutes.
    package func startPairing(for child: FamilyMemberID, in community: CommunityID, as actor: UserID) async throws -> ChildPairing {
        let code = Self.newPairingCode()
        let expires = runner.now().addingTimeInterval(Self.pairingLifetime)
        return try await asGuardian(actor, of: child, in: community, action: "child.device_pairing") { connection in
            let device: ChildDeviceID = try await connection.query(
                "SELECT orbit.start_child_pairing(\(child), \(community), sha256(convert_to(\(code), 'UTF8')), \(expires)) AS id"
            ).single().decode("id")
            try await runner.audit("child.device_pairing", by: actor, community: community, target: ("family_member", child.uuid), on: connection)
            return ChildPairing(deviceID: device, familyMemberID: child, communityID: community, pairingCode: code, expiresAt: expires)
        }
    }

    /// The devices paired (or being paired) for `child` in `community`, newest first.
    package func devices(of child: FamilyMemberID, in community: CommunityID, as actor: UserID) async throws -> [ChildDevice] {
        try await asGuardian(actor, of: child, in: community, action: nil) { connection in
            try await connection.query("SELECT \(unescaped: ChildDevice.columns) FROM orbit.child_devices_of(\(child), \(community))")
                .map(ChildDevice.init(row:))
        }
    }

    /// Revokes one of `child`'s devices in `community`, or all of them when `device` is nil (and
    /// any pairing code not used yet). A revoked device signs in no more, and the child's tokens
    /// issued on it reach nothing from this moment. Revoking a revoked device again changes
    /// nothing; an unknown device is `notFound`.
    package func revokeDevices(of child: FamilyMemberID, in community: CommunityID, device: ChildDeviceID? = nil, as actor: UserID) async throws {
        try await asGuardian(actor, of: child, in: community, action: "child.device_revoked") { connection in
            let named: Int32 = try await connection.query(
                "SELECT orbit.revoke_child_devices(\(child), \(community), \(device)) AS named"
            ).single().decode("named")
            if let device, named == 0 { throw ServiceError.notFound("Device \(device)") }
            try await runner.audit(
                "child.device_revoked", by: actor, community: community, target: ("family_member", child.uuid),
                metadata: ["device_id": device?.description ?? "all"], on: connection)
        }
    }

    /// Uses a pairing code (once): the device's token, which signs the child in with their PIN.
    package func finishPairing(code: String) async throws -> (child: FamilyMemberID, deviceToken: String) {
        let code = code.uppercased().filter { !$0.isWhitespace && $0 != "-" }
        guard code.utf8.count == 8, code.utf8.allSatisfy({ Self.codeAlphabet.utf8.contains($0) }) else {
            throw ServiceError.unauthenticated("That pairing code is not valid (8 letters and digits).")
        }
        let token = SecretToken.random()
        let child = try await runner.asNobody { connection in
            try await connection.query(
                "SELECT orbit.finish_child_pairing(sha256(convert_to(\(code), 'UTF8')), sha256(convert_to(\(token), 'UTF8'))) AS child"
            ).single().decode("child", as: FamilyMemberID?.self)
        }
        guard let child else { throw ServiceError.unauthenticated("That pairing code is unknown, used, expired or revoked.") }
        return (child, token)
    }

    /// One sign-in attempt with a paired device's token and the child's PIN.
    package func signInChild(deviceToken: String, pin: String) async throws -> ChildSignInOutcome {
        guard SecretToken.hasShape(deviceToken) else { return .unknownDevice }
        // Not a PIN's shape: a wrong PIN all the same (it counts), without asking bcrypt.
        let candidate = (4...6).contains(pin.utf8.count) && pin.utf8.allSatisfy(Validate.isDigit) ? pin : nil
        let row = try await runner.asNobody { connection in
            try await connection.query(
                """
                SELECT outcome, family_member_id, device_id, community_id, locked_until
                FROM orbit.child_sign_in(sha256(convert_to(\(deviceToken), 'UTF8')), \(candidate))
                """
            ).single()
        }
        let (outcome, child, device, community, until) = try row.decode((String, FamilyMemberID?, ChildDeviceID?, CommunityID?, Date?).self)
        switch outcome {
        case "signed_in":
            guard let child, let device, let community else { return .unknownDevice }
            return .signedIn(ChildSession(child: child, device: device), community: community)
        case "wrong_pin": return .wrongPIN
        case "locked": return until.map { .locked(until: $0) } ?? .wrongPIN
        case "no_pin": return .noPIN
        case "device_expired": return .deviceExpired
        default: return .unknownDevice
        }
    }

    /// Runs `body` for `actor` when they are `child`'s guardian and a member of `community`; a
    /// member who is not is refused (`forbidden`, audited as `<action>.refused` when `action` is
    /// given), a non-member gets `notFound`.
    private func asGuardian<Result: Sendable>(
        _ actor: UserID, of child: FamilyMemberID, in community: CommunityID, action: String?,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        func checked(_ connection: PostgresConnection) async throws -> Result {
            try await runner.requireMember(actor, of: community, on: connection)
            let allowed: Bool = try await connection.query("SELECT orbit.can_manage_child(\(child), \(community)) AS allowed").single()
                .decode("allowed")
            guard allowed else { throw ServiceError.forbidden(rule: Self.guardianRule) }
            return try await body(connection)
        }
        guard let action else { return try await runner.asUser(actor, checked) }
        return try await runner.asUser(
            actor, auditingRefusal: .init(action: action, community: community, target: ("family_member", child.uuid)), checked)
    }

    /// Letters and digits that cannot be mistaken for one another (no 0/O, 1/I/L).
    static let codeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

    static func newPairingCode() -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(codeAlphabet)
        return String((0..<8).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }
}
