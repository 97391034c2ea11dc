import AsyncHTTPClient
package import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
package import OrbitCore

/// Sends pushes to APNs over HTTP/2 (async-http-client keeps one multiplexed connection per
/// host) with token authentication, and turns each answer into an outcome: 200 sent; 410
/// unregistered (the device goes); 429, 5xx and connections that failed before the request
/// left are retried later; anything else, and a request that got no answer after it left, is
/// not sent again (it may have arrived).
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
        request.body = .bytes(ByteBuffer(bytes: payload))

        let response: HTTPClientResponse
        let body: ByteBuffer
        do {
            response = try await client.execute(request, timeout: .milliseconds(Self.milliseconds(configuration.requestTimeout)))
            body = try await response.body.collect(upTo: 64 * 1024)
        } catch {
            return Self.outcome(of: error)
        }
        let apnsID = response.headers.first(name: "apns-id")
        let reason = Self.reason(in: body) ?? "HTTP \(response.status.code)"
        switch response.status.code {
        case 200:
            return .sent(id: apnsID)
        case 410:
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

    /// A send that ended without an answer: retried only if the request cannot have left.
    static func outcome(of error: any Error) -> PushOutcome {
        let beforeSending: Bool
        switch error {
        case is NIOConnectionError, is NIOSSLError:
            beforeSending = true
        case let error as HTTPClientError:
            beforeSending = [.connectTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout].contains(error)
        case let error as ChannelError:
            if case .connectTimeout = error { beforeSending = true } else { beforeSending = false }
        default:
            beforeSending = false
        }
        return beforeSending
            ? .retry(reason: "could not connect to APNs: \(error)")
            : .failed(reason: "no answer from APNs, so it may have arrived: \(error)")
    }
}
