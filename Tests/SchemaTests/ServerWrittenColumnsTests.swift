import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

/// What only the server writes (docs/security.md, "What only the server writes"): a community's
/// subscription and its provider ids, and the dues payments a provider recorded. orbit_app, the
/// role of every user's request, is refused each write, with an error; orbit_admin, the role of
/// the webhooks and the operators, is not.
@Suite("What only the server writes, as orbit_app")
struct ServerWrittenColumnsTests {
    static let billingColumns = ["subscription_status", "subscription_expires_at", "stripe_customer_id", "stripe_subscription_id"]

    @Test("orbit_app has no INSERT or UPDATE right on a community's subscription and provider ids")
    func columnRights() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                for column in Self.billingColumns {
                    for right in ["INSERT", "UPDATE"] {
                        let granted = try await connection.query(
                            "SELECT has_column_privilege('orbit_app', 'communities', \(column), \(right)) AS granted"
                        ).single().decode("granted", as: Bool.self)
                        #expect(!granted, "orbit_app has \(right) on communities.\(column)")
                    }
                }
            }
        }
    }

    static let foundings: [(String, @Sendable (UUID) -> PostgresQuery)] = [
        ("an active subscription", { user in "INSERT INTO communities (name, created_by, subscription_status) VALUES ('Mine', \(user), 'active')" }),
        (
            "an expiry in 2099",
            { user in "INSERT INTO communities (name, created_by, subscription_expires_at) VALUES ('Mine', \(user), '2099-01-01Z')" }
        ),
        ("a Stripe customer", { user in "INSERT INTO communities (name, created_by, stripe_customer_id) VALUES ('Mine', \(user), 'cus_fake')" }),
        (
            "a Stripe subscription",
            { user in "INSERT INTO communities (name, created_by, stripe_subscription_id) VALUES ('Mine', \(user), 'sub_fake')" }
        ),
    ]

    @Test("a member cannot found a community with a subscription or provider ids", arguments: foundings.map(\.0))
    func founding(name: String) async throws {
        let statement = try #require(Self.foundings.first { $0.0 == name }?.1)
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                let error = await #expect(throws: PostgresError.self) {
                    try await connection.asApp(world.id(.a2)) { try await $0.query(statement(world.id(.a2))) }
                }
                #expect(error?.isInsufficientPrivilege == true, "\(String(describing: error))")
                // The plain founding still works.
                try await connection.asApp(world.id(.a2)) { connection in
                    try await connection.query("INSERT INTO communities (name, created_by) VALUES ('Mine', \(world.id(.a2)))")
                }
            }
        }
    }

    static let changes: [String: String] = [
        "subscription_status": "subscription_status = 'active'",
        "subscription_expires_at": "subscription_expires_at = '2099-01-01Z'",
        "stripe_customer_id": "stripe_customer_id = 'cus_fake'",
        "stripe_subscription_id": "stripe_subscription_id = 'sub_fake'",
    ]

    @Test("an admin cannot change their community's subscription or provider ids", arguments: billingColumns)
    func adminChange(column: String) async throws {
        let assignment = try #require(Self.changes[column])
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                let error = await #expect(throws: PostgresError.self) {
                    try await connection.asApp(world.id(.a)) { connection in
                        try await connection.query("UPDATE communities SET \(unescaped: assignment) WHERE id = \(world.communityA)")
                    }
                }
                #expect(error?.isInsufficientPrivilege == true, "\(String(describing: error))")
                let row = try await connection.query(
                    "SELECT subscription_status::text AS status, stripe_customer_id FROM communities WHERE id = \(world.communityA)"
                ).single()
                #expect(try row.decode("status", as: String.self) == "free")
                #expect(try row.decode("stripe_customer_id", as: String?.self) == nil)
            }
        }
    }

    static let paymentChanges = [
        "UPDATE dues_payments SET amount_paid = 1",
        "UPDATE dues_payments SET payment_method = 'cash'",
        "UPDATE dues_payments SET user_id = recorded_by",
        "UPDATE dues_payments SET paid_at = paid_at - interval '1 year'",
        "UPDATE dues_payments SET notes = 'cash, really'",
        "DELETE FROM dues_payments",
    ]

    @Test("an admin cannot change or remove a payment the provider recorded; the server's role can", arguments: paymentChanges)
    func providerPayment(change: String) async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                // A card payment of the member's, as the webhook records it.
                try await connection.query(
                    """
                    INSERT INTO dues_payments (dues_id, user_id, amount_paid, recorded_by, payment_method, provider_payment_id)
                    SELECT dues_id, user_id, 5000, user_id, 'stripe', 'pi_world' FROM dues_payments WHERE community_id = \(world.communityA)
                    """)
                let error = await #expect(throws: PostgresError.self) {
                    try await connection.asApp(world.id(.a)) { connection in
                        try await connection.query("\(unescaped: change) WHERE provider_payment_id = 'pi_world'")
                    }
                }
                #expect(error?.isInsufficientPrivilege == true, "\(String(describing: error))")
                let kept = try await connection.query(
                    "SELECT amount_paid, payment_method FROM dues_payments WHERE provider_payment_id = 'pi_world'"
                ).single()
                #expect(try kept.decode("amount_paid", as: Int32.self) == 5000)
                #expect(try kept.decode("payment_method", as: String?.self) == "stripe")

                // The webhook's role (orbit_admin) changes it, as a refund does.
                try await connection.withTransaction(TransactionOptions(localSettings: ["role": "orbit_admin"])) { connection in
                    try await connection.query("UPDATE dues_payments SET amount_paid = 4000 WHERE provider_payment_id = 'pi_world'")
                }
                // A payment a treasurer recorded by hand stays theirs to correct.
                let corrected = try await connection.asApp(world.id(.a)) { connection in
                    try await connection.query(
                        "\(unescaped: change) WHERE community_id = \(world.communityA) AND provider_payment_id IS NULL"
                    ).affectedRows
                }
                #expect(corrected == 1)
            }
        }
    }
}
