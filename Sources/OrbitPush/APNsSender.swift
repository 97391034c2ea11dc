import AsyncHTTPClient
package import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
package import OrbitCore
import Synchronization

/// Sends pushes to APNs over HTTP/2 (async-http-client keeps one multiplexed connection per
/// host) with token authentication, and turns each answer into an outcome: 200 sent; 410
/// `Unregistered`, 400 `BadDeviceToken` and 400 `DeviceTokenNotForTopic` unregistered (the
/// device goes: APNs will never deliver to that token for this app); 429, 5xx and failures
/// before the request was written are retried later; anything else, and a request that got no
/// answer after it was written (a timeout, a TLS or connection error), is not sent again: it may
/// have arrived (issue 37, item 6).
package final class APNsSender: PushSender {
    private let configuration: APNsConfiguration
    private let client: HTTPClient
    private let tokens: APNsTokens
    private let logger = Logger(label: "orbit.push")

    package init(configuration: APNsConfiguration, now: @escaping @Sendable () -> Date = Date.init) async throws {
        self.configuration = configuration
        tokens = try await APNsTokens(keyPEM: configuration.keyPEM, keyID: configuration.keyID, teamID: configuration.teamID, now: now)
        var tls = TLSConfiguration.makeClientConfiguration()
        if let roots = configuration.trustRootsPEM {
            tls.trustRoots = .certificates(try roots.flatMap { try NIOSSLCertificate.fromPEMBytes(Array($0.utf8)) })
        }
        var http = HTTPClient.Configuration(tlsConfiguration: tls)
        http.httpVersion = .automatic
        http.timeout = .init(
            connect: .milliseconds(Self.milliseconds(configuration.connectTimeout)),
            read: .milliseconds(Self.milliseconds(configuration.requestTimeout)))
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: http)
    }

    /// Closes the connections; call once, when the server stops.
    package func shutdown() async throws {
        try await client.shutdown()
    }

    package func send(_ push: Push) async -> PushOutcome {
        guard configuration.environments.contains(push.environment), let host = configuration.hosts[push.environment] else {
            return .failed(reason: "this server does not send to the \(push.environment.rawValue) environment")
        }
        let payload: Data
        let token: String
        do {
            payload = try APNsPayload.encode(push)
            token = try await tokens.token()
        } catch {
            return .failed(reason: "the push could not be made: \(error)")
        }
        var request = HTTPClientRequest(url: host.appendingPathComponent("3/device/\(push.token)").absoluteString)
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(token)")
        request.headers.add(name: "apns-topic", value: push.bundleID)
        request.headers.add(name: "apns-push-type", value: "alert")
        request.headers.add(name: "apns-priority", value: "10")
        let expiry = push.notification.createdAt.addingTimeInterval(NotificationService.pushLifetime)
        request.headers.add(name: "apns-expiration", value: String(Int(expiry.timeIntervalSince1970)))
        // The notification's id: should a copy ever reach the device twice, it shows once.
        request.headers.add(name: "apns-collapse-id", value: push.notification.id.description)
        request.headers.add(name: "content-type", value: "application/json")
        // The body is handed over only after the request's head is written; APNs acts on a
        // request only once its body has arrived. So a failure before the body was asked for
        // cannot have delivered the push, and any failure after may have.
        let written = WrittenMark()
        request.body = .stream(MarkedBody(bytes: ByteBuffer(bytes: payload), written: written), length: .known(Int64(payload.count)))

        let response: HTTPClientResponse
        let body: ByteBuffer
        do {
            response = try await client.execute(request, timeout: .milliseconds(Self.milliseconds(configuration.requestTimeout)))
            body = try await response.body.collect(upTo: 64 * 1024)
        } catch {
            return Self.outcome(of: error, afterWriting: written.isSet)
        }
        let apnsID = response.headers.first(name: "apns-id")
        let reason = Self.reason(in: body) ?? "HTTP \(response.status.code)"
        switch response.status.code {
        case 200:
            return .sent(id: apnsID)
        case 410,
            400 where Self.unregisteringReasons.contains(reason):
            return .unregistered(reason: "APNs: \(reason)")
        case 403 where reason == "ExpiredProviderToken" || reason == "InvalidProviderToken":
            // Nothing was delivered; the next attempt carries a new token.
            await tokens.discard(token)
            return .retry(reason: "APNs: \(reason)")
        case 429, 500...599:
            let after = response.headers.first(name: "retry-after").flatMap(Int.init).map { Duration.seconds($0) }
            return .retry(reason: "APNs: \(reason)", after: after)
        default:
            logger.warning("APNs refused a push", metadata: ["status": "\(response.status.code)", "reason": "\(reason)"])
            return .failed(reason: "APNs \(response.status.code): \(reason)")
        }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// APNs' `{"reason": …}`.
    static func reason(in body: ByteBuffer) -> String? {
        struct Answer: Decodable { var reason: String }
        return try? JSONDecoder().decode(Answer.self, from: Data(body.readableBytesView)).reason
    }

    /// APNs' 400 reasons that mean the token will never work for this app: the token is not a
    /// device's (`BadDeviceToken`, also a token of the other environment) or not this app's
    /// (`DeviceTokenNotForTopic`).
    static let unregisteringReasons: Set<String> = ["BadDeviceToken", "DeviceTokenNotForTopic"]

    /// A send that ended without an answer: retried only when the request had not been written
    /// (the body not yet asked for), whatever the error; once it was, it may have arrived, be the
    /// error a timeout, a reset connection or a TLS error.
    package static func outcome(of error: any Error, afterWriting written: Bool) -> PushOutcome {
        written
            ? .failed(reason: "no answer from APNs after the request was written, so it may have arrived: \(error)")
            : .retry(reason: "could not send to APNs: \(error)")
    }
}

/// Set once the request's body was asked for: from then on the request may reach APNs.
final class WrittenMark: Sendable {
    private let mark = Mutex(false)
    var isSet: Bool { mark.withLock { $0 } }
    func set() { mark.withLock { $0 = true } }
}

/// A request body of one buffer that marks `written` when the client asks for it.
struct MarkedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let bytes: ByteBuffer
    let written: WrittenMark

    struct AsyncIterator: AsyncIteratorProtocol {
        var bytes: ByteBuffer?
        let written: WrittenMark

        mutating func next() async -> ByteBuffer? {
            written.set()
            defer { bytes = nil }
            return bytes
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: bytes, written: written) }
}
