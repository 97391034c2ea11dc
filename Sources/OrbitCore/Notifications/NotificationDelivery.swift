/// Sends notifications to devices. APNs comes later behind this protocol.
package protocol NotificationDelivery: Sendable {
    func deliver(_ notification: AppNotification) async throws
}

/// Delivery that only writes a line per notification to standard output (development, tests,
/// and servers without APNs): `notify <notification id> to <user id> [<type>] <title>`.
package struct LoggingDelivery: NotificationDelivery {
    package init() {}

    package func deliver(_ notification: AppNotification) async throws {
        print("notify \(notification.id) to \(notification.userID) [\(notification.type)] \(notification.title)")
    }
}
