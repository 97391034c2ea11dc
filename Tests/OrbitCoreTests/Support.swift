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

/// What the money suites share (`ExpenseTests`, `DuesTests`, `FamilyTests`): a person's balance in
/// the cast's community, and an away game with its answers.
protocol MoneyScenarios {}

extension MoneyScenarios {
    func balance(_ services: OrbitServices, _ cast: Cast, _ user: UserID) async throws -> Int64 {
        try await services.settlements.balances(in: cast.community, as: cast.member).first { $0.userID == user }?.balance ?? 0
    }

    /// An away game tomorrow: the admin comes with a plus-one (2 heads), the member with Tim (1 + 1,
    /// for Tim), a third member says no.
    static func awayGame(_ services: OrbitServices, _ cast: Cast) async throws -> (third: UserID, tim: FamilyMember, game: Event) {
        let third = try await services.users.create(email: "t@example.com", displayName: "Third").id
        _ = try await services.members.add(third, to: cast.community, as: cast.admin)
        let tim = try await services.family.add(name: "Tim", as: cast.member)
        let game = try await services.events.create(
            in: cast.community, EventDraft(title: "Away game", startsAt: Date().addingTimeInterval(86_400)), as: cast.admin)
        _ = try await services.events.rsvp(game.id, status: .yes, plusOnes: 1, as: cast.admin)  // 2 heads
        _ = try await services.events.rsvp(game.id, status: .yes, as: cast.member)  // 1
        _ = try await services.events.rsvp(game.id, status: .yes, familyMember: tim.id, as: cast.member)  // 1, for Tim
        _ = try await services.events.rsvp(game.id, status: .no, as: third)
        return (third, tim, game)
    }
}
