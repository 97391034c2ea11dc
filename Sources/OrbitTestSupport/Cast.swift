package import Foundation
package import OrbitCore
import OrbitPostgres
package import Testing

/// A test database with the service layer on a pool of its own, of `connections` connections
/// (one: every call runs on the same backend, for tests that read its statements or statistics).
package func withServices<Result>(
    connections: Int = 6,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (OrbitServices, TestDatabase) async throws -> Result
) async throws -> Result {
    try await withTestDatabase(sourceLocation: sourceLocation) { database in
        let pool = database.makePool(maxConnections: connections)
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

/// `withServices` whose services keep media in a fresh folder of their own, removed afterwards.
package func withMediaServices<Result>(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: (OrbitServices, TestDatabase) async throws -> Result
) async throws -> Result {
    let folder = FileManager.default.temporaryDirectory.appending(path: "orbit-media-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    return try await withServices(sourceLocation: sourceLocation) { services, database in
        var services = services
        services.storage = LocalDirectoryStorage(root: folder)
        return try await body(services, database)
    }
}

/// The people of most tests, made through the services as the app would: a community ("Tigers
/// U10") with an admin (its creator) and a member, a non-member, and a former member (who joined
/// and left). The API's tests sign them in (`APICast`); the schema's tests, which work below the
/// services, seed rows of their own (`Seed`).
package struct Cast: Sendable {
    package var admin: UserID
    package var member: UserID
    package var outsider: UserID
    package var former: UserID
    package var community: CommunityID

    package static func make(_ services: OrbitServices) async throws -> Cast {
        let people = try await people(services, former: true)
        guard let former = people.former else { throw ServiceError.conflict("the former member was not made") }
        return Cast(admin: people.admin, member: people.member, outsider: people.outsider, former: former, community: people.community)
    }

    /// The cast's people and community, made in one order for every suite: the admin, the member,
    /// the outsider (and the former member), then the community with the member (and the former
    /// member, who leaves). The API's tests take them without a former member (`APICast`).
    package static func people(_ services: OrbitServices, former withFormer: Bool) async throws -> (
        admin: UserID, member: UserID, outsider: UserID, former: UserID?, community: CommunityID
    ) {
        let admin = try await services.users.create(email: "admin@example.com", displayName: "Ada Admin").id
        let member = try await services.users.create(email: "member@example.com", displayName: "Max Member").id
        let outsider = try await services.users.create(email: "outsider@example.com", displayName: "Olga Outsider").id
        let former = withFormer ? try await services.users.create(email: "former@example.com", displayName: "Fred Former").id : nil
        let community = try await services.communities.create(name: "Tigers U10", as: admin).id
        _ = try await services.members.add(member, to: community, as: admin)
        if let former {
            _ = try await services.members.add(former, to: community, as: admin)
            try await services.members.leave(community, as: former)
        }
        return (admin, member, outsider, former, community)
    }

    /// One of the cast by its part: "admin", "member", "outsider", anything else the former member.
    package func user(_ role: String) -> UserID {
        switch role {
        case "admin": admin
        case "member": member
        case "outsider": outsider
        default: former
        }
    }
}

/// `text` (a decimal such as "12.50") in US dollars, as a person would type it.
package func dollars(_ text: String) throws -> Money {
    try Money(parsing: text, currency: .usd)
}

/// A `YYYY-MM-DD` date.
package func day(_ text: String) throws -> CivilDate {
    try CivilDate.parse(text, field: "date")
}

/// The error `body` throws, as a ServiceError (nil if it succeeds or throws something else).
package func serviceError(_ body: () async throws -> some Any) async -> ServiceError? {
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

extension Cast {
    /// A household: two parents (admins), a grown-up member, two children of `mum`, and a
    /// neighbouring family with its own child.
    package struct Household: Sendable {
        package var mum: UserID
        package var dad: UserID
        package var lodger: UserID
        package var home: CommunityID
        package var mia: FamilyMemberID
        package var leo: FamilyMemberID
        package var neighbour: UserID
        package var next: CommunityID
        package var nina: FamilyMemberID

        package static func make(_ services: OrbitServices) async throws -> Household {
            let mum = try await services.users.create(email: "mum@example.com", displayName: "Mum").id
            let dad = try await services.users.create(email: "dad@example.com", displayName: "Dad").id
            let lodger = try await services.users.create(email: "lodger@example.com", displayName: "Lou").id
            let neighbour = try await services.users.create(email: "neighbour@example.com", displayName: "Ned").id
            let home = try await services.communities.create(
                name: "The Parkers", settings: CommunitySettings(timezone: "Europe/Berlin"), as: mum
            ).id
            _ = try await services.members.add(dad, to: home, role: .admin, as: mum)
            _ = try await services.members.add(lodger, to: home, as: mum)
            let mia = try await services.family.add(name: "Mia", as: mum).id
            let leo = try await services.family.add(name: "Leo", as: mum).id
            let next = try await services.communities.create(name: "Next door", as: neighbour).id
            let nina = try await services.family.add(name: "Nina", as: neighbour).id
            return Household(mum: mum, dad: dad, lodger: lodger, home: home, mia: mia, leo: leo, neighbour: neighbour, next: next, nina: nina)
        }
    }
}
