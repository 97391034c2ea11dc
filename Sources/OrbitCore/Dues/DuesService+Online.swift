package import Foundation
import OrbitPostgres

/// Dues paid online (issue 41, item 2; docs/money.md, "Dues paid online"): a member starts a
/// checkout for what they still owe; the provider's signed event records the payment (method
/// `stripe`, its PaymentIntent) through the same rule as a treasurer's, once; a refund reverses it.
/// Both are in money's history.
extension DuesService {
    /// A checkout for what the acting member still owes of dues `id`: their own line, which for
    /// dues per attendee counts their children's heads too (a parent pays for their child). The
    /// provider is called after the transaction that checked it: no connection waits on it.
    package func checkout(_ id: DuesID, as actor: UserID, provider: any PaymentProvider, settings: CheckoutSettings) async throws
        -> CheckoutSession
    {
        // On the primary: a replica a moment behind could miss the payment a treasurer just
        // recorded, and the member would pay again.
        let (dues, owed, changes) = try await runner.asUser(actor) { connection in
            let (dues, role) = try await Self.duesAndRole(id, actor, on: connection)
            guard role != nil else { throw ServiceError.notFound("Community \(dues.communityID)") }
            guard dues.isActive else { throw ServiceError.conflict(field: "dues", reason: "are no longer collected") }
            guard
                let line = try await Self.report(for: dues, today: CivilDate(containing: runner.now()), on: connection)
                    .first(where: { $0.userID == actor })
            else { throw ServiceError.conflict(field: "user", reason: "\(actor) does not owe these dues") }
            guard line.outstanding > 0 else { throw ServiceError.conflict(field: "dues", reason: "are paid: nothing is owed") }
            // How often the dues' money has moved (payments, refunds, edits: money's history):
            // the same amount owed again after a refund is a new checkout, not the paid one.
            let changes = try await connection.query(
                "SELECT count(*)::bigint AS changes FROM money_activity WHERE entity_id = \(id)"
            ).single().decode("changes", as: Int64.self)
            return (dues, line.outstanding, changes)
        }
        let amount = Money(minorUnits: owed, currency: try Currency.parse(dues.currency))
        // In the provider's own units, exactly, or not at all (409 naming currency and amount).
        try provider.requireChargeable(amount)
        // The same member, amount and history make the same key (the client adds the request's
        // digest): a second tap or a retry gets the session the provider made the first time,
        // open for its 24 hours, not a second one to pay.
        return try await provider.createCheckoutSession(
            CheckoutRequest(
                mode: .payment(amount: amount, name: dues.name),
                successURL: settings.returnURL("success", for: "dues", id: id.description),
                cancelURL: settings.returnURL("cancel", for: "dues", id: id.description),
                clientReferenceID: id.description,
                metadata: ["dues_id": id.description, "user_id": actor.description, "community_id": dues.communityID.description],
                idempotencyKey: "orbit-dues-\(id)-\(actor)-\(owed)-\(changes)"))
    }

    /// A payment the provider took for dues, as its event tells it.
    package struct OnlinePayment: Sendable, Equatable {
        package var dues: DuesID
        package var user: UserID
        package var amount: Int64
        package var currency: String
        /// The provider's id of the payment (Stripe's PaymentIntent): recorded once.
        package var providerPaymentID: String
        package var paidAt: Date
    }

    /// What became of an online payment or a refund.
    package enum OnlineOutcome: Sendable, Equatable {
        case recorded(CommunityID)
        /// This payment was recorded before (another event of it).
        case alreadyRecorded(CommunityID)
        /// The rules refused it (more than is still owed, another currency, not owed at all):
        /// the money must go back to the payer.
        case refused(CommunityID?, reason: String)
        /// Nothing to change: an older refund, a refund of a payment not recorded (yet: it is
        /// kept, and the payment's event records what is left), a payment refunded in full before
        /// its event came.
        case unchanged(CommunityID?, reason: String?)
    }

