package import Foundation
import OrbitPostgres

/// A paired child device's first step: the pairing code a parent got, used once.
package struct ChildPairing: Sendable, Codable, Equatable {
    package var deviceID: UUID
    package var familyMemberID: FamilyMemberID
    /// Eight characters to type on the child's device; valid once, until `expiresAt`.
    package var pairingCode: String
    package var expiresAt: Date

    enum CodingKeys: String, CodingKey {
        case deviceID = "device_id", familyMemberID = "family_member_id", pairingCode = "pairing_code", expiresAt = "expires_at"
    }
}

/// What a child's sign-in attempt came to (`orbit.child_sign_in`).
package enum ChildSignInOutcome: Sendable, Equatable {
    case signedIn(FamilyMemberID)
    case wrongPIN
    /// Five wrong PINs: locked until then (the parents were told).
    case locked(until: Date)
    /// The device token is unknown or revoked.
    case unknownDevice
    /// No PIN was set for the child yet.
    case noPIN
}

/// Children's sign-in (issue 23, item 3; docs/chores.md): a parent sets a 4–6 digit PIN (a
/// bcrypt hash in the database, never stored in clear) and pairs a device with a one-time code;
/// the device exchanges the code for its own token once, then signs the child in with the token
/// and the PIN. The PIN is checked against that device's child only, never looked up across
/// children; five wrong PINs lock the child's sign-in for 15 minutes and notify the parents.
extension FamilyService {
    static let pairingLifetime: TimeInterval = 15 * 60

    /// Sets or replaces `child`'s PIN (their parent, or an admin of `community`, where the parent
    /// is a member); clears a lockout.
    package func setPIN(_ pin: String, for child: FamilyMemberID, in community: CommunityID, as actor: UserID) async throws {
        guard (4...6).contains(pin.utf8.count), pin.utf8.allSatisfy(Validate.isDigit) else {
            throw ServiceError.invalidInput(field: "pin", reason: "must be 4 to 6 digits")
        }
        try await runner.asUser(actor) { connection in
            try await runner.requireMember(actor, of: community, on: connection)
            try await requireManage(child, in: community, on: connection)
            try await connection.query("SELECT orbit.set_child_pin(\(child), \(community), \(pin))")
            try await runner.audit("child.pin_set", by: actor, community: community, target: ("family_member", child.uuid), on: connection)
        }
    }

    /// Starts pairing a device for `child`: a one-time code, valid for 15 minutes.
    package func startPairing(for child: FamilyMemberID, in community: CommunityID, as actor: UserID) async throws -> ChildPairing {
        let code = Self.newPairingCode()
        let expires = runner.now().addingTimeInterval(Self.pairingLifetime)
        return try await runner.asUser(actor) { connection in
            try await runner.requireMember(actor, of: community, on: connection)
            try await requireManage(child, in: community, on: connection)
            let device: UUID = try await connection.query(
                "SELECT orbit.start_child_pairing(\(child), \(community), sha256(convert_to(\(code), 'UTF8')), \(expires)) AS id"
            ).single().decode("id")
            try await runner.audit("child.device_pairing", by: actor, community: community, target: ("family_member", child.uuid), on: connection)
            return ChildPairing(deviceID: device, familyMemberID: child, pairingCode: code, expiresAt: expires)
        }
    }

    /// Uses a pairing code (once): the device's token, which signs the child in with their PIN.
    package func finishPairing(code: String) async throws -> (child: FamilyMemberID, deviceToken: String) {
        let code = code.uppercased().filter { !$0.isWhitespace && $0 != "-" }
        guard code.utf8.count == 8, code.utf8.allSatisfy({ Self.codeAlphabet.utf8.contains($0) }) else {
            throw ServiceError.unauthenticated("That pairing code is not valid (8 letters and digits).")
        }
        let token = SessionService.newRefreshToken()
        let child = try await runner.asNobody { connection in
            try await connection.query(
                "SELECT orbit.finish_child_pairing(sha256(convert_to(\(code), 'UTF8')), sha256(convert_to(\(token), 'UTF8'))) AS child"
            ).single().decode("child", as: FamilyMemberID?.self)
        }
        guard let child else { throw ServiceError.unauthenticated("That pairing code is unknown, used or expired.") }
        return (child, token)
    }

    /// One sign-in attempt with a paired device's token and the child's PIN.
    package func signInChild(deviceToken: String, pin: String) async throws -> ChildSignInOutcome {
        guard SessionService.couldBeRefreshToken(deviceToken) else { return .unknownDevice }
        // Not a PIN's shape: a wrong PIN all the same (it counts), without asking bcrypt.
        let candidate = (4...6).contains(pin.utf8.count) && pin.utf8.allSatisfy(Validate.isDigit) ? pin : nil
        let row = try await runner.asNobody { connection in
            try await connection.query(
                "SELECT outcome, family_member_id, locked_until FROM orbit.child_sign_in(sha256(convert_to(\(deviceToken), 'UTF8')), \(candidate))"
            ).single()
        }
        let (outcome, child, until) = try row.decode((String, FamilyMemberID?, Date?).self)
        switch (outcome, child, until) {
        case ("signed_in", let child?, _): return .signedIn(child)
        case ("wrong_pin", _, _): return .wrongPIN
        case ("locked", _, let until?): return .locked(until: until)
        case ("no_pin", _, _): return .noPIN
        default: return .unknownDevice
        }
    }

    private func requireManage(_ child: FamilyMemberID, in community: CommunityID, on connection: PostgresConnection) async throws {
        let allowed: Bool = try await connection.query("SELECT orbit.can_manage_child(\(child), \(community)) AS allowed").single().decode("allowed")
        guard allowed else {
            throw ServiceError.forbidden(rule: "a child's parent, or an admin of a community the parent is in, manages the child's sign-in")
        }
    }

    /// Letters and digits that cannot be mistaken for one another (no 0/O, 1/I/L).
    static let codeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

    static func newPairingCode() -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(codeAlphabet)
        return String((0..<8).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }
}
