package import Foundation
package import OrbitCore
import OrbitPostgres
package import Testing

/// A test database with the service layer on a pool of its own.
package func withServices<Result>(
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