    /// Records `payment` as orbit_admin on `connection` (the webhook's transaction): method
    /// `stripe`, recorded by the payer, written only if the member owes the dues and at least this
    /// much, exactly as `recordPayment` checks, with the dues row locked first.
    static func recordOnline(_ payment: OnlinePayment, runner: RequestRunner, on connection: PostgresConnection) async throws -> OnlineOutcome {
        guard let paid = try? Money(minorUnits: payment.amount, currency: Currency.parse(payment.currency)), payment.amount > 0,
            payment.amount <= Money.maximumMinorUnits
        else { return .refused(nil, reason: "the amount \(payment.amount) \(payment.currency) is not a payment") }
        try await lock(payment: payment.providerPaymentID, on: connection)
        let locked = try await connection.query(
            "SELECT \(unescaped: Dues.columns) FROM dues WHERE id = \(payment.dues) FOR UPDATE")
        guard let row = locked.first else { return .refused(nil, reason: "dues \(payment.dues) do not exist") }
        let dues = try Dues(row: row)
        guard dues.currency == paid.currency.code else {
            return .refused(dues.communityID, reason: "the payment is in \(paid.currency.code), the dues in \(dues.currency)")
        }
        // A refund or a dispute that came first: what is left of the payment is recorded.
        let facts = try await Self.facts(of: payment.providerPaymentID, on: connection)
        guard facts.refunded + facts.taken < paid.minorUnits else {
            return .unchanged(dues.communityID, reason: "the payment was refunded in full (or taken by disputes) before its event came")
        }
        let money = Money(minorUnits: paid.minorUnits - facts.refunded - facts.taken, currency: paid.currency)
        let paymentID = DuesPaymentID.new(in: .duesPayments)
        let results = try await connection.pipeline([
            Self.paymentInsertion(
                paymentID, to: payment.dues, by: payment.user, amount: money, recordedBy: payment.user, method: "stripe", note: nil,
                providerPaymentID: payment.providerPaymentID, paidAt: payment.paidAt),
            try runner.auditStatement(
                "dues.paid_online", by: payment.user, community: dues.communityID, target: ("dues_payment", paymentID.uuid),
                metadata: ["dues_id": payment.dues.description, "amount": String(payment.amount), "payment_intent": payment.providerPaymentID],
                ifWritten: WrittenRow(.duesPayments, paymentID.uuid)),
        ])
        if results[0].first != nil {
            // The charge as recorded (what a dispute that is won puts back), and a dispute's mark.
            try await connection.pipeline([
                """
                INSERT INTO billing_payments (provider, payment_id, dues_payment_id, dues_id, user_id, amount)
                VALUES ('stripe', \(payment.providerPaymentID), \(paymentID), \(payment.dues), \(payment.user), \(paid.minorUnits))
                ON CONFLICT (provider, payment_id) DO NOTHING
                """,
                "UPDATE dues_payments SET dispute_status = \(facts.status) WHERE id = \(paymentID) AND \(facts.status)::text IS NOT NULL",
            ])
            return .recorded(dues.communityID)
        }
        let earlier = try await connection.query(
            "SELECT FROM dues_payments WHERE provider_payment_id = \(payment.providerPaymentID)")
        if earlier.first != nil { return .alreadyRecorded(dues.communityID) }
        let line = try await Self.report(for: dues, today: CivilDate(containing: payment.paidAt), on: connection)
            .first(where: { $0.userID == payment.user })
        guard let line else { return .refused(dues.communityID, reason: "\(payment.user) does not owe these dues") }
        return .refused(
            dues.communityID,
            reason: "the payment of \(money) is more than the \(Money(minorUnits: line.outstanding, currency: money.currency)) still owed")
    }

