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
    /// The rules refused what it asks (a dues payment beyond what is still owed): kept as a
    /// record with why (`detail`); the webhook gives the money back (`BillingReceipt.refund`).
    case refused
}

/// What the webhook answers: the event and what became of it.
package struct BillingReceipt: Sendable, Codable, Equatable {
    package var eventID: String
    package var type: String
    package var outcome: BillingOutcome
    package var community: CommunityID?
    /// Why it was refused.
    package var detail: String?
    /// The provider payment to give back: a payment the rules refused to record (also when its
    /// event comes again). Not part of the answer.
    package var refund: String? = nil

    enum CodingKeys: String, CodingKey {
        case eventID = "event_id", type, outcome, community = "community_id", detail
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

    /// A checkout for community `id`'s subscription at the operator's price (its creator only:
    /// 002 gives the subscription to the creator). Refused while the subscription is active: it
    /// is then changed or cancelled with the provider. The provider is called after the checks,
    /// outside any transaction; the session names the community (`client_reference_id`,
    /// metadata, the subscription's metadata), so its events find it.
    package func subscriptionCheckout(
        for id: CommunityID, price: String, as actor: UserID, provider: any PaymentProvider, settings: CheckoutSettings
    ) async throws -> CheckoutSession {
        try await requireSubscribable(id, by: actor)
        let customer = try await runner.asOperator { connection in
            try await connection.query("SELECT stripe_customer_id FROM communities WHERE id = \(id)").first?
                .decode("stripe_customer_id", as: String?.self) ?? nil
        }
        // The same community and price make the same key (the client adds the request's
        // digest): a retry gets the first session, open for its 24 hours.
        return try await provider.createCheckoutSession(
            CheckoutRequest(
                mode: .subscription(price: price),
                successURL: settings.returnURL("success", for: "community", id: id.description),
                cancelURL: settings.returnURL("cancel", for: "community", id: id.description),
                clientReferenceID: id.description, metadata: ["community_id": id.description, "user_id": actor.description],
                customer: customer, idempotencyKey: "orbit-subscription-\(id)-\(price)"))
    }

    /// Community `id` may start a subscription by `actor`: they are its creator (002 gives the
    /// subscription to the creator), and it has no active one (that is changed or cancelled
    /// where it was bought).
    func requireSubscribable(_ id: CommunityID, by actor: UserID) async throws {
        let community = try await CommunityService(runner).get(id, as: actor)
        guard community.createdBy == actor else {
            throw ServiceError.forbidden(rule: "only the community's creator manages its subscription")
        }
        guard community.subscriptionStatus != .active else {
            throw ServiceError.conflict(field: "subscription_status", reason: "is active: change or cancel it where it was bought")
        }
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
        /// What the event says was paid (an invoice's `amount_paid`, a Checkout's
        /// `amount_total`), in ISO 4217 minor units: for the audit log.
        var paid: Money? = nil
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
                customer: object.customer, status: .active, expiresAt: nil, paid: paid(object.amount, object.currency))
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
                subscription: subscription, community: community, customer: object.customer, status: .active, expiresAt: object.periodEnd,
                paid: paid(object.amountPaid, object.currency))
        case "invoice.payment_failed":
            guard let subscription = object.subscription else { return nil }
            return SubscriptionChange(subscription: subscription, community: community, customer: object.customer, status: .pastDue, expiresAt: nil)
        default:
            return nil
        }
    }

    /// A Stripe amount as money, in ISO 4217 minor units (`StripeUnits`); nil when there is none.
    static func paid(_ amount: Int64?, _ currency: String?) -> Money? {
        guard let amount, let currency else { return nil }
        return StripeUnits.money(stripeAmount: amount, currency: currency)
    }

    /// Applies a verified Stripe event once: a second delivery of the same id is `duplicate`;
    /// an event older (by `created`) than one already applied to its subscription is `stale`.
    /// Two deliveries at once: the second waits for the first's row and finds it.
    package func applyStripe(_ event: StripeEvent) async throws -> BillingReceipt {
        try await runner.asOperator { connection in
            let change = Self.change(of: event)
            let received = Received(
                provider: .stripe, eventID: event.id, type: event.type, created: event.created, subscription: change?.subscription,
                payment: event.object.paymentIntent)
            guard let record = try await Self.record(received, on: connection) else {
                return try await Self.duplicate(received, on: connection)
            }
            if let online = try await Self.applyToDues(event, runner: runner, on: connection) {
                let (outcome, community, detail): (BillingOutcome, CommunityID?, String?) =
                    switch online {
                    case .recorded(let community): (.applied, community, nil)
                    case .alreadyRecorded(let community): (.duplicate, community, nil)
                    case .refused(let community, let reason): (.refused, community, reason)
                    case .unchanged(let community, let reason): (community == nil ? .ignored : .stale, community, reason)
                    }
                var receipt = try await Self.finish(record, received, outcome, community: community, detail: detail, on: connection)
                if outcome == .refused { receipt.refund = received.payment }
                return receipt
            }
            return try await Self.apply(change, received, record: record, on: connection)
        }
    }

    /// The payment providers, as `billing_events.provider` names them.
    enum Provider: String {
        case stripe
        case appStore = "app_store"
    }

    /// A verified event as billing records it.
    struct Received {
        var provider: Provider
        var eventID: String
        var type: String
        /// The provider's time of it: what orders the events of one subscription.
        var created: Date
        var subscription: String?
        /// The provider's payment the event is about (Stripe's PaymentIntent).
        var payment: String? = nil
    }

    /// Records the event's receipt, once: nil when it was received before.
    static func record(_ event: Received, on connection: PostgresConnection) async throws -> UUID? {
        try await connection.query(
            """
            INSERT INTO billing_events (provider, event_id, event_type, event_created, subscription_id, payment_id, outcome)
            VALUES (\(event.provider.rawValue), \(event.eventID), \(event.type), \(event.created), \(event.subscription), \(event.payment),
                'ignored')
            ON CONFLICT (provider, event_id) DO NOTHING RETURNING id
            """
        ).first?.decode("id", as: UUID.self)
    }

    /// The answer to an event received before: `duplicate`, with the community it was for (and,
    /// if it was a payment refused, that payment again, to give back: the refund may have failed).
    static func duplicate(_ event: Received, on connection: PostgresConnection) async throws -> BillingReceipt {
        let earlier = try await connection.query(
            """
            SELECT community_id, outcome, payment_id FROM billing_events
            WHERE provider = \(event.provider.rawValue) AND event_id = \(event.eventID)
            """
        ).first
        let community = try earlier?.decode("community_id", as: CommunityID?.self) ?? nil
        var receipt = BillingReceipt(eventID: event.eventID, type: event.type, outcome: .duplicate, community: community, detail: nil)
        if try earlier?.decode("outcome", as: String.self) == BillingOutcome.refused.rawValue {
            receipt.refund = try earlier?.decode("payment_id", as: String?.self) ?? nil
        }
        return receipt
    }

    /// Records what became of event `record`, and answers it.
    static func finish(
        _ record: UUID, _ event: Received, _ outcome: BillingOutcome, community: CommunityID?, detail: String? = nil,
        on connection: PostgresConnection
    ) async throws -> BillingReceipt {
        try await connection.query(
            """
            UPDATE billing_events SET outcome = \(outcome.rawValue), community_id = \(community), detail = \(detail)
            WHERE id = \(record)
            """)
        return BillingReceipt(eventID: event.eventID, type: event.type, outcome: outcome, community: community, detail: detail)
    }

    /// Applies `change` to its subscription and community unless an event of the subscription
    /// newer than this one was applied before (`stale`); nil or naming nothing of ours: `ignored`.
    static func apply(_ change: SubscriptionChange?, _ event: Received, record: UUID, on connection: PostgresConnection) async throws
        -> BillingReceipt
    {
        guard let change, let community = try await Self.community(of: change, provider: event.provider, on: connection) else {
            return BillingReceipt(eventID: event.eventID, type: event.type, outcome: .ignored, community: nil, detail: nil)
        }
        // The community first: two events of its subscriptions at once take turns, so that each
        // sums up the others' rows as written.
        let before = try await connection.query(
            "SELECT subscription_status::text AS status FROM communities WHERE id = \(community) FOR UPDATE"
        ).single().decode("status", as: String.self)
        // One statement decides the order, also against a concurrent event of the same
        // subscription: the row is written only if this event is not older than its last.
        let written = try await connection.query(
            """
            INSERT INTO billing_subscriptions AS s (provider, subscription_id, community_id, status, expires_at, last_event_created)
            VALUES (\(event.provider.rawValue), \(change.subscription), \(community), \(change.status)::subscription_status, \(change.expiresAt),
                \(event.created))
            ON CONFLICT (provider, subscription_id) DO UPDATE
                SET status = EXCLUDED.status, expires_at = COALESCE(EXCLUDED.expires_at, s.expires_at),
                    last_event_created = EXCLUDED.last_event_created, updated_at = now()
                WHERE s.last_event_created <= EXCLUDED.last_event_created
            RETURNING status::text AS status, expires_at
            """)
        guard written.first != nil else {
            return try await finish(record, event, .stale, community: community, on: connection)
        }
        // The community's status is the best of all its subscriptions (active, then past due,
        // then canceled; the latest expiry among them), whichever provider's event came last: a
        // Stripe subscription that ends does not cancel an App Store one that runs.
        try await connection.query(
            """
            UPDATE communities c SET subscription_status = best.status, subscription_expires_at = best.expires_at
            FROM (SELECT status, expires_at FROM billing_subscriptions WHERE community_id = \(community)
                  ORDER BY CASE status WHEN 'active' THEN 0 WHEN 'past_due' THEN 1 ELSE 2 END, expires_at DESC NULLS LAST,
                      last_event_created DESC
                  LIMIT 1) best
            WHERE c.id = \(community)
            """)
        if event.provider == .stripe {
            try await connection.query(
                """
                UPDATE communities SET stripe_subscription_id = \(change.subscription),
                    stripe_customer_id = COALESCE(\(change.customer), stripe_customer_id)
                WHERE id = \(community)
                """)
        }
        // The audit log says what the provider changed (docs/security.md): in the community's
        // log, under its creator (the subscription is theirs), with the event that did it.
        var metadata = [
            "source": event.provider.rawValue, "event_id": event.eventID, "event_type": event.type, "subscription_id": change.subscription,
            "from": before, "status": change.status.rawValue,
        ]
        if let expires = change.expiresAt { metadata["expires_at"] = ISO8601DateFormatter().string(from: expires) }
        if let paid = change.paid { metadata["amount_paid"] = paid.description }
        try await connection.query(
            """
            INSERT INTO audit_log (community_id, user_id, action, target_type, target_id, metadata)
            SELECT c.id, c.created_by, 'subscription.changed', 'community', c.id,
                jsonb_set(\(try PostgresJSON(encoding: metadata)), '{to}', to_jsonb(c.subscription_status::text))
            FROM communities c WHERE c.id = \(community)
            """)
        return try await finish(record, event, .applied, community: community, on: connection)
    }

    /// A dues payment's event (docs/money.md, "Dues paid online"): a paid Checkout Session in
    /// `payment` mode that our checkout made (its metadata names the dues and the member) is
    /// recorded; a refunded charge reverses what its PaymentIntent recorded. Nil: not a dues
    /// payment's event.
    static func applyToDues(_ event: StripeEvent, runner: RequestRunner, on connection: PostgresConnection) async throws
        -> DuesService.OnlineOutcome?
    {
        let object = event.object
        switch event.type {
        case "checkout.session.completed", "checkout.session.async_payment_succeeded":
            guard object.mode == "payment", object.paymentStatus == "paid", let dues = object.metadata["dues_id"].flatMap(DuesID.init),
                let user = object.metadata["user_id"].flatMap(UserID.init), let intent = object.paymentIntent,
                let amount = object.amount, let currency = object.currency
            else { return nil }
            // Stripe's units, not ISO 4217's (ISK in hundredths, MGA in whole ariary).
            guard let paid = StripeUnits.money(stripeAmount: amount, currency: currency) else {
                return .refused(nil, reason: "Stripe's amount \(amount) \(currency) is not a whole amount OrbitCove can record")
            }
            return try await DuesService.recordOnline(
                .init(
                    dues: dues, user: user, amount: paid.minorUnits, currency: paid.currency.code, providerPaymentID: intent,
                    paidAt: event.created),
                runner: runner, on: connection)
        case "charge.refunded":
            guard let intent = object.paymentIntent, let amount = object.amount, let refunded = object.amountRefunded,
                let currency = object.currency
            else { return nil }
            guard let charged = StripeUnits.money(stripeAmount: amount, currency: currency),
                let given = StripeUnits.money(stripeAmount: refunded, currency: currency)
            else { return .unchanged(nil, reason: "Stripe's amounts \(amount) and \(refunded) \(currency) are not whole amounts") }
            return try await DuesService.refundOnline(
                providerPaymentID: intent, amount: charged.minorUnits, refunded: given.minorUnits, on: connection)
        case "charge.dispute.created", "charge.dispute.updated", "charge.dispute.funds_withdrawn", "charge.dispute.funds_reinstated",
            "charge.dispute.closed":
            guard let dispute = object.id, let intent = object.paymentIntent, let amount = object.amount, let currency = object.currency
            else { return nil }
            guard let disputed = StripeUnits.money(stripeAmount: amount, currency: currency) else {
                return .unchanged(nil, reason: "Stripe's amount \(amount) \(currency) is not a whole amount")
            }
            let fact: DuesService.DisputeFact
            switch (event.type, object.status) {
            case ("charge.dispute.funds_withdrawn", _): fact = .withdrawn
            case ("charge.dispute.funds_reinstated", _), ("charge.dispute.closed", "won"), ("charge.dispute.closed", "warning_closed"): fact = .won
            case ("charge.dispute.closed", "lost"): fact = .lost
            case ("charge.dispute.closed", _): return .unchanged(nil, reason: "a dispute closed as \(object.status ?? "nothing")")
            default: fact = .opened
            }
            return try await DuesService.disputeOnline(
                .init(dispute: dispute, providerPaymentID: intent, amount: disputed.minorUnits, fact: fact), on: connection)
        default:
            return nil
        }
    }

    /// The community an event is for: the one it names (our Checkout's metadata or
    /// `client_reference_id`, the App Store's `appAccountToken`), else the one that already has
    /// the subscription (for Stripe, also by the community's `stripe_subscription_id`).
    static func community(of change: SubscriptionChange, provider: Provider, on connection: PostgresConnection) async throws -> CommunityID? {
        let rows = try await connection.query(
            """
            SELECT id FROM communities
            WHERE id = \(change.community)
               OR (\(change.community)::uuid IS NULL AND id = (
                    SELECT community_id FROM billing_subscriptions
                    WHERE provider = \(provider.rawValue) AND subscription_id = \(change.subscription)))
               OR (\(change.community)::uuid IS NULL AND \(provider.rawValue) = 'stripe' AND stripe_subscription_id = \(change.subscription))
            ORDER BY (id = \(change.community)) DESC NULLS LAST LIMIT 1
            """)
        return try rows.first?.decode("id", as: CommunityID.self)
    }
}
