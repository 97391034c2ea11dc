import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OrbitCore
import OrbitPostgres

/// An RFC 9457 problem: what every error response of the API is (`application/problem+json`).
///
/// `type` is stable per kind of error, for apps to switch on; `detail` is one sentence for
/// people. No problem carries a stack trace, SQL, or anything of another community.
package struct APIProblem: Error, Sendable, OmitsNilMembers {
    package var type: String
    package var title: String
    package var status: Int
    package var detail: String
    /// The failing field of a validation problem (`name`, `splits.shares`, `cursor`).
    package var field: String?
    /// The permission rule a forbidden request broke.
    package var rule: String?
    package var requestID: String?
    /// Seconds to wait (rate limits), also sent as `Retry-After`.
    package var retryAfter: Int?

    enum CodingKeys: String, CodingKey {
        case type, title, status, detail, field, rule, requestID = "request_id", retryAfter = "retry_after"
    }

    static let typeBase = "https://orbitcove.app/problems/"

    init(_ slug: String, title: String, status: HTTPResponse.Status, detail: String, field: String? = nil, rule: String? = nil) {
        self.type = Self.typeBase + slug
        self.title = title
        self.status = status.code
        self.detail = detail
        self.field = field
        self.rule = rule
    }

    static func validation(field: String?, _ detail: String) -> APIProblem {
        APIProblem("validation", title: "Invalid request", status: .badRequest, detail: detail, field: field)
    }

    static func unauthenticated(_ detail: String) -> APIProblem {
        APIProblem("unauthenticated", title: "Not signed in", status: .unauthorized, detail: detail)
    }

    static func notFound(_ detail: String) -> APIProblem {
        APIProblem("not-found", title: "Not found", status: .notFound, detail: detail)
    }

    static func rateLimited(retryAfter: Int) -> APIProblem {
        var problem = APIProblem(
            "rate-limited", title: "Too many requests", status: .tooManyRequests,
            detail: "Too many requests; try again in \(retryAfter) second\(retryAfter == 1 ? "" : "s")."
        )
        problem.retryAfter = retryAfter
        return problem
    }

    /// A feature this server was started without (`missing` says which setting it needs).
    static func notConfigured(_ missing: String) -> APIProblem {
        APIProblem(
            "not-configured", title: "Not configured", status: .notImplemented,
            detail: "This server is not configured for this: it needs \(missing).")
    }

    static let internalError = APIProblem(
        "internal", title: "Internal server error", status: .internalServerError,
        detail: "Something went wrong on our side. The request id identifies it in our logs."
    )

    init(_ error: ServiceError) {
        switch error.code {
        case .invalidInput:
            self = .validation(field: error.field, error.message)
        case .forbidden:
            self.init("forbidden", title: "Forbidden", status: .forbidden, detail: error.message, rule: error.rule)
        case .notFound:
            self = .notFound(error.message)
        case .conflict:
            self.init("conflict", title: "Conflict", status: .conflict, detail: error.message, field: error.field)
        case .unauthenticated:
            self = .unauthenticated(error.message)
        case .gone:
            self.init("resync", title: "Resync from scratch", status: .gone, detail: error.message)
        case .unavailable:
            self.init("unavailable", title: "Service unavailable", status: .serviceUnavailable, detail: error.message)
            retryAfter = 1
        case .tooSoon:
            self.init("too-soon", title: "Too soon", status: .tooManyRequests, detail: error.message)
            retryAfter = error.retryAfter ?? 1
        default:
            self = .internalError
        }
    }

    /// A body that does not decode: names the field by its path, never echoes the value.
    init(decoding error: DecodingError) {
        func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String? {
            let keys = codingPath + (last.map { [$0] } ?? [])
            let parts = keys.map { $0.intValue.map { "[\($0)]" } ?? Self.snakeCase($0.stringValue) }
            let joined = parts.reduce("") { result, part in
                part.hasPrefix("[") || result.isEmpty ? result + part : result + "." + part
            }
            return joined.isEmpty ? nil : joined
        }
        switch error {
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath, key)
            self = .validation(field: field, "\(field ?? "a field") is required.")
        case .typeMismatch(let type, let context):
            let field = path(context.codingPath)
            self = .validation(field: field, "\(field ?? "The body") must be \(Self.describe(type)).")
        case .valueNotFound(let type, let context):
            let field = path(context.codingPath)
            self = .validation(field: field, "\(field ?? "The body") must be \(Self.describe(type)), not null.")
        case .dataCorrupted(let context):
            let field = path(context.codingPath)
            if let field {
                self = .validation(
                    field: field, "\(field) \(context.debugDescription.hasPrefix("must") ? context.debugDescription : "is not valid").")
            } else {
                self = .validation(field: nil, "The body is not valid JSON.")
            }
        @unknown default:
            self = .validation(field: nil, "The body is not valid.")
        }
    }

    /// A request property's JSON name (`displayName` is `display_name`); camelCase keys that
    /// are stored as such (community settings) cannot be told apart and come out in snake_case.
    static func snakeCase(_ key: String) -> String {
        var result = ""
        for character in key {
            if character.isUppercase, !result.isEmpty { result += "_" }
            result += character.lowercased()
        }
        return result
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type, is Int32.Type: "an integer"
        case is Double.Type: "a number"
        case is Bool.Type: "true or false"
        case is [Any].Type: "an array"
        default: "an object"
        }
    }

    func response(requestID: String) -> Response {
        var problem = self
        problem.requestID = requestID
        let data = (try? APIJSON.encode(problem)) ?? Data()
        var headers: HTTPFields = [.contentType: "application/problem+json"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if status == 401 { headers[.wwwAuthenticate] = "Bearer" }
        return Response(status: HTTPResponse.Status(code: status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(data: data)))
    }
}