    /// Records that `refunded` of the charge `providerPaymentID` (of `amount`) is refunded so far
    /// (Stripe's `amount_refunded`: refunds arriving twice or out of order end the same, the
    /// most is kept), then brings the payment to what its facts leave of it (`reconcile`): it
    /// shrinks, or goes when all of it is refunded. Money's history records it ('refunded', no
    /// actor: the provider), before and after; the audit log too (`dues.refunded`).
    static func refundOnline(providerPaymentID: String, amount: Int64, refunded: Int64, on connection: PostgresConnection) async throws
        -> OnlineOutcome
    {
        try await lock(payment: providerPaymentID, on: connection)
        // Kept whether or not the payment is recorded yet: its event may come later.
        let most = try await connection.query(
            """
            INSERT INTO billing_refunds AS r (provider, payment_id, amount, refunded) VALUES ('stripe', \(providerPaymentID), \(amount), \(refunded))
            ON CONFLICT (provider, payment_id) DO UPDATE
                SET refunded = greatest(r.refunded, EXCLUDED.refunded), amount = EXCLUDED.amount, updated_at = now()
            RETURNING refunded
            """
        ).single().decode("refunded", as: Int64.self)
        guard let change = try await reconcile(providerPaymentID, action: .refunded, on: connection) else {
            return .unchanged(nil, reason: "no payment of \(providerPaymentID) is recorded; the refund is kept for it")
        }
        guard change.changed else { return .unchanged(change.community, reason: nil) }
        let audit = try PostgresJSON(encoding: [
            "source": "stripe", "payment_intent": providerPaymentID, "refunded": String(most), "remaining": String(change.after),
        ])
        try await connection.query(
            """
            INSERT INTO audit_log (community_id, user_id, action, target_type, target_id, metadata)
            VALUES (\(change.community), \(change.user), 'dues.refunded', 'dues_payment', \(change.paymentID), \(audit))
            """)
        return .recorded(change.community)
    }

    /// What the provider says of a payment besides its charge: how much is refunded, how much
    /// disputes took and kept, and the mark its disputes give it.
    struct PaymentFacts {
        var refunded: Int64
        var taken: Int64
        /// `open`, `funds_withdrawn`, `lost` or `won`; nil without a dispute.
        var status: String?
    }

    static func facts(of providerPaymentID: String, on connection: PostgresConnection) async throws -> PaymentFacts {
        let row = try await connection.query(
            """
            SELECT coalesce((SELECT refunded FROM billing_refunds WHERE provider = 'stripe' AND payment_id = \(providerPaymentID)), 0)::bigint
                    AS refunded,
                coalesce(sum(amount) FILTER (WHERE lost OR withdrawn AND NOT won), 0)::bigint AS taken,
                CASE WHEN bool_or(lost) THEN 'lost' WHEN bool_or(withdrawn AND NOT won) THEN 'funds_withdrawn'
                     WHEN bool_or(NOT won) THEN 'open' WHEN count(*) > 0 THEN 'won' END AS status
            FROM billing_disputes WHERE provider = 'stripe' AND payment_id = \(providerPaymentID)
            """
        ).single()
        return PaymentFacts(refunded: try row.decode("refunded"), taken: try row.decode("taken"), status: try row.decode("status"))
    }

    /// What reconciling a payment did.
    struct Reconciled {
        var community: CommunityID
        var dues: DuesID
        var user: UserID
        var paymentID: DuesPaymentID
        var before: Int64
        var after: Int64
        var changed: Bool
    }

