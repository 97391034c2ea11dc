package import Foundation
import OrbitPostgres

/// Disputes of dues paid online (issue 52, item 2; docs/money.md, "Disputes"): the payer's bank
/// disputes a card payment. Stripe's `charge.dispute.*` events become facts of the dispute that
/// only ever turn true (opened, funds withdrawn, won, lost), so each applies once and they end
/// the same in any order, beside refunds; the payment then counts what its facts leave of it
/// (`reconcile`), is marked, and the treasurer is told.
extension DuesService {
    /// What a dispute event says happened.
    package enum DisputeFact: String, Sendable, Equatable {
        /// `charge.dispute.created` (or `.updated`): the bank is deciding; the money still counts.
        case opened
        /// `charge.dispute.funds_withdrawn`: the money left the account; it no longer counts.
        case withdrawn
        /// `charge.dispute.closed` won (or `.funds_reinstated`): it counts again.
        case won
        /// `charge.dispute.closed` lost: gone for good.
        case lost

        /// Money's history's action for it.
        var action: MoneyActivity.Action {
            switch self {
            case .opened: .disputed
            case .withdrawn, .lost: .disputeLost
            case .won: .disputeWon
            }
        }
    }

    /// A dispute event about a payment, its amount in ISO 4217 minor units.
    package struct OnlineDispute: Sendable, Equatable {
        package var dispute: String
        package var providerPaymentID: String
        package var amount: Int64
        package var fact: DisputeFact
    }

    /// Records `dispute`'s fact as orbit_admin on `connection` (the webhook's transaction), then
    /// brings its payment to what the facts leave of it, with the audit entry `dues.disputed` and
    /// a notification to the treasurer when anything changed.
    static func disputeOnline(_ dispute: OnlineDispute, on connection: PostgresConnection) async throws -> OnlineOutcome {
        guard dispute.amount > 0 else { return .unchanged(nil, reason: "a dispute of nothing") }
        try await lock(payment: dispute.providerPaymentID, on: connection)
        let known = try await connection.query(
            "SELECT withdrawn, won, lost FROM billing_disputes WHERE provider = 'stripe' AND dispute_id = \(dispute.dispute)"
        ).first.map { try $0.decode((Bool, Bool, Bool).self) }
        let withdrawn = (known?.0 ?? false) || dispute.fact == .withdrawn || dispute.fact == .lost
        let won = (known?.1 ?? false) || dispute.fact == .won
        let lost = (known?.2 ?? false) || dispute.fact == .lost
        let isNew = known.map { $0 != (withdrawn, won, lost) } ?? true
        try await connection.query(
            """
            INSERT INTO billing_disputes AS d (provider, dispute_id, payment_id, amount, withdrawn, won, lost)
            VALUES ('stripe', \(dispute.dispute), \(dispute.providerPaymentID), \(dispute.amount), \(withdrawn), \(won), \(lost))
            ON CONFLICT (provider, dispute_id) DO UPDATE
                SET withdrawn = EXCLUDED.withdrawn, won = EXCLUDED.won, lost = EXCLUDED.lost, updated_at = now()
            """)
        guard let change = try await reconcile(dispute.providerPaymentID, action: dispute.fact.action, on: connection) else {
            return .unchanged(nil, reason: "no payment of \(dispute.providerPaymentID) is recorded; the dispute is kept for it")
        }
        guard isNew, change.changed else {
            return .unchanged(change.community, reason: "dispute \(dispute.dispute) says nothing new")
        }
        let facts = try await facts(of: dispute.providerPaymentID, on: connection)
        let audit = try PostgresJSON(encoding: [
            "source": "stripe", "dispute_id": dispute.dispute, "payment_intent": dispute.providerPaymentID, "fact": dispute.fact.rawValue,
            "status": facts.status ?? "", "before": String(change.before), "remaining": String(change.after),
        ])
        try await connection.query(
            """
            INSERT INTO audit_log (community_id, user_id, action, target_type, target_id, metadata)
            VALUES (\(change.community), \(change.user), 'dues.disputed', 'dues_payment', \(change.paymentID), \(audit))
            """)
        try await notifyTreasurer(of: dispute, change, on: connection)
        return .recorded(change.community)
    }

    /// Tells the dues' treasurer (who set them up, while an admin of the community; else its
    /// admins) what a dispute did, unless they switched `payment_disputed` off.
    static func notifyTreasurer(of dispute: OnlineDispute, _ change: Reconciled, on connection: PostgresConnection) async throws {
        let row = try await connection.query(
            """
            SELECT d.name, d.currency, u.display_name FROM dues d JOIN users u ON u.id = \(change.user) WHERE d.id = \(change.dues)
            """
        ).single()
        let (name, code, payer) = try row.decode((String, String, String).self)
        let currency = try Currency.parse(code)
        let disputed = Money(minorUnits: dispute.amount, currency: currency)
        let (title, body): (String, String) =
            switch dispute.fact {
            case .opened:
                (
                    "A payment is disputed",
                    "\(payer)'s payment of \(disputed) for \(name) is disputed with their bank. It counts until the bank decides."
                )
            case .withdrawn, .lost:
                (
                    "A disputed payment was taken back",
                    "\(payer)'s bank took back \(disputed) of their payment for \(name): they owe it again."
                )
            case .won:
                ("A dispute was won", "\(payer)'s payment of \(disputed) for \(name) counts again: the bank decided for you.")
            }
        let data = try PostgresJSON(encoding: [
            "dues_id": change.dues.description, "dues_payment_id": change.paymentID.description, "dispute_id": dispute.dispute,
        ])
        try await connection.query(
            NotificationService.enqueue(
                .paymentDisputed,
                """
                SELECT m.user_id, d.community_id, \(title)::text, \(body)::text, \(data)::jsonb, NULL::text, m.notification_prefs
                FROM dues d JOIN members m ON m.community_id = d.community_id AND m.left_at IS NULL AND m.role = 'admin'
                WHERE d.id = \(change.dues)
                  AND (m.user_id = d.created_by OR NOT EXISTS (
                        SELECT FROM members t WHERE t.community_id = d.community_id AND t.user_id = d.created_by AND t.left_at IS NULL
                          AND t.role = 'admin'))
                """))
    }
}
