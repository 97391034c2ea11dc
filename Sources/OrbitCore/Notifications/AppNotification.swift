package import Foundation
import OrbitPostgres

package enum NotificationTag {}
package typealias NotificationID = Identifier<NotificationTag>

/// What a notification is about (spec: notification_type); members switch types off in their
/// `notification_prefs`.
package enum NotificationType: String, DatabaseEnum {
    case eventReminder = "event_reminder", newPost = "new_post", mention, rsvpRequest = "rsvp_request", paymentRequest = "payment_request"
    /// A chat message, pushed to a participant without a live socket (docs/chat.md).
    case chatMessage = "chat_message"
    /// Chores and rewards (docs/chores.md): a chore assigned, due soon, done and waiting for
    /// approval, approved; a reward redeemed; a child's sign-in locked after five wrong PINs.
    case choreAssigned = "chore_assigned", choreDue = "chore_due", choreCompleted = "chore_completed", choreApproved = "chore_approved"
    case rewardRedeemed = "reward_redeemed", childLockedOut = "child_locked_out"
    /// A dues payment made online is disputed with the payer's bank, taken back, or won (to the
    /// dues' treasurer; docs/money.md, "Disputes").
    case paymentDisputed = "payment_disputed"
    /// Money (docs/money.md, "Who hears about money"): an expense added, changed or deleted, to
    /// those whose share it is; a settlement, to its other party.
    case expenseAdded = "expense_added", expenseEdited = "expense_edited", expenseDeleted = "expense_deleted"
    case settlementRecorded = "settlement_recorded"
    /// Someone who is owed asks the one who owes them to settle up (at most once a day per pair).
    case nudge
    /// Settle Up's remindOldDebts: a weekly reminder of an old debt (docs/money.md).
    case debtReminder = "debt_reminder"
    /// One By Two's weeklyDigest: the week's money across the user's communities (docs/money.md).
    case weeklyDigest = "weekly_digest"
}

/// A notification (spec: Notifications); `data` is the deep link (JSON object text).
package struct AppNotification: Sendable, Codable, Equatable {
    package var id: NotificationID
    package var userID: UserID
    package var communityID: CommunityID?
    package var type: NotificationType
    package var title: String
    package var body: String
    package var data: String
    package var readAt: Date?
    package var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, userID = "user_id", communityID = "community_id", type, title, body, data, readAt = "read_at", createdAt = "created_at"
    }

    package init(
        id: NotificationID, userID: UserID, communityID: CommunityID?, type: NotificationType, title: String, body: String, data: String,
        readAt: Date? = nil, createdAt: Date
    ) {
        (self.id, self.userID, self.communityID, self.type, self.title, self.body, self.data, self.readAt, self.createdAt) =
            (id, userID, communityID, type, title, body, data, readAt, createdAt)
    }

    static let columns = "id, user_id, community_id, type::text AS type, title, body, data::text AS data, read_at, created_at"

    init(row: PostgresRow) throws {
        (id, userID, communityID, type, title, body, data, readAt, createdAt) = try row.decode(
            (NotificationID, UserID, CommunityID?, NotificationType, String, String, String, Date?, Date).self
        )
    }

    /// From the columns named as in `columns`, wherever they are in the row.
    init(columnsNamedIn row: PostgresRow) throws {
        id = try row.decode("id")
        userID = try row.decode("user_id")
        communityID = try row.decode("community_id")
        type = try row.decode("type")
        title = try row.decode("title")
        body = try row.decode("body")
        data = try row.decode("data")
        readAt = try row.decode("read_at")
        createdAt = try row.decode("created_at")
    }
}