    /// Brings the dues payment of `providerPaymentID` to what its facts leave of it: the charge as
    /// recorded (`billing_payments`), less what is refunded, less what disputes took and kept,
    /// with its disputes' mark. A refund that leaves nothing removes it; a dispute that takes all
    /// of it leaves it at 0, marked (the treasurer sees what became of it). Money's history records
    /// a change as `action` (no actor: the provider), the dues' state before and after. Nil: the
    /// payment is not recorded (yet, or it was refused: its event will count these facts), or no
    /// longer (refunded in full).
    /// Called under the payment's lock (`lock(payment:)`).
    static func reconcile(_ providerPaymentID: String, action: MoneyActivity.Action, on connection: PostgresConnection) async throws
        -> Reconciled?
    {
        guard
            let recorded = try await connection.query(
                """
                SELECT b.dues_id, b.user_id, b.dues_payment_id, b.amount, d.community_id
                FROM billing_payments b JOIN dues d ON d.id = b.dues_id
                WHERE b.provider = 'stripe' AND b.payment_id = \(providerPaymentID)
                """
            ).first
        else { return nil }
        let (dues, user, paymentID, charge, community) = try recorded.decode((DuesID, UserID, DuesPaymentID, Int64, CommunityID).self)
        let facts = try await facts(of: providerPaymentID, on: connection)
        // The dues first, then the payment: the order recordPayment and recordOnline lock in.
        let results = try await connection.pipeline([
            "SELECT id FROM dues WHERE id = \(dues) FOR UPDATE",
            "SELECT amount_paid, dispute_status FROM dues_payments WHERE provider_payment_id = \(providerPaymentID) FOR UPDATE",
        ])
        // Refunded in full before: nothing is recorded any more, nothing comes back.
        guard let current = results[1].first else { return nil }
        let (amount, status) = try current.decode((Int32, String?).self)
        let target = max(charge - facts.refunded - facts.taken, 0)
        guard Int64(amount) != target || status != facts.status else {
            return Reconciled(
                community: community, dues: dues, user: user, paymentID: paymentID, before: Int64(amount), after: target, changed: false)
        }
        let change: PostgresQuery =
            target == 0 && facts.taken == 0
            ? "DELETE FROM dues_payments WHERE provider_payment_id = \(providerPaymentID)"
            : """
            UPDATE dues_payments SET amount_paid = \(Int32(clamping: target)), dispute_status = \(facts.status)
            WHERE provider_payment_id = \(providerPaymentID)
            """
        let activity = UUID()
        try await connection.pipeline([
            """
            INSERT INTO money_activity (id, community_id, actor_id, action, entity, entity_id, before)
            SELECT \(activity), d.community_id, NULL, \(action.rawValue), 'dues', d.id, orbit.dues_state(d) FROM dues d WHERE d.id = \(dues)
            """,
            change,
            "UPDATE money_activity m SET after = orbit.dues_state(d) FROM dues d WHERE m.id = \(activity) AND d.id = m.entity_id",
        ])
        return Reconciled(community: community, dues: dues, user: user, paymentID: paymentID, before: Int64(amount), after: target, changed: true)
    }

    /// One provider payment's events take turns (its record and its refunds), whatever dues
    /// they name: a refund and the payment's own event at once cannot miss each other.
    static func lock(payment: String, on connection: PostgresConnection) async throws {
        try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\("stripe-payment:" + payment), 0))")
    }

    /// Writes payment `paymentID` of `amount` by `user` to dues `id`, only if the member owes the
    /// dues, in their currency, and at least this much (what they owe less what they paid); no
    /// row returned: nothing was written. The dues row must be locked before, in a statement of
    /// its own, so that this statement's snapshot holds every payment committed before it: two
    /// payments at once cannot together exceed what is owed. A second payment with the same
    /// provider id writes nothing.
    static func paymentInsertion(
        _ paymentID: DuesPaymentID, to id: DuesID, by user: UserID, amount money: Money, recordedBy: UserID, method: String?, note: String?,
        providerPaymentID: String? = nil, paidAt: Date? = nil
    ) -> PostgresQuery {
        """
        INSERT INTO dues_payments (id, dues_id, user_id, amount_paid, paid_at, recorded_by, payment_method, notes, provider_payment_id)
        SELECT \(paymentID), d.id, \(user), \(Int32(money.minorUnits)), coalesce(\(paidAt), now()), \(recordedBy), \(method), \(note),
            \(providerPaymentID)
        FROM dues d
        JOIN dues_owed o ON o.dues_id = d.id AND o.user_id = \(user)
        WHERE d.id = \(id) AND d.currency = \(money.currency.code)
          AND \(money.minorUnits) <= o.amount_due
              - coalesce((SELECT sum(p.amount_paid) FROM dues_payments p WHERE p.dues_id = d.id AND p.user_id = \(user)), 0)
        ON CONFLICT (provider_payment_id) WHERE provider_payment_id IS NOT NULL DO NOTHING
        RETURNING \(unescaped: DuesPayment.columns)
        """
    }
}
