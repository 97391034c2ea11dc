import Foundation
import OrbitPostgres

/// Dues (spec: Dues, Dues Payments).
///
/// Who owes: every member active now, and every member who left after the dues were created
/// (they owe what they owed when they left: the full amount, less what they paid). People who
/// join later owe it too, as active members. Members who left before the dues existed owe
/// nothing.
package struct DuesService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// Creates dues (admins). Audit-logged.
    package func create(in community: CommunityID, name: String, amount money: Money, dueDate: CivilDate, as actor: UserID) async throws -> Dues {
        let name = try Validate.text(name, field: "name", limit: 200)
        try money.requirePositive()
        let currency = money.currency
        return try await runner.asUser(actor) { connection in
            try await runner.requireAdmin(actor, of: community, rule: "only admins can set up dues", on: connection)
            let row = try await connection.query(
                """
                INSERT INTO dues (community_id, name, amount, currency, due_date, created_by)
                VALUES (\(community), \(name), \(Int32(money.minorUnits)), \(currency.code), \(dueDate), \(actor))
                RETURNING \(unescaped: Dues.columns)
                """
            ).single()
            let dues = try Dues(row: row)
            try await runner.audit(
                "dues.created", by: actor, community: community, target: ("dues", dues.id.uuid),
                metadata: ["name": name, "amount": String(money.minorUnits), "currency": currency.code], on: connection
            )
            try await NotificationService.notifyMembers(
                of: community, type: .paymentRequest, title: "Dues: \(name)", body: "\(money) due \(dueDate)",
                data: ["dues_id": dues.id.description, "community_id": community.description], on: connection
            )
            return dues
        }
    }

    /// A community's dues, latest due date first.
    package func list(in community: CommunityID, limit: Int = 50, cursor: String? = nil, as actor: UserID) async throws -> Page<Dues> {
        try Validate.limit(limit, in: 1...200)
        let after = try PageCursor.decode(cursor, list: "dues", parts: 3)
        return try await runner.asUserReading(actor) { connection in
            try await runner.requireMember(actor, of: community, on: connection)
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Dues.columns), (due_date - date '2000-01-01') AS cursor_day, \(unescaped: Paging.micros("created_at")) AS cursor_us
                FROM dues
                WHERE community_id = \(community)
                  AND (\(try after?.integer(0))::int IS NULL
                       OR (due_date, created_at, id) < (date '2000-01-01' + \(try after.map { Int32(try $0.integer(0)) })::int,
                           timestamptz 'epoch' + \(try after?.integer(1)) * interval '1 microsecond', \(try after?.uuid(2))))
                ORDER BY due_date DESC, created_at DESC, id DESC LIMIT \(limit + 1)
                """
            )
            return try Paging.page(
                rows, limit: limit, list: "dues", item: Dues.init(row:),
                key: { row in
                    [
                        String(try row.decode("cursor_day", as: Int32.self)), String(try row.decode("cursor_us", as: Int64.self)),
                        try row.decode("id", as: UUID.self).uuidString,
                    ]
                }
            )
        }
    }

    package func get(_ id: DuesID, as actor: UserID) async throws -> Dues {
        try await runner.asUser(actor) { try await Self.dues(id, on: $0) }
    }

    static func dues(_ id: DuesID, on connection: PostgresConnection, lock: Bool = false) async throws -> Dues {
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
    /// - Parameter amount: in the dues' currency.
    package func recordPayment(
        to id: DuesID, by user: UserID, amount money: Money, method: String? = nil, note: String? = nil, as actor: UserID
    ) async throws -> DuesPayment {
        let method = try method.map { try Validate.text($0, field: "payment_method", limit: 50) }
        let note = try note.map { try Validate.text($0, field: "notes", limit: 1000, multiline: true) }
        return try await runner.asUser(actor) { connection in
            let unlocked = try await Self.dues(id, on: connection)
            try await runner.requireAdmin(actor, of: unlocked.communityID, rule: "only admins can record dues payments", on: connection)
            let dues = try await Self.dues(id, on: connection, lock: true)
            try money.requirePositive()
            try money.requireCurrency(try Currency.parse(dues.currency))
            guard
                let line = try await Self.report(for: dues, today: try await runner.today(in: dues.communityID, on: connection), on: connection)
                    .first(where: { $0.userID == user })
            else {
                throw ServiceError.conflict(field: "user", reason: "\(user) does not owe these dues")
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
                RETURNING \(unescaped: DuesPayment.columns)
                """
            ).single()
            let payment = try DuesPayment(row: row, currency: dues.currency)
            try await runner.audit(
                "dues.payment_recorded", by: actor, community: dues.communityID, target: ("dues_payment", payment.id.uuid),
                metadata: ["dues_id": id.description, "user_id": user.description, "amount": String(money.minorUnits)], on: connection
            )
            return payment
        }
    }

    /// Each member who owes the dues: due, paid, outstanding, status and whether it is overdue.
    package func report(_ id: DuesID, as actor: UserID?) async throws -> [DuesStatus] {
        try await runner.asUserReadingOrOperator(actor) { connection in
            let dues = try await Self.dues(id, on: connection)
            if let actor { try await runner.requireMember(actor, of: dues.communityID, on: connection) }
            return try await Self.report(for: dues, today: try await runner.today(in: dues.communityID, on: connection), on: connection)
        }
    }

    /// - Parameter today: today in the community's time zone: dues are overdue from the day after
    ///   their due date there.
    static func report(for dues: Dues, today: CivilDate, on connection: PostgresConnection) async throws -> [DuesStatus] {
        let overdue = dues.dueDate < today
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
            let status: DuesStatus.State = outstanding == 0 ? .paid : paid > 0 ? .partial : .unpaid
            return DuesStatus(
                userID: user, amountDue: dues.amount, amountPaid: paid, outstanding: outstanding, status: status,
                overdue: outstanding > 0 && overdue, currency: dues.currency
            )
        }
    }

    /// Stops collecting (admins). Audit-logged.
    package func deactivate(_ id: DuesID, as actor: UserID) async throws -> Dues {
        try await runner.asUser(actor) { connection in
            let current = try await Self.dues(id, on: connection)
            try await runner.requireAdmin(actor, of: current.communityID, rule: "only admins can change dues", on: connection)
            try await connection.query("UPDATE dues SET is_active = false WHERE id = \(id)")
            try await runner.audit("dues.deactivated", by: actor, community: current.communityID, target: ("dues", id.uuid), on: connection)
            return try await Self.dues(id, on: connection)
        }
    }

    /// Changes name, amount or due date (admins). A new amount in the dues' currency, never
    /// below what a member has already paid. Audit-logged with the changed fields.
    package func update(_ id: DuesID, name: String? = nil, amount: Money? = nil, dueDate: CivilDate? = nil, as actor: UserID) async throws -> Dues {
        let name = try name.map { try Validate.text($0, field: "name", limit: 200) }
        try amount?.requirePositive()
        return try await runner.asUser(actor) { connection in
            let unlocked = try await Self.dues(id, on: connection)
            try await runner.requireAdmin(actor, of: unlocked.communityID, rule: "only admins can change dues", on: connection)
            let current = try await Self.dues(id, on: connection, lock: true)
            if let amount {
                try amount.requireCurrency(try Currency.parse(current.currency))
                let paid = try await connection.query(
                    "SELECT coalesce(max(total), 0)::bigint AS paid FROM (SELECT sum(amount_paid) AS total FROM dues_payments WHERE dues_id = \(id) GROUP BY user_id) t"
                ).single().decode("paid", as: Int64.self)
                guard amount.minorUnits >= paid else {
                    throw ServiceError.conflict(
                        "A member has already paid \(Money(minorUnits: paid, currency: amount.currency)); the amount cannot be less than that.")
                }
            }
            let row = try await connection.query(
                """
                UPDATE dues SET name = coalesce(\(name), name), amount = coalesce(\(amount.map { Int32($0.minorUnits) }), amount),
                    due_date = coalesce(\(dueDate), due_date)
                WHERE id = \(id) RETURNING \(unescaped: Dues.columns)
                """
            ).single()
            var changed: [String] = []
            if name != nil { changed.append("name") }
            if amount != nil { changed.append("amount") }
            if dueDate != nil { changed.append("due_date") }
            try await runner.audit(
                "dues.updated", by: actor, community: current.communityID, target: ("dues", id.uuid),
                metadata: ["fields": changed.joined(separator: ",")], on: connection)
            return try Dues(row: row)
        }
    }

    /// The individual payments of dues, newest first, for members of its community.
    package func payments(of id: DuesID, limit: Int = 50, cursor: String? = nil, as actor: UserID) async throws -> Page<DuesPayment> {
        try Validate.limit(limit, in: 1...200)
        let after = try PageCursor.decode(cursor, list: "dues-payments", parts: 2)
        return try await runner.asUserReading(actor) { connection in
            let dues = try await Self.dues(id, on: connection)
            try await runner.requireMember(actor, of: dues.communityID, on: connection)
            let rows = try await connection.query(
                """
                SELECT \(unescaped: DuesPayment.columns), \(unescaped: Paging.micros("paid_at")) AS cursor_us FROM dues_payments
                WHERE dues_id = \(id)
                  AND (\(try after?.integer(0))::bigint IS NULL
                       OR (paid_at, id) < (timestamptz 'epoch' + \(try after?.integer(0)) * interval '1 microsecond', \(try after?.uuid(1))))
                ORDER BY paid_at DESC, id DESC LIMIT \(limit + 1)
                """
            )
            return try Paging.page(
                rows, limit: limit, list: "dues-payments", item: { try DuesPayment(row: $0, currency: dues.currency) },
                key: { row in [String(try row.decode("cursor_us", as: Int64.self)), try row.decode("id", as: UUID.self).uuidString] })
        }
    }
}
