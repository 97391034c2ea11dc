import OrbitPostgres

/// Getting paid back (docs/money.md, "Getting paid back"): users' payment handles, the payment
/// providers operators keep, and the pay options settle-up offers for each suggested payment.
package struct PaymentService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// The acting user's handles.
    package func handles(as actor: UserID) async throws -> PaymentHandles {
        try await handles(of: actor, as: actor)
    }

    /// A user's handles, read by themselves or someone who shares an active community with them;
    /// anyone else is told the user was not found.
    package func handles(of user: UserID, as actor: UserID) async throws -> PaymentHandles {
        try await runner.asUserReading(actor) { connection in
            let rows = try await connection.query(
                """
                SELECT h.kind, h.handle, h.bic, h.holder FROM users u LEFT JOIN payment_handles h ON h.user_id = u.id
                WHERE u.id = \(user) AND u.deleted_at IS NULL ORDER BY h.kind
                """
            )
            guard !rows.isEmpty else { throw ServiceError.notFound("User \(user)") }
            var handles = PaymentHandles()
            for row in rows {
                let (kind, handle, bic, holder) = try row.decode((PaymentHandleKind?, String?, String?, String?).self)
                if let kind, let handle { handles.set(kind, handle: handle, bic: bic, holder: holder) }
            }
            return handles
        }
    }

    /// Puts the acting user's handles, whole: each is checked (`PaymentHandles.validated`), one
    /// left out is removed. Returns them as stored.
    /// - Throws: `ServiceError.invalidInput(field:)` naming the first bad handle; nothing changes then.
    package func setHandles(_ handles: PaymentHandles, as actor: UserID) async throws -> PaymentHandles {
        let entries = try handles.validated().entries
        try await runner.asUser(actor) { connection in
            try await connection.query(
                """
                WITH given AS (
                    SELECT x.kind::payment_handle_kind AS kind, x.handle, nullif(x.bic, '') AS bic, nullif(x.holder, '') AS holder
                    FROM unnest(\(entries.map(\.kind.rawValue))::text[], \(entries.map(\.handle))::text[],
                        \(entries.map { $0.bic ?? "" })::text[], \(entries.map { $0.holder ?? "" })::text[]) AS x (kind, handle, bic, holder)
                ),
                removed AS (
                    DELETE FROM payment_handles h WHERE h.user_id = \(actor) AND h.kind NOT IN (SELECT kind FROM given)
                )
                INSERT INTO payment_handles (user_id, kind, handle, bic, holder)
                SELECT \(actor), kind, handle, bic, holder FROM given
                ON CONFLICT (user_id, kind) DO UPDATE SET handle = excluded.handle, bic = excluded.bic, holder = excluded.holder
                WHERE (payment_handles.handle, payment_handles.bic, payment_handles.holder)
                    IS DISTINCT FROM (excluded.handle, excluded.bic, excluded.holder)
                """
            )
        }
        return try await self.handles(as: actor)
    }

    /// Each payment with its pay options: one for each handle of its payee that an active
    /// provider offered on `platform` in `region` (nil: any) pays in the payment's currency, in
    /// the providers' order. The note names the community.
    package func withPayOptions(
        _ payments: [SettleUp.Payment], in community: CommunityID, platform: String? = nil, region: String? = nil, as actor: UserID
    ) async throws -> [SettleUp.Payment] {
        guard !payments.isEmpty else { return payments }
        let payees = Array(Set(payments.map(\.to.uuid)))
        let (handles, names, providers, communityName) = try await runner.asUserReading(actor) { connection in
            var handles: [UserID: PaymentHandles] = [:]
            var names: [UserID: String] = [:]
            for row in try await connection.query(
                """
                SELECT h.user_id, h.kind, h.handle, h.bic, h.holder, u.display_name
                FROM payment_handles h JOIN users u ON u.id = h.user_id WHERE h.user_id = ANY(\(payees))
                """
            ) {
                let (user, kind, handle, bic, holder, name) = try row.decode((UserID, PaymentHandleKind, String, String?, String?, String).self)
                handles[user, default: PaymentHandles()].set(kind, handle: handle, bic: bic, holder: holder)
                names[user] = name
            }
            let providers =
                handles.isEmpty
                ? []
                : try await connection.query(
                    "SELECT \(unescaped: PayProvider.columns) FROM payment_providers WHERE active ORDER BY sort_order, id"
                ).map(PayProvider.init)
            let communityName = try await connection.query("SELECT name FROM communities WHERE id = \(community)").first?.decode(
                "name", as: String.self)
            return (handles, names, providers, communityName ?? "OrbitCove")
        }
        return payments.map { payment in
            var payment = payment
            guard let handle = handles[payment.to], let currency = Currency(payment.currency) else { return payment }
            let kinds = Set(handle.entries.map(\.kind))
            payment.payOptions = providers.filter { kinds.contains($0.handleKind) && $0.offers(currency.code, platform: platform, region: region) }
                .compactMap { provider in
                    PayLinks.option(
                        provider, handle: handle, amount: payment.amount, currency: currency, note: "Settle up: \(communityName)",
                        payee: names[payment.to] ?? "")
                }
            return payment
        }
    }
}
