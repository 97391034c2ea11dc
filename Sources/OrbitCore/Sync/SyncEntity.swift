package import Foundation
import OrbitPostgres

/// What a change is about: an entity of the feed, named as in the change JSON.
package enum SyncEntity: String, Sendable, Codable, CaseIterable {
    case community, member, event, rsvp, post, comment, media, expense, dues, duesPayment = "dues_payment", notification
    /// Chat (docs/chat.md): the conversations the reader takes part in (with their receipts),
    /// and their messages from the follower's first cursor on (older ones: the history pages).
    case conversation, message
    /// Chores and rewards (003, docs/chores.md): what a child's device shows, and the parents'.
    case chore, choreCompletion = "chore_completion", reward, rewardRedemption = "reward_redemption", points
    /// Money besides expenses and dues: the series that make them, and the community's own rates.
    case recurringCharge = "recurring_charge", exchangeRate = "exchange_rate"
    /// The community's own categories (archived ones too: expenses keep them).
    case expenseCategory = "expense_category"
    /// The dependents of the community's members (whose names splits and chores show); in the
    /// user's own feed, their own.
    case familyMember = "family_member"
    /// The user's own feed only (`GET /users/me/changes`): their account and their devices.
    case user, device
    /// The members' payment handles (docs/money.md, "Getting paid back"), where settle-up's pay
    /// options come from; in the user's own feed, their own.
    case paymentHandle = "payment_handle"

    /// What a signed-in child's device syncs: their chores, completions, rewards, redemptions and
    /// points, under row-level security as the child (docs/chores.md).
    static let childEntities: [SyncEntity] = [.chore, .choreCompletion, .reward, .rewardRedemption, .points]

    /// The ids of the entities of this kind in `community` as `reader` sees them now, in id
    /// order after `after`: the initial state.
    func currentIDs(in community: CommunityID, after: UUID?, limit: Int, reader principal: Principal, on connection: PostgresConnection) async throws
        -> [UUID]
    {
        // Ids of what only a user has (their notifications, their conversations): none for a child.
        let reader: UserID
        switch principal {
        case .user(let user): reader = user
        case .child: reader = UserID(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        }
        if self == .community { return after == nil ? [community.uuid] : [] }
        // Ids sort after the nil UUID, so no cursor means from the start.
        let after = after ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let query: PostgresQuery
        switch self {
        case .community:
            return []
        case .member:
            query = "SELECT id FROM members WHERE community_id = \(community) AND left_at IS NULL AND id > \(after) ORDER BY id LIMIT \(limit)"
        case .event:
            query = "SELECT id FROM events WHERE community_id = \(community) AND deleted_at IS NULL AND id > \(after) ORDER BY id LIMIT \(limit)"
        case .rsvp:
            query = """
                SELECT r.id FROM rsvps r JOIN events e ON e.id = r.event_id
                WHERE e.community_id = \(community) AND e.deleted_at IS NULL AND r.id > \(after) ORDER BY r.id LIMIT \(limit)
                """
        case .post:
            query = "SELECT id FROM posts WHERE community_id = \(community) AND deleted_at IS NULL AND id > \(after) ORDER BY id LIMIT \(limit)"
        case .comment:
            query = """
                SELECT c.id FROM comments c JOIN posts p ON p.id = c.post_id
                WHERE p.community_id = \(community) AND p.deleted_at IS NULL AND c.deleted_at IS NULL AND c.id > \(after) ORDER BY c.id LIMIT \(limit)
                """
        case .media:
            query = "SELECT id FROM media WHERE community_id = \(community) AND id > \(after) ORDER BY id LIMIT \(limit)"
        case .expense:
            query =
                "SELECT id FROM transactions WHERE community_id = \(community) AND deleted_at IS NULL AND id > \(after) ORDER BY id LIMIT \(limit)"
        case .dues:
            query = "SELECT id FROM dues WHERE community_id = \(community) AND id > \(after) ORDER BY id LIMIT \(limit)"
        case .duesPayment:
            query = """
                SELECT p.id FROM dues_payments p JOIN dues d ON d.id = p.dues_id
                WHERE d.community_id = \(community) AND p.id > \(after) ORDER BY p.id LIMIT \(limit)
                """
        case .notification:
            query = """
                SELECT id FROM notifications WHERE community_id = \(community) AND user_id = \(reader) AND id > \(after) ORDER BY id LIMIT \(limit)
                """
        case .conversation:
            query = """
                SELECT c.id FROM conversations c
                JOIN conversation_participants p ON p.conversation_id = c.id AND p.user_id = \(reader) AND p.left_at IS NULL
                WHERE c.community_id = \(community) AND c.id > \(after) ORDER BY c.id LIMIT \(limit)
                """
        case .message:
            // The state lists each conversation with its last message; earlier ones are paged
            // from GET /chats/{id}/messages when the user scrolls (a conversation may hold millions).
            return []
        case .chore:
            query = "SELECT id FROM chores WHERE community_id = \(community) AND id > \(after) ORDER BY id LIMIT \(limit)"
        case .choreCompletion:
            query = "SELECT id FROM chore_completions WHERE community_id = \(community) AND id > \(after) ORDER BY id LIMIT \(limit)"
        case .reward:
            query = "SELECT id FROM rewards WHERE community_id = \(community) AND id > \(after) ORDER BY id LIMIT \(limit)"
        case .rewardRedemption:
            query = "SELECT id FROM reward_redemptions WHERE community_id = \(community) AND id > \(after) ORDER BY id LIMIT \(limit)"
        case .points:
            query = "SELECT id FROM points_accounts WHERE community_id = \(community) AND id > \(after) ORDER BY id LIMIT \(limit)"
        case .recurringCharge:
            query = "SELECT id FROM recurring_charges WHERE community_id = \(community) AND id > \(after) ORDER BY id LIMIT \(limit)"
        case .exchangeRate:
            query = "SELECT id FROM exchange_rates WHERE community_id = \(community) AND id > \(after) ORDER BY id LIMIT \(limit)"
        case .expenseCategory:
            query = "SELECT id FROM expense_categories WHERE community_id = \(community) AND id > \(after) ORDER BY id LIMIT \(limit)"
        case .user, .device:
            return []  // the user's own feed's (`ownIDs`)
        case .paymentHandle:
            query = """
                SELECT h.id FROM payment_handles h JOIN members m ON m.user_id = h.user_id AND m.community_id = \(community) AND m.left_at IS NULL
                WHERE h.id > \(after) ORDER BY h.id LIMIT \(limit)
                """
        case .familyMember:
            query = """
                SELECT f.id FROM family_members f JOIN members m ON m.user_id = f.user_id AND m.community_id = \(community) AND m.left_at IS NULL
                WHERE f.id > \(after) ORDER BY f.id LIMIT \(limit)
                """
        }
        return try await connection.query(query).map { try $0.decode("id", as: UUID.self) }
    }

    /// The ids of the entities of this kind in `user`'s own feed (`SyncService.ownEntities`), in
    /// id order after `after`: its initial state.
    func ownIDs(of user: UserID, after: UUID?, limit: Int, on connection: PostgresConnection) async throws -> [UUID] {
        if self == .user { return after == nil ? [user.uuid] : [] }
        let after = after ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let query: PostgresQuery
        switch self {
        case .device:
            query = "SELECT id FROM devices WHERE user_id = \(user) AND id > \(after) ORDER BY id LIMIT \(limit)"
        case .familyMember:
            // Every family member the user is a guardian of (their own feed's, like GET /users/me/family).
            query = """
                SELECT family_member_id AS id FROM family_guardians
                WHERE user_id = \(user) AND accepted_at IS NOT NULL AND family_member_id > \(after) ORDER BY family_member_id LIMIT \(limit)
                """
        case .paymentHandle:
            query = "SELECT id FROM payment_handles WHERE user_id = \(user) AND id > \(after) ORDER BY id LIMIT \(limit)"
        case .notification:
            query = "SELECT id FROM notifications WHERE user_id = \(user) AND community_id IS NULL AND id > \(after) ORDER BY id LIMIT \(limit)"
        default:
            return []
        }
        return try await connection.query(query).map { try $0.decode("id", as: UUID.self) }
    }

    /// The entities that go with this one when it is deleted (a post's comments, an event's
    /// RSVPs): the follower is told to drop them too.
    func dependents(of id: UUID, on connection: PostgresConnection) async throws -> [(SyncEntity, UUID)] {
        switch self {
        case .post:
            return try await connection.query("SELECT id FROM comments WHERE post_id = \(id)").map { (.comment, try $0.decode("id")) }
        case .event:
            return try await connection.query("SELECT id FROM rsvps WHERE event_id = \(id)").map { (.rsvp, try $0.decode("id")) }
        case .chore:
            return try await connection.query("SELECT id FROM chore_completions WHERE chore_id = \(id)").map {
                (.choreCompletion, try $0.decode("id"))
            }
        case .reward:
            return try await connection.query("SELECT id FROM reward_redemptions WHERE reward_id = \(id)").map {
                (.rewardRedemption, try $0.decode("id"))
            }
        default:
            return []
        }
    }

    /// The entities of this kind with `ids` as their GETs return them to `reader`, in one query
    /// a kind (an expense's splits and payers: one more round trip for all of them; messages: one
    /// more per conversation for the status of the reader's own; chores: one for whether their
    /// occurrences are done). An id missing from the answer is one the reader cannot see (deleted,
    /// left, or never theirs); in `community`'s feed, one that is not part of it (a family member
    /// whose parent is not a member there), as the state would not list it.
    func loadAll(_ ids: [UUID], in community: CommunityID?, reader principal: Principal, runner: RequestRunner, on connection: PostgresConnection)
        async throws -> [UUID: any Encodable & Sendable]
    {
        guard !ids.isEmpty else { return [:] }
        let user: UserID? = if case .user(let user) = principal { user } else { nil }
        guard user != nil || Self.childEntities.contains(self) else { return [:] }
        let rows: PostgresRows
        let decode: (PostgresRow) throws -> any Encodable & Sendable
        switch self {
        case .community:
            rows = try await connection.query("SELECT \(unescaped: Community.columns) FROM communities WHERE id = ANY(\(ids)) AND deleted_at IS NULL")
            decode = Community.init(row:)
        case .event:
            rows = try await connection.query("SELECT \(unescaped: Event.columns) FROM events WHERE id = ANY(\(ids)) AND deleted_at IS NULL")
            decode = Event.init(row:)
        case .media:
            let storage = runner.storage
            rows = try await connection.query("SELECT \(unescaped: Media.columns) FROM media WHERE id = ANY(\(ids))")
            decode = { row in try Media(row: row).linked(by: storage) }
        case .expense:
            let expenses = try await connection.query(
                "SELECT \(unescaped: Expense.columns) FROM transactions WHERE id = ANY(\(ids)) AND deleted_at IS NULL")
            let found = try expenses.map { try $0.decode("id", as: TransactionID.self) }
            let details = try await ExpenseService(runner).details(of: found, on: connection)
            var loaded: [UUID: any Encodable & Sendable] = [:]
            for row in expenses {
                let id = try row.decode("id", as: TransactionID.self)
                loaded[id.uuid] = try Expense(row: row, payers: details.payers[id] ?? [], splits: details.splits[id] ?? [])
            }
            return loaded
        case .chore:
            var loaded: [UUID: any Encodable & Sendable] = [:]
            for chore in try await ChoreService(runner).chores(
                "SELECT \(unescaped: Chore.columns) FROM chores c WHERE c.id = ANY(\(ids))", on: connection)
            {
                loaded[chore.id.uuid] = chore
            }
            return loaded
        case .conversation:
            guard let user else { return [:] }
            rows = try await connection.query(
                """
                SELECT \(unescaped: Conversation.columns)
                FROM conversations c JOIN conversation_participants p ON p.conversation_id = c.id AND p.user_id = \(user) AND p.left_at IS NULL
                WHERE c.id = ANY(\(ids))
                """
            )
            decode = Conversation.init(row:)
        case .post:
            guard let user else { return [:] }
            rows = try await connection.query(FeedService.postsQuery(ids, reader: user))
            decode = FeedPost.init(row:)
        case .comment:
            rows = try await connection.query(
                """
                SELECT \(unescaped: Comment.columns) FROM comments c JOIN posts p ON p.id = c.post_id
                WHERE c.id = ANY(\(ids)) AND c.deleted_at IS NULL AND p.deleted_at IS NULL
                """
            )
            decode = Comment.init(row:)
        case .rsvp:
            rows = try await connection.query(
                """
                SELECT \(unescaped: RSVP.columns) FROM rsvps
                WHERE id = ANY(\(ids)) AND EXISTS (SELECT FROM events e WHERE e.id = rsvps.event_id AND e.deleted_at IS NULL)
                """
            )
            decode = RSVP.init(row:)
        case .notification:
            guard let user else { return [:] }
            rows = try await connection.query(
                "SELECT \(unescaped: AppNotification.columns) FROM notifications WHERE id = ANY(\(ids)) AND user_id = \(user)"
            )
            decode = AppNotification.init(row:)
        case .dues:
            rows = try await connection.query("SELECT \(unescaped: Dues.columns) FROM dues WHERE id = ANY(\(ids))")
            decode = Dues.init(row:)
        case .duesPayment:
            rows = try await connection.query(
                """
                SELECT \(unescaped: DuesPayment.columns), (SELECT d.currency FROM dues d WHERE d.id = dues_payments.dues_id) AS dues_currency
                FROM dues_payments WHERE id = ANY(\(ids))
                """
            )
            decode = { row in try DuesPayment(row: row, currency: try row.decode("dues_currency")) }
        case .choreCompletion:
            rows = try await connection.query("SELECT \(unescaped: ChoreCompletion.columns) FROM chore_completions WHERE id = ANY(\(ids))")
            decode = ChoreCompletion.init(row:)
        case .reward:
            rows = try await connection.query("SELECT \(unescaped: Reward.columns) FROM rewards WHERE id = ANY(\(ids))")
            decode = Reward.init(row:)
        case .rewardRedemption:
            rows = try await connection.query("SELECT \(unescaped: RewardRedemption.columns) FROM reward_redemptions WHERE id = ANY(\(ids))")
            decode = RewardRedemption.init(row:)
        case .points:
            rows = try await connection.query("SELECT \(unescaped: HolderPoints.columns) FROM points_accounts WHERE id = ANY(\(ids))")
            decode = HolderPoints.init(row:)
        case .recurringCharge:
            rows = try await connection.query("SELECT \(unescaped: RecurringCharge.columns) FROM recurring_charges WHERE id = ANY(\(ids))")
            decode = RecurringCharge.init(row:)
        case .familyMember:
            rows = try await connection.query(
                """
                SELECT \(unescaped: FamilyMember.columns) FROM family_members f
                WHERE f.id = ANY(\(ids)) AND CASE WHEN \(community)::uuid IS NULL
                    -- The own feed: the family members the reader is a guardian of.
                    THEN f.id = ANY(orbit.parent_family_member_ids())
                    ELSE EXISTS (SELECT FROM members m WHERE m.user_id = f.user_id AND m.community_id = \(community) AND m.left_at IS NULL) END
                """
            )
            decode = FamilyMember.init(row:)
        case .member:
            guard let user else { return [:] }
            rows = try await connection.query(
                """
                SELECT \(unescaped: Member.columns), m.notification_prefs FROM members m JOIN users u ON u.id = m.user_id
                WHERE m.id = ANY(\(ids)) AND m.left_at IS NULL
                """
            )
            decode = { row in
                let member = try Member(row: row)
                // One's own membership as `GET …/members/me` returns it (with its preferences).
                guard member.userID == user else { return member }
                return MyMembership(
                    member: member, notificationPrefs: try row.decode("notification_prefs", as: PostgresJSON.self).decode([String: Bool].self))
            }
        case .exchangeRate:
            rows = try await connection.query("SELECT \(unescaped: ExchangeRate.columns), id FROM exchange_rates WHERE id = ANY(\(ids))")
            decode = ExchangeRate.init(row:)
        case .expenseCategory:
            rows = try await connection.query("SELECT \(unescaped: CustomCategory.columns) FROM expense_categories WHERE id = ANY(\(ids))")
            decode = CustomCategory.init(row:)
        case .user:
            guard let user else { return [:] }
            rows = try await connection.query(
                "SELECT \(unescaped: User.columns) FROM users WHERE id = ANY(\(ids)) AND id = \(user) AND deleted_at IS NULL")
            decode = User.init(row:)
        case .device:
            guard let user else { return [:] }
            rows = try await connection.query("SELECT \(unescaped: Device.columns) FROM devices WHERE id = ANY(\(ids)) AND user_id = \(user)")
            decode = Device.init(row:)
        case .paymentHandle:
            // In a community's feed, the handles of its active members; in the own feed, one's own.
            rows = try await connection.query(
                """
                SELECT \(unescaped: PaymentHandle.columns) FROM payment_handles h
                WHERE h.id = ANY(\(ids)) AND CASE WHEN \(community)::uuid IS NULL THEN h.user_id = \(user)
                    ELSE EXISTS (SELECT FROM members m WHERE m.community_id = \(community) AND m.user_id = h.user_id AND m.left_at IS NULL) END
                """)
            decode = PaymentHandle.init(row:)
        case .message:
            // One query for the messages; their status (for the reader's own) one per conversation.
            guard let user else { return [:] }
            let messages = try await connection.query("SELECT \(unescaped: ChatMessage.columns) FROM messages m WHERE m.id = ANY(\(ids))")
                .map(ChatMessage.init(row:))
            var loaded: [UUID: any Encodable & Sendable] = [:]
            for (conversation, group) in Dictionary(grouping: messages, by: \.conversationID) {
                for message in try await ChatService.withStatus(group, in: conversation, reader: user, on: connection) {
                    loaded[message.id.uuid] = message
                }
            }
            return loaded
        }
        var loaded: [UUID: any Encodable & Sendable] = [:]
        for row in rows {
            loaded[try row.decode("id", as: UUID.self)] = try decode(row)
        }
        return loaded
    }

    /// The entity as its GET returns it to `reader`, or nil when they cannot see it: `loadAll`'s
    /// query for one.
    func load(_ id: UUID, in community: CommunityID? = nil, reader principal: Principal, runner: RequestRunner, on connection: PostgresConnection)
        async throws -> (any Encodable & Sendable)?
    {
        try await loadAll([id], in: community, reader: principal, runner: runner, on: connection)[id]
    }
}

/// `upsert`: here is the entity as it is now; `delete`: drop it (deleted, or no longer visible).
package enum ChangeOp: String, Sendable, Codable {
    case upsert, delete
}

/// One entry of the feed.
package struct Change: Sendable, Encodable {
    package var entity: SyncEntity
    package var id: UUID
    package var op: ChangeOp
    /// The entity's JSON as its GET returns it; nil for a delete.
    package var data: (any Encodable & Sendable)?
    /// The entity tag of `data` (what its GET sends as `ETag`, for `If-Match`); set by the API.
    package var etag: String?

    enum CodingKeys: String, CodingKey { case entity, id, op, data, etag }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(entity, forKey: .entity)
        try container.encode(Identifier<SyncEntity>(id).description, forKey: .id)
        try container.encode(op, forKey: .op)
        if let data {
            try container.encode(data, forKey: .data)
        } else {
            try container.encodeNil(forKey: .data)
        }
        if let etag { try container.encode(etag, forKey: .etag) }
    }
}

/// A page of the feed: `next_cursor` is where the next pull starts; `has_more`: pull again now.
package struct ChangePage: Sendable, Encodable {
    package var changes: [Change]
    package var nextCursor: String
    package var hasMore: Bool

    enum CodingKeys: String, CodingKey { case changes, nextCursor = "next_cursor", hasMore = "has_more" }
}
