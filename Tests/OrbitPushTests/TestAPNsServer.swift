import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import OrbitTestSupport
import SwiftASN1
import Synchronization
import X509

/// A stand-in for APNs' provider API: HTTP/2 only, over TLS with a certificate made for the
/// test, checking what APNs checks before it accepts a push — the path, the method, the
/// headers, the provider token (ES256 signature with the team's key, `kid`, `iss`, an `iat`
/// under an hour old) and the payload (JSON with `aps`, at most 4 KB) — and answering as APNs
/// does: 200 with an `apns-id`, or an error status with `{"reason": …}`.
///
/// Tokens can be scripted to answer 400, 410 or 429 (or anything else, with any reason) before
/// the checks, to answer nothing, or to break the connection's TLS once the request is in.
final class TestAPNsServer: Sendable {
    struct Received: Sendable {
        var token: String
        var headers: [String: String]
        /// The body as JSON text.
        var body: String
        var status: Int
        var reason: String?

        var payload: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]) ?? [:]
        }
    }

    struct Expectations: Sendable {
        var keyID: String
        var teamID: String
        var publicKey: P256.Signing.PublicKey
    }

    /// What a scripted request gets instead of the normal checks.
    enum Scripted: Sendable {
        /// This status, with this reason (APNs' usual one for the status when nil).
        case answer(Int, reason: String? = nil)
        /// Nothing at all: the request is taken and never answered.
        case silence
        /// Bytes that are not TLS, written under the connection's TLS once the whole request is
        /// in: the client's TLS fails after it wrote the request (and no answer comes).
        case brokenTLS
        /// The connection closed under its TLS (no close_notify) once the whole request is in: an
        /// unclean TLS shutdown after the client wrote the request.
        case uncleanTLSClose
    }

    final class Shared: Sendable {
        struct State {
            var received: [Received] = []
            var scripts: [String: [Scripted]] = [:]
            var now: Date?
            /// The TLS faults written to the socket (`brokenTLS`, `uncleanTLSClose`).
            var faultsInjected = 0
        }
        let state = Mutex(State())
        let expectations: Expectations
        init(_ expectations: Expectations) { self.expectations = expectations }
    }

    let port: Int
    let certificatePEM: String
    private let channel: any Channel
    private let shared: Shared

    var received: [Received] { shared.state.withLock { $0.received } }
    /// The TLS faults that were injected: a test of one checks it was.
    var faultsInjected: Int { shared.state.withLock { $0.faultsInjected } }
    /// The pushes APNs would have delivered.
    var delivered: [Received] { received.filter { $0.status == 200 } }
    var url: URL { URL(string: "https://localhost:\(port)")! }

    /// Makes `token`'s next requests answer `statuses`, one each, before the normal checks; 0
    /// answers nothing at all.
    func script(_ token: String, _ statuses: [Int]) {
        script(token, statuses.map { $0 == 0 ? .silence : .answer($0) })
    }

    /// Makes `token`'s next requests get `answers`, one each, before the normal checks.
    func script(_ token: String, _ answers: [Scripted]) {
        shared.state.withLock { $0.scripts[token, default: []] += answers }
    }

    /// The server's clock for a token's age (the real time when nil).
    func setNow(_ now: Date?) {
        shared.state.withLock { $0.now = now }
    }

    static func start(expecting expectations: Expectations) async throws -> TestAPNsServer {
        let certificate = try LocalhostCertificate()
        let pem = certificate.pem
        var tls = certificate.serverTLS
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let shared = Shared(expectations)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // Under TLS: what `brokenTLS` writes goes to the socket as it is.
                    try channel.pipeline.syncOperations.addHandler(UnderTLS())
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                }.flatMap {
                    channel.configureHTTP2Pipeline(mode: .server) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandlers([
                                HTTP2FramePayloadToHTTP1ServerCodec(), APNsStreamHandler(shared: shared),
                            ])
                        }
                    }.map { _ in }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return TestAPNsServer(port: channel.localAddress?.port ?? 0, certificatePEM: pem, channel: channel, shared: shared)
    }

    private init(port: Int, certificatePEM: String, channel: any Channel, shared: Shared) {
        self.port = port
        self.certificatePEM = certificatePEM
        self.channel = channel
        self.shared = shared
    }

    func stop() async throws {
        try await channel.close()
    }
}

