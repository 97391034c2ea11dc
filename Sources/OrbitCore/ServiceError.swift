/// What went wrong with a service operation, in terms of the domain. The CLI and the HTTP API
/// map these the same way (400, 401, 403, 404, 409). `description` is one sentence for people and
/// never contains a password or a bound value.
public struct ServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The input is malformed or out of range (`field` says which).
        public static let invalidInput = Code("invalidInput")
        /// The acting user may not do this (`rule` names the permission rule).
        public static let forbidden = Code("forbidden")
        /// The object does not exist, or the acting user cannot see it.
        public static let notFound = Code("notFound")
        /// The request conflicts with the current state (already a member, last admin, …).
        public static let conflict = Code("conflict")
        /// The caller's credentials (a sign-in token, a refresh token) are missing, invalid,
        /// expired or revoked.
        public static let unauthenticated = Code("unauthenticated")

        public var description: String { name }
    }

    public var code: Code
    /// For `.invalidInput`: the field, named as in the spec (`display_name`, `settings.timezone`).
    public var field: String?
    /// For `.forbidden`: the rule of the permission matrix, e.g. "only admins can remove members".
    public var rule: String?
    public var message: String

    public var description: String { message }

    public static func invalidInput(field: String, reason: String) -> ServiceError {
        ServiceError(code: .invalidInput, field: field, message: "\(field) \(reason).")
    }

    public static func forbidden(rule: String) -> ServiceError {
        ServiceError(code: .forbidden, rule: rule, message: "Forbidden: \(rule).")
    }

    public static func notFound(_ what: String) -> ServiceError {
        ServiceError(code: .notFound, message: "\(what) was not found.")
    }

    public static func conflict(_ reason: String) -> ServiceError {
        ServiceError(code: .conflict, message: reason)
    }

    public static func unauthenticated(_ reason: String) -> ServiceError {
        ServiceError(code: .unauthenticated, message: reason)
    }
}
