import Foundation

/// The bearer secrets the server hands out (refresh tokens, a child's device token, a calendar
/// feed's address): 32 random bytes, base64url without padding (43 characters).
enum SecretToken {
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Whether `token` could be one: base64url, at most 100 characters (room for a longer format
    /// later). Anything else is unknown without a query.
    static func hasShape(_ token: String) -> Bool {
        (1...100).contains(token.utf8.count) && token.utf8.allSatisfy { Validate.isLabelByte($0) || $0 == UInt8(ascii: "_") }
    }
}