/// One HTTP/2 stream: one request, checked and answered.
private final class APNsStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let shared: TestAPNsServer.Shared
    var head: HTTPRequestHead?
    var body = ByteBuffer()

    init(shared: TestAPNsServer.Shared) { self.shared = shared }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body(var chunk): body.writeBuffer(&chunk)
        case .end:
            guard let head else { return }
            let (status, reason) = answer(head)
            if status == 0 { return }
            if status < 0 {
                // The stream's connection is its parent channel; `UnderTLS` sits below its TLS.
                // A fault that cannot be injected is not passed over: the stream is reset (the
                // sender then fails at once, with another error) and nothing is counted.
                guard let connection = context.channel.parent, let under = try? connection.pipeline.syncOperations.context(handlerType: UnderTLS.self)
                else {
                    context.close(promise: nil)
                    return
                }
                // Counted before it happens: the client may see it before this thread goes on.
                shared.state.withLock { $0.faultsInjected += 1 }
                if status == -1 {
                    under.writeAndFlush(
                        NIOAny(ByteBuffer(bytes: [0x17, 0x03, 0x03, 0x00, 0x10] + [UInt8](repeating: 0xA5, count: 16))), promise: nil)
                } else {
                    under.close(promise: nil)
                }
                return
            }
            var headers = HTTPHeaders([("apns-id", UUID().uuidString)])
            var response = ByteBuffer()
            if let reason {
                response.writeString("{\"reason\":\"\(reason)\"\(status == 410 ? ",\"timestamp\":\(Int(Date().timeIntervalSince1970 * 1000))" : "")}")
                headers.add(name: "content-type", value: "application/json")
            }
            headers.add(name: "content-length", value: "\(response.readableBytes)")
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: .init(statusCode: status), headers: headers))), promise: nil)
            if response.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(response))), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    /// The status and reason APNs would answer, recorded.
    private func answer(_ head: HTTPRequestHead) -> (Int, String?) {
        let token = head.uri.hasPrefix("/3/device/") ? String(head.uri.dropFirst("/3/device/".count)) : ""
        let (status, reason) = shared.state.withLock { state -> (Int, String?) in
            if var script = state.scripts[token], !script.isEmpty {
                let scripted = script.removeFirst()
                state.scripts[token] = script
                let reasons = [
                    400: "BadDeviceToken", 410: "Unregistered", 429: "TooManyRequests", 500: "InternalServerError", 503: "ServiceUnavailable",
                ]
                switch scripted {
                case .answer(let status, let reason): return (status, reason ?? reasons[status] ?? "Scripted")
                case .silence: return (0, nil)
                case .brokenTLS: return (-1, nil)
                case .uncleanTLSClose: return (-2, nil)
                }
            }
            return check(head, token: token, now: state.now ?? Date())
        }
        var headers: [String: String] = [:]
        for (name, value) in head.headers { headers[name.lowercased()] = value }
        let received = TestAPNsServer.Received(
            token: token, headers: headers, body: String(buffer: body), status: status, reason: reason)
        shared.state.withLock { $0.received.append(received) }
        return (status, reason)
    }

    /// APNs' checks, in its order (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    private func check(_ head: HTTPRequestHead, token: String, now: Date) -> (Int, String?) {
        let expected = shared.expectations
        guard head.method == .POST else { return (405, "MethodNotAllowed") }
        guard !token.isEmpty else { return (404, "BadPath") }
        guard token.count >= 64, token.count % 2 == 0, token.allSatisfy(\.isHexDigit) else { return (400, "BadDeviceToken") }
        let headers = head.headers
        guard let authorization = headers.first(name: "authorization"), authorization.hasPrefix("bearer ") else {
            return (403, "MissingProviderToken")
        }
        if let problem = checkProviderToken(String(authorization.dropFirst("bearer ".count)), expected: expected, now: now) {
            return (403, problem)
        }
        guard let topic = headers.first(name: "apns-topic"), !topic.isEmpty else { return (400, "MissingTopic") }
        guard let pushType = headers.first(name: "apns-push-type"),
            ["alert", "background", "voip", "complication", "fileprovider", "mdm", "liveactivity"].contains(pushType)
        else { return (400, "InvalidPushType") }
        if let priority = headers.first(name: "apns-priority"), !["10", "5", "1"].contains(priority) { return (400, "BadPriority") }
        if let expiration = headers.first(name: "apns-expiration"), Int(expiration) == nil { return (400, "BadExpirationDate") }
        if let collapse = headers.first(name: "apns-collapse-id"), collapse.utf8.count > 64 { return (400, "BadCollapseId") }
        guard body.readableBytes > 0 else { return (400, "PayloadEmpty") }
        guard body.readableBytes <= 4096 else { return (413, "PayloadTooLarge") }
        guard let json = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any], json["aps"] is [String: Any]
        else { return (400, "BadMessageId") }
        return (200, nil)
    }

    /// nil when the token is one APNs accepts; otherwise its reason.
    private func checkProviderToken(_ token: String, expected: TestAPNsServer.Expectations, now: Date) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Self.base64URL(parts[0]), let claimsData = Self.base64URL(parts[1]),
            let signatureData = Self.base64URL(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any]
        else { return "InvalidProviderToken" }
        guard header["alg"] as? String == "ES256", header["kid"] as? String == expected.keyID, claims["iss"] as? String == expected.teamID,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
            expected.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
        else { return "InvalidProviderToken" }
        guard let iat = claims["iat"] as? Int else { return "InvalidProviderToken" }
        let age = now.timeIntervalSince1970 - Double(iat)
        guard age < 3600, age > -60 else { return "ExpiredProviderToken" }
        return nil
    }

    static func base64URL(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}

/// A pass-through handler under the connection's TLS handler: writing from its context sends
/// bytes to the socket unencrypted.
private final class UnderTLS: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
}
