import Foundation

/// One push: a notification on its way to one device of its user.
package struct Push: Sendable, Equatable {
    package var notification: AppNotification
    package var deviceID: DeviceID
    /// Hex, lower case.
    package var token: String
    package var environment: APNsEnvironment
    /// The app's bundle id: the push's `apns-topic`.
    package var bundleID: String
    /// The user's unread notifications when the push was claimed: the app icon's badge.
    package var badge: Int
    /// 1 for the first try.
    package var attempt: Int

    package init(
        notification: AppNotification, deviceID: DeviceID, token: String, environment: APNsEnvironment, bundleID: String, badge: Int,
        attempt: Int
    ) {
        self.notification = notification
        self.deviceID = deviceID
        self.token = token
        self.environment = environment
        self.bundleID = bundleID
        self.badge = badge
        self.attempt = attempt
    }
}

/// How one send ended. Which outcome a sender reports decides whether the push is sent again,
/// so a sender reports `retry` only when the push cannot have reached the device.
package enum PushOutcome: Sendable, Equatable {
    /// Accepted; `id` is the provider's id for it (APNs' `apns-id`).
    case sent(id: String?)
    /// Not delivered, and sending it again cannot deliver it twice (APNs said 429 or 5xx, or
    /// the connection failed before the request left). `after`: how long to wait, when the
    /// provider said.
    case retry(reason: String, after: Duration? = nil)
    /// Refused for good, or ended without an answer after the request left (it may have
    /// arrived, so it is not sent again).
    case failed(reason: String)
    /// The token is no longer valid for the app (APNs 410): the device is removed, unless it
    /// registered again after the push was claimed.
    case unregistered(reason: String)
}

/// Sends pushes to devices: APNs in production (OrbitPush), `LoggingPushSender` otherwise.
package protocol PushSender: Sendable {
    /// Sends one push; every way it can end is an outcome, none is thrown.
    func send(_ push: Push) async -> PushOutcome
}

/// A sender that only writes a line per push to standard output (development, tests, and servers
/// without APNs): `push <notification id> to <device token> [<type>] <title>`.
package struct LoggingPushSender: PushSender {
    package init() {}

    package func send(_ push: Push) async -> PushOutcome {
        print("push \(push.notification.id) to \(push.token) [\(push.notification.type)] \(push.notification.title)")
        return .sent(id: nil)
    }
}

/// What one run of delivery did.
package struct DeliveryReport: Sendable, Equatable, CustomStringConvertible {
    /// Notifications handed out (their pushes queued).
    package var notifications = 0
    /// Pushes queued for those notifications' devices.
    package var queued = 0
    package var sent = 0
    /// Sends that will be tried again later.
    package var retrying = 0
    /// Pushes given up: refused, expired, without an answer, or the device moved or unregistered.
    package var failed = 0
    /// Devices removed because APNs said their token is no longer valid.
    package var devicesRemoved = 0

    package init() {}

    package var description: String {
        "\(notifications) notifications handed out, \(queued) pushes queued; \(sent) sent, \(retrying) to retry, \(failed) failed, "
            + "\(devicesRemoved) devices removed"
    }
}
