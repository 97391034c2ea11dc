package import Foundation
import OrbitPostgres

/// Which APNs environment a device token belongs to: a development build's tokens work only
/// with `api.sandbox.push.apple.com`, a TestFlight or App Store build's only with
/// `api.push.apple.com`.
package enum APNsEnvironment: String, DatabaseEnum {
    case sandbox, production
}

/// An APNs device token registered by a user: where their pushes go (issue 21).
package struct Device: Sendable, Codable, Equatable {
    package var id: DeviceID
    package var userID: UserID
    /// Hex, lower case.
    package var token: String
    package var environment: APNsEnvironment
    /// The app's bundle id: the `apns-topic` of its pushes.
    package var bundleID: String
    /// The language of the device (`en-US`), for the text of pushes; nil when not given.
    package var locale: String?
    package var createdAt: Date
    package var updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case id, userID = "user_id", token, environment, bundleID = "bundle_id", locale, createdAt = "created_at", updatedAt = "updated_at"
    }

    static let columns = "id, user_id, token, environment, bundle_id, locale, created_at, updated_at"

    init(row: PostgresRow) throws {
        (id, userID, token, environment, bundleID, locale, createdAt, updatedAt) = try row.decode(
            (DeviceID, UserID, String, APNsEnvironment, String, String?, Date, Date).self)
    }
}
