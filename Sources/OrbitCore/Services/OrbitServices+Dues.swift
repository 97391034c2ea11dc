import Foundation
import OrbitPostgres

/// Dues (spec: Dues, Dues Payments).
///
/// Who owes: every member active now, and every member who left after the dues were created
/// (they owe what they owed when they left: the full amount, less what they paid). People who
/// join later owe it too, as active members. Members who left before the dues existed owe
/// nothing.
extension OrbitServices {
    /// Creates dues (admins). Audit-logged.
    public func createDues(
        in community: CommunityID, name: String, amount: String, currency code: String = "USD", dueDate: String, as actor: UserID
    ) async throws -> Dues {
        let name = try Validate.text(name, field: "name", limit: 200)
        let currency = try Self.currency(code)
        let money = try Money(parsing: amount, currency: currency)
        let dueDate = try Self.date(dueDate, field: "due_date")
        return try await asUser(actor) { connection in
            try await requireAdmin(actor, of: community, rule: "only admins can set up dues", on: connection)
            let row = try await connection.query(
                """
                INSERT INTO dues (community_id, name, amount, currency, due_date, created_by)
                VALUES (\(community), \(name), \(Int32(money.minorUnits)), \(currency.code), \(dueDate)::date, \(actor))
                RETURNING \(unescaped: Dues.columns)
                """
            ).single()
            let dues = try Dues(row: row)
            try await audit(
                "dues.created", by: actor, community: community, target: ("dues", dues.id.uuid),
                metadata: ["name": name, "amount": String(money.minorUnits), "currency": currency.code], on: connection
            )
            try await notifyMembers(
                of: community, type: "payment_request", title: "Dues: \(name)", body: "\(money) due \(dueDate)",
                data: ["dues_id": dues.id.description, "community_id": community.description], on: connection
            )
            return dues
        }
    }

    public func dues(in community: CommunityID, as actor: UserID) async throws -> [Dues] {
        try await asUser(actor) { connection in
            try await requireMember(actor, of: community, on: connection)
            return try await connection.query(
                "SELECT \(unescaped: Dues.columns) FROM dues WHERE community_id = \(community) ORDER BY due_date DESC, created_at DESC"
            ).map(Dues.init(row:))
        }
    }

    public func dues(_ id: DuesID, as actor: UserID) async throws -> Dues {
        try await asUser(actor) { try await dues(id, on: $0) }
    }

    func dues(_ id: DuesID, on connection: PostgresConnection, lock: Bool = false) async throws -> Dues {
        let rows =
            lock
            ? try await connection.query("SELECT \(unescaped: Dues.columns) FROM dues WHERE id = \(id) FOR UPDATE")
            : try await connection.query("SELECT \(unescaped: Dues.columns) FROM dues WHERE id = \(id)")
        guard let row = rows.first else { throw ServiceError.notFound("Dues \(id)") }
        return try Dues(row: row)
    }

    /// Records a payment (admins), partial ones included. A payment beyond what the member still
    /// owes is refused; the dues row is locked while checking, so two payments recorded at the
    /// same moment cannot together exceed it. Audit-logged.
    public func payDues(
        _ id: DuesID, user: UserID, amount: String, method: String? = nil, note: String? = nil, as actor: UserID
    ) async throws -> DuesPayment {
        let method = try method.map { try Validate.text($0, field: "payment_method", limit: 50) }
        let note = try note.map { try Validate.text($0, field: "notes", limit: 1000, multiline: true) }
        return try await asUser(actor) { connection in
            let unlocked = try await dues(id, on: connection)
            try await requireAdmin(actor, of: unlocked.communityID, rule: "only admins can record dues payments", on: connection)
            let dues = try await self.dues(id, on: connection, lock: true)
            let money = try Money(parsing: amount, currency: try Self.currency(dues.currency))
            guard let line = try await report(for: dues, on: connection).first(where: { $0.userID == user }) else {
                throw ServiceError.invalidInput(field: "user", reason: "\(user) does not owe these dues")
            }
            guard money.minorUnits <= line.outstanding else {
                throw ServiceError.conflict(
                    "The payment of \(money) is more than the \(Money(minorUnits: line.outstanding, currency: money.currency)) still owed."
                )
            }
            let row = try await connection.query(
                """
                INSERT INTO dues_payments (dues_id, user_id, amount_paid, recorded_by, payment_method, notes)
                VALUES (\(id), \(user), \(Int32(money.minorUnits)), \(actor), \(method), \(note))
                RETURNING id, paid_at
                """
            ).single()
            let (paymentID, paidAt) = try row.decode((DuesPaymentID, Date).self)
            try await audit(
                "dues.payment_recorded", by: actor, community: dues.communityID, target: ("dues_payment", paymentID.uuid),
                metadata: ["dues_id": id.description, "user_id": user.description, "amount": String(money.minorUnits)], on: connection
            )
            return DuesPayment(
                id: paymentID, duesID: id, userID: user, amountPaid: money.minorUnits, currency: dues.currency, paidAt: paidAt, recordedBy: actor,
                paymentMethod: method, notes: note
            )
        }
    }

    /// Each member who owes the dues: due, paid, outstanding, status and whether it is overdue.
    public func duesReport(_ id: DuesID, as actor: UserID?) async throws -> [DuesStatus] {
        let body = { (connection: PostgresConnection) async throws -> [DuesStatus] in
            let dues = try await self.dues(id, on: connection)
            if let actor { try await self.requireMember(actor, of: dues.communityID, on: connection) }
            return try await self.report(for: dues, on: connection)
        }
        if let actor { return try await asUser(actor, body) }
        return try await asOperator(nil, body)
    }

    func report(for dues: Dues, on connection: PostgresConnection) async throws -> [DuesStatus] {
        let overdue = dues.dueDate < Self.today(now())
        return try await connection.query(
            """
            SELECT m.user_id, coalesce((SELECT sum(p.amount_paid) FROM dues_payments p WHERE p.dues_id = \(dues.id) AND p.user_id = m.user_id), 0)::bigint AS paid
            FROM members m
            WHERE m.community_id = \(dues.communityID) AND (m.left_at IS NULL OR m.left_at >= \(dues.createdAt))
            ORDER BY m.joined_at, m.user_id
            """
        ).map { row in
            let (user, paid) = try row.decode((UserID, Int64).self)
            let outstanding = max(dues.amount - paid, 0)
            let status = outstanding == 0 ? "paid" : paid > 0 ? "partial" : "unpaid"
            return DuesStatus(
                userID: user, amountDue: dues.amount, amountPaid: paid, outstanding: outstanding, status: status,
                overdue: outstanding > 0 && overdue, currency: dues.currency
            )
        }
    }

    /// Stops collecting (admins). Audit-logged.
    public func deactivateDues(_ id: DuesID, as actor: UserID) async throws -> Dues {
        try await asUser(actor) { connection in
            let current = try await dues(id, on: connection)
            try await requireAdmin(actor, of: current.communityID, rule: "only admins can change dues", on: connection)
            try await connection.query("UPDATE dues SET is_active = false WHERE id = \(id)")
            try await audit("dues.deactivated", by: actor, community: current.communityID, target: ("dues", id.uuid), on: connection)
            return try await dues(id, on: connection)
        }
    }
}
