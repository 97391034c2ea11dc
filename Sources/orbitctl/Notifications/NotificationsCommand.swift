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

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Newest first, with the unread count.")
        @OptionGroup var page: PageOptions
        @Flag(help: "Only unread ones.") var unread = false
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let (items, count) = try await acting.run { services, actor in
                return (
                    try await services.notifications.list(limit: page.limit, cursor: page.cursor, unreadOnly: unread, as: actor),
                    try await services.notifications.unreadCount(as: actor)
                )
            }
            if output.json { return try printJSON(items) }
            printPage(items, ["WHEN", "TYPE", "TITLE", "READ", "ID"]) {
                [show($0.createdAt), $0.type.rawValue, $0.title, $0.readAt == nil ? "" : "yes", $0.id.description]
            }
            print("Unread: \(count)")
        }
    }

    struct Read: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Mark one notification, or all with --all, read.")
        @Argument(help: "Notification id.") var notification: NotificationID?
        @Flag(help: "Mark all read.") var all = false
        @OptionGroup var acting: ActingOptions

        func validate() throws {
            if all == (notification != nil) { throw ValidationError("Give a notification id or --all.") }
        }

        func run() async throws {
            let count = try await acting.run { services, actor in
                try await services.notifications.markRead(notification, as: actor)
            }
            print("Marked \(count) notification(s) read.")
        }
    }
}