/// Turns every error into a problem response and logs each request once: method, route,
/// status, duration, request id and user id (never a header, a token or a body).
struct ProblemMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let metrics: APIMetrics
    let routes: RouteTable

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        metrics.requestStarted()
        defer { metrics.requestEnded() }
        var context = context
        context.logger[metadataKey: "request_id"] = .string(context.requestID)
        var response: Response
        // Read-your-writes across servers: the position the client's last write reached, and
        // (below) the position of this request's write, for the client to send next time.
        let consistency = RequestConsistency(readAfter: request.headers[APIHeaders.readAfter])
        do {
            // The client's address reaches the audit log through the service layer.
            response = try await RequestRunner.$clientAddress.withValue(context.remoteAddress) {
                try await RequestRunner.$consistency.withValue(consistency) { try await next(request, context) }
            }
        } catch let failed as PreconditionFailed {
            // If-Match named an older version: the current one goes back with the 412.
            do {
                response = try failed.response(requestID: context.requestID)
            } catch {
                context.logger.error("the current version did not encode", metadata: ["error": .string(ErrorLog.describe(error))])
                response = APIProblem.internalError.response(requestID: context.requestID)
            }
        } catch {
            response = problem(for: error, request: request, context: context).response(requestID: context.requestID)
            if response.status == .methodNotAllowed {
                response.headers[.allow] = routes.methods(for: request.uri.path).joined(separator: ", ")
            }
        }
        response.headers[.requestID] = context.requestID
        if let wrote = consistency.wrote { response.headers[APIHeaders.readAfter] = wrote }
        let elapsed = ContinuousClock.now - started
        let route = context.endpointPath ?? "unmatched"
        metrics.record(method: request.method.rawValue, route: route, status: response.status.code, duration: elapsed)
        // Every request at info; a 5xx also when only warnings are logged, so that an operator
        // (and scripts/schemathesis.sh, which prints the server's warnings when a check fails)
        // learns which route failed, whatever the level. Not a 501: a provider this server is
        // not configured for is its settings' answer, not a failure.
        let failed = response.status.code >= 500 && response.status != .notImplemented
        if context.logger.logLevel <= .info || failed {
            let microseconds = elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
            var metadata: Logger.Metadata = [
                "method": .string(request.method.rawValue), "route": .string(route), "status": .stringConvertible(response.status.code),
                "duration_ms": .string("\(microseconds / 1000).\(String(microseconds % 1000 + 1000).dropFirst())"),
            ]
            if let user = context.notes.user { metadata["user_id"] = .string(user.description) }
            if failed {
                context.logger.warning("request failed", metadata: metadata)
            } else {
                context.logger.info("request", metadata: metadata)
            }
        }
        return response
    }

    private func problem(for error: any Error, request: Request, context: APIContext) -> APIProblem {
        switch error {
        case let problem as APIProblem:
            return problem
        case let error as ServiceError:
            return APIProblem(error)
        case let error as DecodingError:
            return APIProblem(decoding: error)
        case let error as PaymentProviderError:
            // Stripe refused or could not be reached: nothing was created; the app may try again.
            context.logger.warning("payment provider failed", metadata: ["error": .string(error.message)])
            return APIProblem(
                "payment-provider", title: "Payment provider failed", status: .badGateway,
                detail: "The payment provider did not make the checkout; nothing was charged. Try again later.")
        case let error as any HTTPResponseError:
            // Hummingbird's own refusals: no route, a body over the limit, a malformed request.
            switch error.status {
            case .notFound where !routes.methods(for: request.uri.path).isEmpty, .methodNotAllowed:
                return APIProblem(
                    "method-not-allowed", title: "Method not allowed", status: .methodNotAllowed,
                    detail: "\(request.method.rawValue) is not allowed here.")
            case .notFound:
                return .notFound("No such endpoint: \(request.method.rawValue) \(request.uri.path).")
            case .contentTooLarge:
                return APIProblem("payload-too-large", title: "Payload too large", status: .contentTooLarge, detail: "The request body is too large.")
            case .badRequest:
                return .validation(field: nil, "The request is not valid.")
            default:
                return APIProblem("http", title: error.status.reasonPhrase, status: error.status, detail: error.status.reasonPhrase + ".")
            }
        default:
            context.logger.error("unhandled error", metadata: ["error": .string(ErrorLog.describe(error))])
            return .internalError
        }
    }
}

enum APIHeaders {
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let idempotentReplayed = HTTPField.Name("Idempotent-Replayed")!
    /// Read-your-writes with read replicas: a response to a request that wrote carries the
    /// primary's WAL position after it; a request that carries it back reads only from a
    /// replica that has replayed that far (any server of the fleet honours it).
    static let readAfter = HTTPField.Name("Orbit-Read-After")!
}

extension HTTPField.Name {
    static let requestID = HTTPField.Name("X-Request-ID")!
}
