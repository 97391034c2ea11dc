import Crypto
import Foundation
import Hummingbird
import NIOCore
import OrbitCore
import Synchronization

/// Requires `Authorization: Bearer <access token>` and puts the user into the context.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let tokens: AccessTokens

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw APIProblem.unauthenticated("Sign in first: send Authorization: Bearer <access token>.")
        }
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw APIProblem.unauthenticated("The Authorization header must be Bearer <access token>.")
        }
        guard let principal = await tokens.verifyPrincipal(String(header.dropFirst(7))) else {
            throw APIProblem.unauthenticated("The access token is invalid or has expired; refresh it with POST /auth/refresh.")
        }
        var context = context
        switch principal {
        case .user(let user):
            context.user = user
            context.notes.user = user
        case .child(let child):
            context.child = child
        }
        return try await next(request, context)
    }
}

/// Per-IP limits on sign-in (`auth`) and on the other routes without a token (`byIP`: the
/// calendar feeds, the webhooks, each its own bucket), per-user limits on writes (every method
/// but GET/HEAD).
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = APIContext
    enum Scope {
        case authByIP, writesByUser
        /// Every request from one client address, counted under `name`.
        case byIP(String)
    }
    let limiter: RateLimiter
    let scope: Scope
    let limit: RateLimiter.Limit

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        let key: String?
        switch scope {
        case .authByIP:
            key = "auth:" + (context.remoteAddress ?? "local")
        case .byIP(let name):
            key = name + ":" + (context.remoteAddress ?? "local")
        case .writesByUser:
            let writer = context.user.map { "write:\($0)" } ?? context.child.map { "write:child:\($0.child)" }
            key = request.method == .get || request.method == .head ? nil : writer
        }
        if let key, let retryAfter = limiter.acquire(key, limit: limit) {
            throw APIProblem.rateLimited(retryAfter: retryAfter)
        }
        return try await next(request, context)
    }
}

/// Reads a JSON request body into memory once, before anything else reads it: a body arrives as
/// a stream that can be read once, and more than one step reads it (the idempotency layer, a
/// create with a client's id, the route's decoding). A file upload (any other type) stays a
/// stream for its route.
struct BufferedJSONBody: RouterMiddleware {
    typealias Context = APIContext

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        guard [.post, .put, .patch].contains(request.method),
            request.headers[.contentType].map({ $0.lowercased().hasPrefix("application/json") }) ?? true
        else { return try await next(request, context) }
        var request = request
        _ = try await request.collectBody(upTo: context.maxUploadSize)
        return try await next(request, context)
    }
}

/// `Idempotency-Key` on authenticated POSTs: the first response (success or a 4xx refusal) is
/// stored per user for `lifetime` and replayed to every retry with the same key and request;
/// the same key with a different request is refused. Server errors release the key. A JSON
/// request is its method, path and canonical body; a file upload its method, path, type and length.
struct IdempotencyMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let services: OrbitServices
    let lifetime: Duration

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        guard request.method == .post, let key = request.headers[APIHeaders.idempotencyKey], let user = context.user else {
            return try await next(request, context)
        }
        var request = request
        var hasher = SHA256()
        hasher.update(data: RequestFingerprint.head(of: request))
        if let type = request.headers[.contentType], !type.lowercased().hasPrefix("application/json") {
            // A file (a media upload) is streamed by its route, never held here: the request is
            // its path, type and length, so a retry of the same upload is recognised, and one
            // with another file of another length is refused.
            hasher.update(data: Array(type.utf8) + [0] + Array((request.headers[.contentLength] ?? "").utf8))
        } else {
            let body = try await request.collectBody(upTo: context.maxUploadSize)
            hasher.update(data: RequestFingerprint.canonical(Data(buffer: body)))
        }
        let hash = hasher.finalize().map { String(format: "%02x", $0) }.joined()

        switch try await services.idempotency.begin(key: key, requestHash: hash, lifetime: lifetime, as: user) {
        case .replay(let status, let stored):
            var response = Response(
                status: HTTPResponse.Status(code: status),
                headers: [.contentType: status < 300 ? "application/json; charset=utf-8" : "application/problem+json"],
                body: ResponseBody(byteBuffer: ByteBuffer(data: stored))
            )
            response.headers[APIHeaders.idempotentReplayed] = "true"
            return response
        case .inProgress:
            throw APIProblem(
                "idempotency-in-progress", title: "Request in progress", status: .conflict,
                detail: "A request with this Idempotency-Key is still being processed; retry shortly."
            )
        case .mismatch:
            throw APIProblem(
                "idempotency-mismatch", title: "Idempotency-Key reused", status: .unprocessableContent,
                detail: "This Idempotency-Key was used for a different request.", field: "Idempotency-Key"
            )
        case .proceed:
            break
        }

        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as APIProblem where error.status < 500 {
            response = error.response(requestID: context.requestID)
        } catch let error as ServiceError {
            response = APIProblem(error).response(requestID: context.requestID)
        } catch {
            try await services.idempotency.abandon(key: key, as: user)
            throw error
        }
        guard response.status.code < 500 else {
            try await services.idempotency.abandon(key: key, as: user)
            return response
        }
        let collector = BodyCollector()
        try await response.body.write(collector)
        let responseBody = collector.buffer
        try await services.idempotency.complete(key: key, status: response.status.code, body: Data(buffer: responseBody), as: user)
        response.body = ResponseBody(byteBuffer: responseBody)
        return response
    }
}

/// Reads a response body into one buffer (a reference: `ResponseBody.write` consumes its writer).
final class BodyCollector: ResponseBodyWriter, Sendable {
    private let storage = Mutex(ByteBuffer())

    var buffer: ByteBuffer { storage.withLock { $0 } }

    func write(_ buffer: ByteBuffer) async throws {
        storage.withLock { stored in
            var buffer = buffer
            stored.writeBuffer(&buffer)
        }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}

/// `Access-Control-Expose-Headers` on the responses themselves, where browsers read it
/// (Hummingbird's `CORSMiddleware` sends it only with preflight answers): a web app can then
/// read the `ETag` it needs for `If-Match`, the read-after position and the request id.
struct ExposeHeadersMiddleware: RouterMiddleware {
    typealias Context = APIContext
    static let exposed = ["ETag", "Orbit-Read-After", "X-Request-ID", "Retry-After"]

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        if request.method != .options, request.headers.contains(.origin) {
            response.headers[.accessControlExposeHeaders] = Self.exposed.joined(separator: ", ")
        }
        return response
    }
}
