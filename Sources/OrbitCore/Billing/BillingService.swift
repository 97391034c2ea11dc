package import Foundation
import OrbitPostgres

/// What a provider event did (docs/money.md, "Subscriptions").
package enum BillingOutcome: String, Sendable, Codable {
    /// It changed the subscription and the community it names.
    case applied
    /// Received before: nothing was done again.
    case duplicate
    /// An event of the same subscription with a later `created` was applied first: kept as a
    /// record, changes nothing.
    case stale
    /// A type billing does not act on, or one that names nothing of ours: kept as a record.
    case ignored
}

/// What the webhook answers: the event and what became of it.
package struct BillingReceipt: Sendable, Codable, Equatable {
    package var eventID: String
    package var type: String
    package var outcome: BillingOutcome
    package var community: CommunityID?

    enum CodingKeys: String, CodingKey {
        case eventID = "event_id", type, outcome, community = "community_id"
    }
}

/// Subscriptions kept true by the payment provider (docs/money.md, "Subscriptions"): each
/// verified event is applied once, by its id, and a subscription follows the newest event by
/// the provider's own time, whatever order they arrive in. Runs as `orbit_admin`: the caller is
/// the provider, whose signature the adapter checked; nothing here is reachable as a user.
package struct BillingService: Sendable {
    let runner: RequestRunner

    package init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// What a Stripe event means for a subscription: its status and expiry, or nil when the
    /// event changes neither.
    struct SubscriptionChange {
        var subscription: String
        var community: CommunityID?
        var customer: String?
        var status: SubscriptionStatus
        /// nil: the expiry stays as it is.
        var expiresAt: Date?
    }

    /// The Stripe subscription statuses, as a community's: trialing counts as active, unpaid as
    /// past due; `incomplete` (the first payment not made yet) changes nothing.
    static func status(ofStripe status: String?) -> SubscriptionStatus? {
        switch status {
        case "active", "trialing": .active
        case "past_due", "unpaid": .pastDue
        case "canceled", "incomplete_expired": .canceled
        default: nil
        }
    }

    static func change(of event: StripeEvent) -> SubscriptionChange? {
        let object = event.object
        let community = (object.metadata["community_id"]).flatMap(CommunityID.init)
        switch event.type {
        case "checkout.session.completed":
            // A subscription's Checkout (the dues' payments are another mode), paid.
            guard object.mode == "subscription", let subscription = object.subscription,
                ["paid", "no_payment_required"].contains(object.paymentStatus ?? "")
            else { return nil }
            return SubscriptionChange(
                subscription: subscription, community: object.clientReferenceID.flatMap(CommunityID.init) ?? community,
                customer: object.customer, status: .active, expiresAt: nil)
        case "customer.subscription.created", "customer.subscription.updated":
            guard let subscription = object.id, let status = status(ofStripe: object.status) else { return nil }
            return SubscriptionChange(
                subscription: subscription, community: community, customer: object.customer, status: status, expiresAt: object.periodEnd)
        case "customer.subscription.deleted":
            guard let subscription = object.id else { return nil }
            return SubscriptionChange(
                subscription: subscription, community: community, customer: object.customer, status: .canceled,
                expiresAt: object.endedAt ?? object.periodEnd ?? event.created)
        case "invoice.paid":
            guard let subscription = object.subscription else { return nil }
            return SubscriptionChange(
                subscription: subscription, community: community, customer: object.customer, status: .active, expiresAt: object.periodEnd)
        case "invoice.payment_failed":
            guard let subscription = object.subscription else { return nil }
            return SubscriptionChange(subscription: subscription, community: community, customer: object.customer, status: .pastDue, expiresAt: nil)
        default:
            return nil
        }
    }

    /// Applies a verified Stripe event once: a second delivery of the same id is `duplicate`;
    /// an event older (by `created`) than one already applied to its subscription is `stale`.
    /// Two deliveries at once: the second waits for the first's row and finds it.
    package func applyStripe(_ event: StripeEvent) async throws -> BillingReceipt {
        try await runner.asOperator { connection in
            let change = Self.change(of: event)
            let inserted = try await connection.query(
                """
                INSERT INTO billing_events (provider, event_id, event_type, event_created, subscription_id, outcome)
                VALUES ('stripe', \(event.id), \(event.type), \(event.created), \(change?.subscription), 'ignored')
                ON CONFLICT (provider, event_id) DO NOTHING RETURNING id
                """)
            guard let row = inserted.first else {
                let earlier = try await connection.query(
                    "SELECT community_id FROM billing_events WHERE provider = 'stripe' AND event_id = \(event.id)")
                let community = try earlier.first?.decode("community_id", as: CommunityID?.self) ?? nil
                return BillingReceipt(eventID: event.id, type: event.type, outcome: .duplicate, community: community)
            }
            let record = try row.decode("id", as: UUID.self)
            guard let change, let community = try await Self.community(of: change, on: connection) else {
                return BillingReceipt(eventID: event.id, type: event.type, outcome: .ignored, community: nil)
            }
            // One statement decides the order, also against a concurrent event of the same
            // subscription: the row is written only if this event is not older than its last.
            let written = try await connection.query(
                """
                INSERT INTO billing_subscriptions AS s (provider, subscription_id, community_id, status, expires_at, last_event_created)
                VALUES ('stripe', \(change.subscription), \(community), \(change.status)::subscription_status, \(change.expiresAt), \(event.created))
                ON CONFLICT (provider, subscription_id) DO UPDATE
                    SET status = EXCLUDED.status, expires_at = COALESCE(EXCLUDED.expires_at, s.expires_at),
                        last_event_created = EXCLUDED.last_event_created, updated_at = now()
                    WHERE s.last_event_created <= EXCLUDED.last_event_created
                RETURNING status::text AS status, expires_at
                """)
            guard let state = written.first else {
                try await connection.query(
                    "UPDATE billing_events SET outcome = 'stale', community_id = \(community) WHERE id = \(record)")
                return BillingReceipt(eventID: event.id, type: event.type, outcome: .stale, community: community)
            }
            let status = try state.decode("status", as: SubscriptionStatus.self)
            let expiresAt = try state.decode("expires_at", as: Date?.self)
            try await connection.query(
                """
                UPDATE communities SET subscription_status = \(status)::subscription_status, subscription_expires_at = \(expiresAt),
                    stripe_subscription_id = \(change.subscription), stripe_customer_id = COALESCE(\(change.customer), stripe_customer_id)
                WHERE id = \(community)
                """)
            try await connection.query(
                "UPDATE billing_events SET outcome = 'applied', community_id = \(community) WHERE id = \(record)")
            return BillingReceipt(eventID: event.id, type: event.type, outcome: .applied, community: community)
        }
    }

    /// The community an event is for: the one our Checkout named (metadata or
    /// `client_reference_id`), else the one that already has the subscription or the customer.
    static func community(of change: SubscriptionChange, on connection: PostgresConnection) async throws -> CommunityID? {
        let rows = try await connection.query(
            """
            SELECT id FROM communities
            WHERE id = \(change.community)
               OR (\(change.community)::uuid IS NULL AND id = (
                    SELECT community_id FROM billing_subscriptions WHERE provider = 'stripe' AND subscription_id = \(change.subscription)))
               OR (\(change.community)::uuid IS NULL AND stripe_subscription_id = \(change.subscription))
            ORDER BY (id = \(change.community)) DESC NULLS LAST LIMIT 1
            """)
        return try rows.first?.decode("id", as: CommunityID.self)
    }
}
