package import Foundation
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
        let id = DuesID.new(in: .dues)
        let statements = try insertion(id, in: community, name: name, amount: money, dueDate: dueDate, as: actor)
        return try await runner.asUser(actor) { connection in
            guard let row = try await connection.pipeline(statements)[0].first else {
                try await runner.requireAdmin(actor, of: community, rule: "only admins can set up dues", on: connection)
                throw ServiceError.changedMeanwhile
            }
            return try Dues(row: row)
        }
    }

    /// Dues per attendee (admins; issue 24, item 8): owed by who answered yes to an event (or
    /// one occurrence of a series), `perHead` for each head — their own answer, their plus-ones,
    /// their family members' answers — and by no one else. Linked to the event (the
    /// occurrence's own row). No "yes": 409.
    /// - Parameters:
    ///   - name: default "<event title> (attendance)".
    ///   - dueDate: default the event's day in the community's time zone.
    package func chargeAttendees(
        of event: EventID, occurrence: Date? = nil, name: String? = nil, perHead money: Money, dueDate: CivilDate? = nil, as actor: UserID
    ) async throws -> Dues {
        let name = try name.map { try Validate.text($0, field: "name", limit: 200) }
        try money.requirePositive()
        let id = DuesID.random()
        return try await runner.asUser(actor) { connection in
            let (found, row, answers) = try await ExpenseService.attendance(
                of: event, occurrence: occurrence, as: actor, runner: runner, on: connection)
            var heads: [UserID: Int64] = [:]
            for answer in answers { heads[answer.user, default: 0] += 1 + answer.plusOnes }
            let day = try await runner.day(dueDate, in: found.communityID, at: occurrence ?? found.startsAt, on: connection)
            let people = heads.sorted { $0.key < $1.key }
            var statements = try insertion(
                id, in: found.communityID, name: name ?? "\(found.title) (attendance)", amount: money, dueDate: day, as: actor, linkedEvent: row,
                owedBy: people.map(\.key))
            statements.insert(
                """
                INSERT INTO dues_attendees (dues_id, community_id, user_id, heads)
                SELECT d.id, d.community_id, x.user_id, x.heads
                FROM dues d, unnest(\(people.map(\.key.uuid)), \(people.map { Int32($0.value) })) AS x (user_id, heads)
                WHERE d.id = \(id)
                """, at: 1)
            guard let written = try await connection.pipeline(statements)[0].first else {
                try await runner.requireAdmin(actor, of: found.communityID, rule: "only admins can set up dues", on: connection)
                throw ServiceError.changedMeanwhile
            }
            return try Dues(row: written)
        }
    }

    /// One round trip that writes dues `id`, only if `actor` is an admin of the community, and
    /// their audit entry and notifications, only if the dues were written; the first
    /// statement returns the dues (no row: nothing was written).
    /// - Parameter occurrence: the recurring charge and day these dues are the occurrence of.
    func insertion(
        _ id: DuesID, in community: CommunityID, name: String, amount money: Money, dueDate: CivilDate, as actor: UserID,
        occurrence: (charge: RecurringChargeID, day: CivilDate)? = nil, linkedEvent: EventID? = nil, owedBy: [UserID]? = nil
    ) throws -> [PostgresQuery] {
        let currency = money.currency
        return [
            """
            INSERT INTO dues (id, community_id, name, amount, currency, due_date, created_by, recurring_charge_id, occurrence_on, linked_event_id)
            SELECT \(id), \(community), \(name), \(Int32(money.minorUnits)), \(currency.code), \(dueDate), \(actor), \(occurrence?.charge),
                \(occurrence?.day), \(linkedEvent)
            WHERE EXISTS (
                SELECT FROM members m
                WHERE m.community_id = \(community) AND m.user_id = \(actor) AND m.left_at IS NULL AND m.role = 'admin')
            RETURNING \(unescaped: Dues.columns)
            """,
            try runner.auditStatement(
                "dues.created", by: actor, community: community, target: ("dues", id.uuid),
                metadata: ["name": name, "amount": String(money.minorUnits), "currency": currency.code], ifWritten: WrittenRow(.dues, id.uuid)),
            try NotificationService.notifyMembersStatement(
                of: community, type: .paymentRequest, title: "Dues: \(name)", body: "\(money) due \(dueDate)",
                data: ["dues_id": id.description, "community_id": community.description], only: owedBy, ifWritten: WrittenRow(.dues, id.uuid)),
        ]
    }

    /// The order of dues: latest due date first, then newest.
    static let duesOrder = Paging.Keyset("dues", [.day("due_date"), .time("created_at"), .id("id")])

    /// The order of a dues' payments: newest first.
    static let paymentOrder = Paging.Keyset.timeAndID("dues-payments", time: "paid_at")

    /// A community's dues, latest due date first.
    package func list(in community: CommunityID, limit: Int = 50, cursor: String? = nil, as actor: UserID) async throws -> Page<Dues> {
        try Validate.limit(limit, in: 1...200)
        let after = try Self.duesOrder.decode(cursor)
        return try await runner.asUserReading(actor) { connection in
            let rows = try await runner.queryAsMember(
                actor, of: community, on: connection,
                """
                SELECT \(unescaped: Dues.columns), \(unescaped: Self.duesOrder.columns)
                FROM dues
                WHERE community_id = \(community)
                  AND \(try Self.duesOrder.after(after))
                ORDER BY \(unescaped: Self.duesOrder.order) LIMIT \(limit + 1)
                """
            )
            return try Self.duesOrder.page(rows, limit: limit, item: Dues.init(row:))
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
            // The dues and the actor's role, unlocked: FOR UPDATE applies the UPDATE policy,
            // under which a member would find the dues missing instead of being refused.
            let (unlocked, role) = try await Self.duesAndRole(id, actor, on: connection)
            guard role != nil else { throw ServiceError.notFound("Community \(unlocked.communityID)") }
            guard role == .admin else { throw ServiceError.forbidden(rule: "only admins can record dues payments") }
            try money.requirePositive()
            try money.requireCurrency(try Currency.parse(unlocked.currency))
            // One round trip. The dues row is locked first, in a statement of its own, so that the
            // sum of payments the INSERT reads (a statement later, with a snapshot taken after the
            // lock) includes every payment committed before; two payments recorded at once cannot
            // together exceed what is owed. The payment is written only if the member owes the
            // dues and at least this much; its audit entry only if it was written.
            let paymentID = DuesPaymentID.new(in: .duesPayments)
            let results = try await connection.pipeline([
                "SELECT id FROM dues WHERE id = \(id) FOR UPDATE",
                Self.paymentInsertion(paymentID, to: id, by: user, amount: money, recordedBy: actor, method: method, note: note),
                try runner.auditStatement(
                    "dues.payment_recorded", by: actor, community: unlocked.communityID, target: ("dues_payment", paymentID.uuid),
                    metadata: ["dues_id": id.description, "user_id": user.description, "amount": String(money.minorUnits)],
                    ifWritten: WrittenRow(.duesPayments, paymentID.uuid)),
            ])
            guard let row = results[1].first else {
                // Nothing was written: say why, from the dues as locked and their report (whose
                // day does not matter here: only what is still owed).
                let dues = try await Self.dues(id, on: connection)
                try money.requireCurrency(try Currency.parse(dues.currency))
                guard
                    let line = try await Self.report(for: dues, today: CivilDate(containing: runner.now()), on: connection)
                        .first(where: { $0.userID == user })
                else {
                    throw ServiceError.conflict(field: "user", reason: "\(user) does not owe these dues")
                }
                guard money.minorUnits <= line.outstanding else {
                    throw ServiceError.conflict(
                        "The payment of \(money) is more than the \(Money(minorUnits: line.outstanding, currency: money.currency)) still owed."
                    )
                }
                throw ServiceError.changedMeanwhile
            }
            return try DuesPayment(row: row, currency: unlocked.currency)
        }
    }

    /// The dues and the acting user's active role in their community (nil: not a member).
    static func duesAndRole(_ id: DuesID, _ actor: UserID, on connection: PostgresConnection) async throws -> (Dues, MemberRole?) {
        guard
            let row = try await connection.query(
                """
                SELECT \(unescaped: Dues.columns), \(RequestRunner.roleColumn(of: actor, community: "dues.community_id"))
                FROM dues WHERE id = \(id)
                """
            ).first
        else { throw ServiceError.notFound("Dues \(id)") }
        return (try Dues(row: row), try RequestRunner.role(in: row))
    }

    /// Each member who owes the dues: due, paid, outstanding, status and whether it is overdue.
    /// One round trip with the transaction's start: the dues (with the actor's role and the
    /// community's time zone) and the report, as one pipeline.
    package func report(_ id: DuesID, as actor: UserID?) async throws -> [DuesStatus] {
        try await runner.asUserReadingOrOperator(actor) { connection in
            let results = try await connection.pipeline([
                """
                SELECT \(unescaped: Dues.columns), \(RequestRunner.roleColumn(of: actor, community: "dues.community_id")),
                    (SELECT c.settings ->> 'timezone' FROM communities c WHERE c.id = dues.community_id) AS timezone
                FROM dues WHERE id = \(id)
                """,
                Self.reportQuery(id),
            ])
            guard let row = results[0].first else { throw ServiceError.notFound("Dues \(id)") }
            let dues = try Dues(row: row)
            if actor != nil, try RequestRunner.role(in: row) == nil {
                throw ServiceError.notFound("Community \(dues.communityID)")
            }
            let zone = CommunitySettings(timezone: try row.decode("timezone", as: String?.self)).timeZone
            return try Self.statuses(results[1], of: dues, today: CivilDate(containing: runner.now(), in: zone))
        }
    }

    /// - Parameter today: today in the community's time zone: dues are overdue from the day after
    ///   their due date there.
    static func report(for dues: Dues, today: CivilDate, on connection: PostgresConnection) async throws -> [DuesStatus] {
        try statuses(try await connection.query(reportQuery(dues.id)), of: dues, today: today)
    }

    /// What each member owes of dues `id` and has paid, in the order of joining.
    static func reportQuery(_ id: DuesID) -> PostgresQuery {
        """
        SELECT o.user_id, o.amount_due,
            coalesce((SELECT sum(p.amount_paid) FROM dues_payments p WHERE p.dues_id = \(id) AND p.user_id = o.user_id), 0)::bigint AS paid,
            (SELECT p.dispute_status FROM dues_payments p
             WHERE p.dues_id = \(id) AND p.user_id = o.user_id AND p.dispute_status IS NOT NULL
             ORDER BY array_position(ARRAY['open', 'funds_withdrawn', 'lost', 'won'], p.dispute_status) LIMIT 1) AS dispute_status
        FROM dues_owed o JOIN members m ON m.community_id = o.community_id AND m.user_id = o.user_id
        WHERE o.dues_id = \(id)
        ORDER BY m.joined_at, m.user_id
        """
    }

    /// `reportQuery`'s rows as statuses.
    static func statuses(_ rows: PostgresRows, of dues: Dues, today: CivilDate) throws -> [DuesStatus] {
        let overdue = dues.dueDate < today
        return try rows.map { row in
            let (user, due, paid, dispute) = try row.decode((UserID, Int64, Int64, String?).self)
            let outstanding = max(due - paid, 0)
            let status: DuesStatus.State = outstanding == 0 ? .paid : paid > 0 ? .partial : .unpaid
            return DuesStatus(
                userID: user, amountDue: due, amountPaid: paid, outstanding: outstanding, status: status,
                overdue: outstanding > 0 && overdue, currency: dues.currency, disputeStatus: dispute
            )
        }
    }

    /// Stops collecting (admins). Audit-logged.
    package func deactivate(_ id: DuesID, as actor: UserID) async throws -> Dues {
        try await runner.asUser(actor) { connection in
            // One statement: the change, made only if the actor is an admin of the dues'
            // community, and its audit entry, written only if it was made.
            let row = try await connection.query(
                """
                WITH changed AS (
                    UPDATE dues d SET is_active = false
                    WHERE d.id = \(id)
                      AND EXISTS (
                          SELECT FROM members m
                          WHERE m.community_id = d.community_id AND m.user_id = \(actor) AND m.left_at IS NULL AND m.role = 'admin')
                    RETURNING \(unescaped: Dues.columns)
                ),
                audited AS (
                    INSERT INTO audit_log (community_id, user_id, action, target_type, target_id, metadata, ip_address)
                    SELECT community_id, \(actor), 'dues.deactivated', 'dues', id, \(try PostgresJSON(encoding: [String: String]())),
                        nullif(current_setting('app.client_address', true), '')::inet
                    FROM changed
                )
                SELECT * FROM changed
                """
            ).first
            if let row { return try Dues(row: row) }
            // Nothing was changed: say why.
            let current = try await Self.dues(id, on: connection)
            try await runner.requireAdmin(actor, of: current.communityID, rule: "only admins can change dues", on: connection)
            throw ServiceError.changedMeanwhile
        }
    }

    /// Changes name, amount or due date (admins). A new amount in the dues' currency, never
    /// below what a member has already paid. Audit-logged with the changed fields.
    package func update(_ id: DuesID, name: String? = nil, amount: Money? = nil, dueDate: CivilDate? = nil, as actor: UserID) async throws -> Dues {
        let name = try name.map { try Validate.text($0, field: "name", limit: 200) }
        try amount?.requirePositive()
        var changed: [String] = []
        if name != nil { changed.append("name") }
        if amount != nil { changed.append("amount") }
        if dueDate != nil { changed.append("due_date") }
        let metadata = try PostgresJSON(encoding: ["fields": changed.joined(separator: ",")])
        let newAmount = amount.map { Int32($0.minorUnits) }
        return try await runner.asUser(actor) { connection in
            // One round trip. The dues row is locked first, in a statement of its own, so that the
            // payments the UPDATE reads (a statement later, with a snapshot taken after the lock)
            // include every one committed before (`recordPayment` locks it too). The change is
            // made only if the actor is an admin of the dues' community and a new amount is in
            // their currency and not below what a member has paid; its audit entry only if made.
            let results = try await connection.pipeline([
                "SELECT id FROM dues WHERE id = \(id) FOR UPDATE",
                """
                WITH changed AS (
                    UPDATE dues d SET name = coalesce(\(name), d.name), amount = coalesce(\(newAmount), d.amount),
                        due_date = coalesce(\(dueDate), d.due_date)
                    WHERE d.id = \(id)
                      AND EXISTS (
                          SELECT FROM members m
                          WHERE m.community_id = d.community_id AND m.user_id = \(actor) AND m.left_at IS NULL AND m.role = 'admin')
                      AND (\(newAmount)::int IS NULL
                           OR (d.currency = \(amount?.currency.code) AND \(newAmount) >= \(unescaped: Self.leastAmount)))
                    RETURNING \(unescaped: Dues.columns)
                ),
                audited AS (
                    INSERT INTO audit_log (community_id, user_id, action, target_type, target_id, metadata, ip_address)
                    SELECT community_id, \(actor), 'dues.updated', 'dues', id, \(metadata),
                        nullif(current_setting('app.client_address', true), '')::inet
                    FROM changed
                )
                SELECT * FROM changed
                """,
            ])
            if let row = results[1].first { return try Dues(row: row) }
            // Nothing was changed: say why.
            let current = try await Self.dues(id, on: connection)
            try await runner.requireAdmin(actor, of: current.communityID, rule: "only admins can change dues", on: connection)
            if let amount {
                try amount.requireCurrency(try Currency.parse(current.currency))
                let least = try await connection.query("SELECT \(unescaped: Self.leastAmount) AS least FROM dues d WHERE d.id = \(id)")
                    .single().decode("least", as: Int64.self)
                guard amount.minorUnits >= least else {
                    throw ServiceError.conflict(
                        "A member has already paid \(Money(minorUnits: least, currency: amount.currency))\(current.linkedEventID == nil ? "" : " a head"); "
                            + "the amount cannot be less than that.")
                }
            }
            throw ServiceError.changedMeanwhile
        }
    }

    /// The least amount dues `d` can have: what a member has paid of them, per head (rounded up)
    /// for dues per attendee. SQL over `d`, for a statement that reads `dues d`.
    static let leastAmount = """
        coalesce((SELECT max((t.total + coalesce(o.heads, 1) - 1) / coalesce(o.heads, 1))
                  FROM (SELECT p.user_id, sum(p.amount_paid) AS total FROM dues_payments p WHERE p.dues_id = d.id GROUP BY p.user_id) t
                  LEFT JOIN dues_owed o ON o.dues_id = d.id AND o.user_id = t.user_id), 0)::bigint
        """

    /// The individual payments of dues, newest first, for members of its community.
    package func payments(of id: DuesID, limit: Int = 50, cursor: String? = nil, as actor: UserID) async throws -> Page<DuesPayment> {
        try Validate.limit(limit, in: 1...200)
        let after = try Self.paymentOrder.decode(cursor)
        return try await runner.asUserReading(actor) { connection in
            let dues = try await Self.dues(id, on: connection)
            try await runner.requireMember(actor, of: dues.communityID, on: connection)
            let rows = try await connection.query(
                """
                SELECT \(unescaped: DuesPayment.columns), \(unescaped: Self.paymentOrder.columns) FROM dues_payments
                WHERE dues_id = \(id)
                  AND \(try Self.paymentOrder.after(after))
                ORDER BY \(unescaped: Self.paymentOrder.order) LIMIT \(limit + 1)
                """
            )
            return try Self.paymentOrder.page(rows, limit: limit, item: { try DuesPayment(row: $0, currency: dues.currency) })
        }
    }

    /// One payment record the actor can see (a member of the dues' community).
    package func payment(_ id: DuesPaymentID, as actor: UserID) async throws -> DuesPayment {
        try await runner.asUser(actor) { connection in
            guard
                let row = try await connection.query(
                    """
                    SELECT \(unescaped: DuesPayment.columns), (SELECT d.currency FROM dues d WHERE d.id = p.dues_id) AS dues_currency
                    FROM dues_payments p WHERE p.id = \(id)
                    """
                ).first
            else { throw ServiceError.notFound("Payment \(id)") }
            return try DuesPayment(row: row, currency: try row.decode("dues_currency", as: String.self))
        }
    }
}
