/// Sends notifications to devices. APNs comes later behind this protocol.
package protocol NotificationDelivery: Sendable {
    func deliver(_ notification: AppNotification) async throws
}

/// Delivery that only writes a line per notification (development and tests).
package struct LoggingDelivery: NotificationDelivery {
    package init() {}

    package func deliver(_ notification: AppNotification) async throws {
        print("notify \(notification.userID) [\(notification.type)] \(notification.title)")
    }
}
