import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

extension OrbitServices {
    /// `child` signed in on a device their guardian just paired for `community`, as the app would:
    /// a PIN, a pairing code, the device's token, then the PIN on that device.
    func signedInChild(_ child: FamilyMemberID, in community: CommunityID, guardian: UserID, pin: String = "8642") async throws -> Principal {
        try await family.setPIN(pin, for: child, in: community, as: guardian)
        let pairing = try await family.startPairing(for: child, in: community, as: guardian)
        let device = try await family.finishPairing(code: pairing.pairingCode)
        let outcome = try await family.signInChild(deviceToken: device.deviceToken, pin: pin)
        guard case .signedIn(let session, community) = outcome else {
            throw ServiceError.conflict("the child did not sign in: \(outcome)")
        }
        return .child(session)
    }
}
