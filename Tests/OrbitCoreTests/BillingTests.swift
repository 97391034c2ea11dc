import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Billing: the subscription, set by operators only")
struct BillingTests {
    @Test("only an operator sets the subscription; a member's attempt is refused and audit-logged; orbit_app cannot make an operator")
    func subscription() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            let refused = await serviceError {
                try await services.communities.setSubscription(cast.community, status: .active, expiresAt: nil, as: cast.admin)
            }
            #expect(refused?.code == .forbidden)
            let outsider = await serviceError {
                try await services.communities.setSubscription(cast.community, status: .active, expiresAt: nil, as: cast.outsider)
            }
            #expect(outsider?.code == .notFound)
            let operatorID = try await services.users.create(email: "ops@example.com", displayName: "Ops").id
            _ = try await services.users.setOperator(operatorID, true, as: cast.admin)
            let changed = try await services.communities.setSubscription(cast.community, status: .pastDue, expiresAt: nil, as: operatorID)
            #expect(changed.subscriptionStatus == .pastDue)
            let actions = (try await services.communities.auditLog(cast.community, as: cast.admin)).items.map(\.action)
            #expect(actions.prefix(2) == ["subscription.changed", "subscription.changed.refused"])
            // A request can never make anyone an operator.
            let escalation = await #expect(throws: PostgresError.self) {
                try await database.withConnection { connection in
                    try await connection.asApp(cast.member.uuid) {
                        try await $0.query("UPDATE users SET is_operator = true WHERE id = \(cast.member)")
                    }
                }
            }
            #expect(escalation?.sqlState == "42501")
        }
    }
}
