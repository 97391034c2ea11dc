package import Hummingbird
import Logging
import NIOCore
package import OrbitCore
import Synchronization

/// The per-request context of the API: Hummingbird's core storage, plus who is calling.
package struct APIContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The signed-in user, set by `AuthenticationMiddleware` on routes that need one.
    package var user: UserID?
    /// The signed-in child and their device (a child's token, docs/chores.md): set instead of `user`.
    package var child: ChildSession?
    /// The peer's IP address (per-IP rate limits); nil for in-process requests.
    package var remoteAddress: String?
    /// The request id, in logs and in the `X-Request-ID` response header.
    package var requestID: String
    /// What inner middleware learn that the request log (outermost) reports.
    let notes = RequestNotes()

    package init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress?.ipAddress
        requestID = source.logger[metadataKey: "hb.request.id"]?.description ?? RequestID.next()
    }

    /// JSON request bodies above 1 MiB are refused with 413 (media uploads set their own limit).
    package var maxUploadSize: Int { APIJSON.maximumBodySize }
    package var requestDecoder: APIJSON.Decoder { APIJSON.Decoder() }
    package var responseEncoder: APIJSON.Encoder { APIJSON.Encoder() }

    /// The signed-in user; routes behind `AuthenticationMiddleware` always have one.
    func requireUser() throws -> UserID {
        guard let user else {
            if child != nil {
                throw APIProblem(
                    "forbidden", title: "Forbidden", status: .forbidden,
                    detail: "A child's token reaches only their chores, rewards and points.", rule: "a child's token is scoped to chores")
            }
            throw APIProblem.unauthenticated("Sign in first: send Authorization: Bearer <access token>.")
        }
        return user
    }

    /// The signed-in user or child (the chore routes serve both).
    func requirePrincipal() throws -> Principal {
        if let child { return .child(child) }
        return .user(try requireUser())
    }
}

/// Facts about a request that middleware further in learn, for the request log further out
/// (contexts are values, so a change made inside does not travel back out).
final class RequestNotes: Sendable {
    private let storage = Mutex<UserID?>(nil)

    var user: UserID? {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}

/// Request ids for requests that arrive without Hummingbird's (in-process tests).
enum RequestID {
    static func next() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(UInt64.random(in: .min ... .max, using: &generator), radix: 16)
    }
}
