package import Foundation

/// A balance (positive = is owed), in minor units.
package struct Balance: Sendable, Codable, Equatable {
    package var userID: UserID
    package var currency: String
    package var balance: Int64

    enum CodingKeys: String, CodingKey { case userID = "user_id", currency, balance }
}
