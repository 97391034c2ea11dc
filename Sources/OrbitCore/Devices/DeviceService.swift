import OrbitPostgres

/// The APNs device tokens of the acting user (issue 21). Row-level security keeps each user to
/// their own; a token registered again under another user moves to them (`orbit.register_device`).
package struct DeviceService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// Registers (or refreshes) a device token for the acting user and returns its row.
    /// - Parameters:
    ///   - token: hex, 64 to 200 digits (32 bytes today; Apple may lengthen it), any case.
    ///   - bundleID: the app's bundle id, the `apns-topic` of its pushes.
    ///   - locale: a language tag such as `en-US` or `de_CH`, or nil.
    package func register(token: String, environment: APNsEnvironment, bundleID: String, locale: String?, as actor: UserID) async throws
        -> Device
    {
        let token = try Self.validToken(token)
        guard Self.isBundleID(bundleID) else {
            throw ServiceError.invalidInput(field: "bundle_id", reason: "must be a bundle id such as app.orbitcove.ios")
        }
        if let locale, !Self.isLocale(locale) {
            throw ServiceError.invalidInput(field: "locale", reason: "must be a language tag such as en-US")
        }
        // The user's language, when they have none yet, is their first device's (docs/api.md).
        let language = locale.map { LanguageTag.canonical($0) }
        return try await runner.asUser(actor) { connection in
            let device = try Device(
                row: try await connection.query(
                    """
                    SELECT \(unescaped: Device.columns)
                    FROM orbit.register_device(\(token), \(environment.rawValue), \(bundleID), \(locale))
                    """
                ).single())
            if let language {
                try await connection.query("UPDATE users SET language = \(language) WHERE id = \(actor) AND language IS NULL")
            }
            return device
        }
    }

    /// The acting user's devices, newest registration first.
    package func list(as actor: UserID) async throws -> [Device] {
        try await runner.asUser(actor) { connection in
            try await connection.query("SELECT \(unescaped: Device.columns) FROM devices ORDER BY updated_at DESC, id").map(Device.init(row:))
        }
    }

    /// Removes one of the acting user's device tokens (signing out on that phone). A token the
    /// user does not have is not found.
    package func remove(token: String, as actor: UserID) async throws {
        let token = try Self.validToken(token)
        try await runner.asUser(actor) { connection in
            let deleted = try await connection.query("DELETE FROM devices WHERE token = \(token) AND user_id = \(actor)").affectedRows
            guard deleted == 1 else { throw ServiceError.notFound("Device \(token)") }
        }
    }

    /// Removes every device of `user`, in the caller's transaction (account deletion).
    static func removeAll(of user: UserID, on connection: PostgresConnection) async throws {
        try await connection.query("DELETE FROM devices WHERE user_id = \(user)")
    }

    /// The token in lower case, or a refusal: an even number of 64 to 200 hex digits.
    static func validToken(_ token: String) throws -> String {
        let bytes = Array(token.utf8)
        guard (64...200).contains(bytes.count), bytes.count % 2 == 0,
            bytes.allSatisfy(Validate.isHexDigit)
        else {
            throw ServiceError.invalidInput(field: "token", reason: "must be the device token in hex (64 to 200 digits)")
        }
        return token.lowercased()
    }

    /// `^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$`, at most 155 characters.
    static func isBundleID(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return text.utf8.count <= 155
            && parts.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy(Validate.isLabelByte) }
    }

    /// `^[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8}){0,3}$`
    static func isLocale(_ text: String) -> Bool {
        let parts = text.split(omittingEmptySubsequences: false) { $0 == "-" || $0 == "_" }
        let letters = { (part: Substring) in part.utf8.allSatisfy(Validate.isLetter) }
        let alphanumerics = { (part: Substring) in part.utf8.allSatisfy { Validate.isLetter($0) || Validate.isDigit($0) } }
        guard let first = parts.first, (2...3).contains(first.count), letters(first), parts.count <= 4 else { return false }
        return parts.dropFirst().allSatisfy { (2...8).contains($0.count) && alphanumerics($0) }
    }
}
