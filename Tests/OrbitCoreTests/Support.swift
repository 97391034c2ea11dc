import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// A test database with the service layer on a pool of its own.
func withServices<Result>(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (OrbitServices, TestDatabase) async throws -> Result
) async throws -> Result {
    try await withTestDatabase(sourceLocation: sourceLocation) { database in
        let pool = database.makePool(maxConnections: 6)
        do {
            let result = try await body(OrbitServices(pool: pool), database)
            await pool.close()
            return result
        } catch {
            await pool.close()
            throw error
        }
    }
}

/// A community with an admin (its creator), a member, a non-member and a former member.
struct Cast {
    var admin: UserID
    var member: UserID
    var outsider: UserID
    var former: UserID
    var community: CommunityID

    static func make(_ services: OrbitServices) async throws -> Cast {
        let admin = try await services.users.create(email: "admin@example.com", displayName: "Ada Admin").id
        let member = try await services.users.create(email: "member@example.com", displayName: "Max Member").id
        let outsider = try await services.users.create(email: "outsider@example.com", displayName: "Olga Outsider").id
        let former = try await services.users.create(email: "former@example.com", displayName: "Fred Former").id
        let community = try await services.communities.create(name: "Tigers U10", as: admin).id
        _ = try await services.members.add(member, to: community, as: admin)
        _ = try await services.members.add(former, to: community, as: admin)
        try await services.members.leave(community, as: former)
        return Cast(admin: admin, member: member, outsider: outsider, former: former, community: community)
    }

    func user(_ role: String) -> UserID {
        switch role {
        case "admin": admin
        case "member": member
        case "outsider": outsider
        default: former
        }
    }
}

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

/// The error `body` throws, as a ServiceError (nil if it succeeds or throws something else).
func serviceError(_ body: () async throws -> some Any) async -> ServiceError? {
    do {
        _ = try await body()
        return nil
    } catch let error as ServiceError {
        return error
    } catch {
        Issue.record(error, "expected a ServiceError")
        return nil
    }
}

/// `text` (a decimal such as "12.50") in US dollars, as a person would type it.
func dollars(_ text: String) throws -> Money {
    try Money(parsing: text, currency: .usd)
}

/// A `YYYY-MM-DD` date.
func day(_ text: String) throws -> CivilDate {
    try CivilDate.parse(text, field: "date")
}
