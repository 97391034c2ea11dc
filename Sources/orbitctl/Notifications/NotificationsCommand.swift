import ArgumentParser
import Foundation
import Logging
import OrbitCore

/// `orbitctl notifications …`
struct NotificationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications",
        abstract: "The acting user's notifications.",
        subcommands: [List.self, Read.self]
    )

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
