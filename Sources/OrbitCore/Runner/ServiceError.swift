/// What went wrong with a service operation, in terms of the domain. The CLI and the HTTP API
/// map these the same way (400, 401, 403, 404, 409). `description` is one sentence for people and
/// never contains a password or a bound value.
package struct ServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The input is malformed or out of range (`field` says which).
        package static let invalidInput = Code("invalidInput")
        /// The acting user may not do this (`rule` names the permission rule).
        package static let forbidden = Code("forbidden")
        /// The object does not exist, or the acting user cannot see it.
        package static let notFound = Code("notFound")
        /// The request conflicts with the current state (already a member, last admin, …).
        package static let conflict = Code("conflict")
        /// The caller's credentials (a sign-in token, a refresh token) are missing, invalid,
        /// expired or revoked.
        package static let unauthenticated = Code("unauthenticated")
        /// What the request points at is no longer kept (a sync cursor older than the change
        /// log's retention): start over.
        package static let gone = Code("gone")
        /// The database could not do it now (unreachable, overloaded, shutting down, a statement
        /// cancelled, a conflict that did not clear after retries): the same request may succeed
        /// later.
        package static let unavailable = Code("unavailable")
        /// Allowed again after `retryAfter` seconds (a nudge of the same person within a day):
        /// the state's limit, not a rate limiter's.
        package static let tooSoon = Code("tooSoon")

        package var description: String { name }
    }

    package var code: Code
    /// For `.invalidInput`: the field, named as in the spec (`display_name`, `settings.timezone`).
    package var field: String?
    /// For `.forbidden`: the rule of the permission matrix, e.g. "only admins can remove members".
    package var rule: String?
    package var message: String
    /// For `.tooSoon`: seconds until it is allowed.
    package var retryAfter: Int?

    package var description: String { message }

    package static func invalidInput(field: String, reason: String) -> ServiceError {
        ServiceError(code: .invalidInput, field: field, message: "\(field) \(reason).")
    }

    package static func forbidden(rule: String) -> ServiceError {
        ServiceError(code: .forbidden, rule: rule, message: "Forbidden: \(rule).")
    }

    package static func notFound(_ what: String) -> ServiceError {
        ServiceError(code: .notFound, message: "\(what) was not found.")
    }

    package static func conflict(_ reason: String) -> ServiceError {
        ServiceError(code: .conflict, message: reason)
    }

    /// A well-formed value that the current state refuses: the post named is not a poll, the
    /// event is (or is not) recurring, the user named is not a member. 409, naming the field, so
    /// that 400 keeps meaning "malformed whatever the state" — what openapi.yaml can promise.
    package static func conflict(field: String, reason: String) -> ServiceError {
        ServiceError(code: .conflict, field: field, message: "\(field) \(reason).")
    }

    package static func gone(_ reason: String) -> ServiceError {
        ServiceError(code: .gone, message: reason)
    }

    package static func unavailable(_ reason: String) -> ServiceError {
        ServiceError(code: .unavailable, message: reason)
    }

    package static func tooSoon(_ reason: String, retryAfter seconds: Int) -> ServiceError {
        ServiceError(code: .tooSoon, message: reason, retryAfter: max(1, seconds))
    }

    package static func unauthenticated(_ reason: String) -> ServiceError {
        ServiceError(code: .unauthenticated, message: reason)
    }
}
