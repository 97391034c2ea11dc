import ArgumentParser
import Foundation
import Logging
import OrbitCore

/// `orbitctl notifications …`
struct NotificationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications",
        abstract: "The acting user's notifications.",
        subcommands: [List.self, Read.self, Preferences.self]
    )

    struct Preferences: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or set the acting user's notification preferences, across communities.",
            discussion: "A community's own switch of a type (community membership) overrides these there. Each is on unless switched off.")
        @Flag(inversion: .prefixedNo, help: "Expenses added, changed or deleted.") var expenses: Bool?
        @Flag(inversion: .prefixedNo, help: "Settlements recorded.") var settlements: Bool?
        @Flag(inversion: .prefixedNo, help: "Reminders and nudges.") var reminders: Bool?
        @Flag(inversion: .prefixedNo, help: "The weekly digest.") var weeklyDigest: Bool?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> NotificationPreferences {
            if expenses == nil && settlements == nil && reminders == nil && weeklyDigest == nil {
                return try await services.users.notificationPreferences(as: actor)
            }
            return try await services.users.updateNotificationPreferences(
                expenses: expenses, settlements: settlements, reminders: reminders, weeklyDigest: weeklyDigest, as: actor)
        }

        func tell(_ preferences: NotificationPreferences) {
            let on = { (value: Bool) in value ? "on" : "off" }
            print(
                "expenses \(on(preferences.expenses)), settlements \(on(preferences.settlements)), reminders \(on(preferences.reminders)), weekly digest \(on(preferences.weeklyDigest))"
            )
        }
    }

    struct List: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Newest first, with the unread count.")
        @OptionGroup var page: PageOptions
        @Flag(help: "Only unread ones.") var unread = false
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        /// A page of notifications, and the unread count beside it; `--json` prints the page alone.
        typealias Listed = JSONPart<Page<AppNotification>, Int>

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Listed {
            Listed(
                value: try await services.notifications.list(limit: page.limit, cursor: page.cursor, unreadOnly: unread, as: actor),
                aside: try await services.notifications.unreadCount(as: actor))
        }

        func tell(_ listed: Listed) {
            printPage(listed.value, ["WHEN", "TYPE", "TITLE", "READ", "ID"]) {
                [show($0.createdAt), $0.type.rawValue, $0.title, $0.readAt == nil ? "" : "yes", $0.id.description]
            }
            print("Unread: \(listed.aside)")
        }
    }

    struct Read: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Mark one notification, or all with --all, read.")
        @Argument(help: "Notification id.") var notification: NotificationID?
        @Flag(help: "Mark all read.") var all = false
        @OptionGroup var acting: ActingOptions
        var output: TextOutput { TextOutput() }

        func validate() throws {
            if all == (notification != nil) { throw ValidationError("Give a notification id or --all.") }
        }

        /// How many were marked read.
        func act(_ services: OrbitServices, as actor: UserID) async throws -> Int {
            try await services.notifications.markRead(notification, as: actor)
        }

        func tell(_ count: Int) {
            print("Marked \(count) notification(s) read.")
        }
    }
}
