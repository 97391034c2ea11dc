import Foundation
import Hummingbird
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import OrbitTestSupport
import Synchronization

/// A stand-in for Stripe's API (`POST /v1/checkout/sessions`, `POST /v1/refunds`), over TLS with a certificate made
/// for the test, checking a request as Stripe does before it makes a session: the secret key as
/// a bearer token (401 otherwise), a form-encoded body, every parameter one Stripe knows (400
/// "Received unknown parameter"), the mode's required ones (a known price for a subscription;
/// currency, amount and name for a payment), the limits of metadata and
/// `client_reference_id`, and idempotency as Stripe keeps it: the same `Idempotency-Key` with
/// the same body answers the first session again; with another body it is refused (400
/// `idempotency_error`). The next answers can be scripted: a 5xx is the endpoint failing, and
/// is kept for its key and replayed as Stripe does (a 429 is not). A PaymentIntent is refunded
/// once; a second refund is refused (`charge_already_refunded`). A payment below the
/// currency's least charge (as for an account that settles in that currency) is refused
/// (`amount_too_small`). Differences from Stripe: docs/testing.md, "The local services".
final class TestStripeAPI: Sendable {
    static let secretKey = "sk_test_orbitcove0123456789"
    static let price = "price_test_community"

    struct Received: Sendable {
        var path: String
        var headers: [String: String]
        var form: [String: String]
        var status: Int
        var error: String?
    }

    struct State {
        var received: [Received] = []
        /// The answer to each idempotency key, with the body it was made for.
        var answered: [String: (body: String, status: Int, answer: String)] = [:]
        var scripted: [Int] = []
        var sessions = 0
        var refunds: [String] = []
    }

    let port: Int
    let certificatePEM: String
    private let box: Box

    var received: [Received] { box.state.withLock { $0.received } }
    /// The sessions made (idempotent replays are not new sessions).
    var sessions: Int { box.state.withLock { $0.sessions } }
    /// The PaymentIntents refunded, once each however often asked with the same key.
    var refunds: [String] { box.state.withLock { $0.refunds } }
    var url: URL { URL(string: "https://localhost:\(port)")! }

    /// The next requests with a new key answer `statuses`, one each, before the parameters'
    /// checks; a 5xx is kept for its key, as Stripe keeps it.
    func script(_ statuses: [Int]) {
        box.state.withLock { $0.scripted += statuses }
    }

    /// Forgets every key's answer, as Stripe does 24 hours after a key's first use.
    func forgetKeys() {
        box.state.withLock { $0.answered = [:] }
    }

    private init(port: Int, certificatePEM: String, box: Box) {
        self.port = port
        self.certificatePEM = certificatePEM
        self.box = box
    }

    /// Runs the server for `body`.
    static func with<Result: Sendable>(_ body: @Sendable (TestStripeAPI) async throws -> Result) async throws -> Result {
        let certificate = try LocalhostCertificate()
        let shared = Box()
        let router = Router()
        for path in ["v1/checkout/sessions", "v1/refunds"] {
            router.post(RouterPath(path)) { request, _ -> Response in
                var request = request
                let body = String(buffer: try await request.collectBody(upTo: 1 << 20))
                let (status, answer) = shared.answer(path: path, headers: request.headers, body: body)
                return Response(
                    status: .init(code: status), headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: answer)))
            }
        }
        var logger = Logger(label: "test-stripe")
        // Stopping by cancellation logs errors of its own; the tests check what the server took.
        logger.logLevel = .critical
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, server: try .tls(.http1(), tlsConfiguration: certificate.serverTLS),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        return try await withThrowingTaskGroup(of: Result?.self) { tasks in
            tasks.addTask {
                try await app.runService(gracefulShutdownSignals: [])
                return nil
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            let server = TestStripeAPI(port: port, certificatePEM: certificate.pem, box: shared)
            let result = try await body(server)
            tasks.cancelAll()
            return result
        }
    }

    /// The server's state, shared with its route.
    final class Box: Sendable {
        let state = Mutex(State())

        func answer(path: String, headers: HTTPFields, body: String) -> (Int, String) {
            state.withLock { state in
                var fields: [String: String] = [:]
                for field in headers { fields[field.name.canonicalName] = field.value }
                let form = TestStripeAPI.parse(body)
                func finish(_ status: Int, _ answer: String, error: String? = nil) -> (Int, String) {
                    state.received.append(Received(path: path, headers: fields, form: form ?? [:], status: status, error: error))
                    return (status, answer)
                }
                guard fields["authorization"] == "Bearer \(TestStripeAPI.secretKey)" else {
                    return finish(401, TestStripeAPI.error("invalid_request_error", "Invalid API Key provided."), error: "key")
                }
                guard fields["content-type"]?.hasPrefix("application/x-www-form-urlencoded") == true, let form else {
                    return finish(400, TestStripeAPI.error("invalid_request_error", "The body is not form-encoded."), error: "form")
                }
                if let key = fields["idempotency-key"], let earlier = state.answered[key] {
                    guard earlier.body == body else {
                        return finish(
                            400,
                            TestStripeAPI.error(
                                "idempotency_error",
                                "Keys for idempotent requests can only be used with the same parameters they were first used with."),
                            error: "idempotency")
                    }
                    return finish(earlier.status, earlier.answer, error: earlier.status == 200 ? nil : "replayed")
                }
                if !state.scripted.isEmpty {
                    let status = state.scripted.removeFirst()
                    let answer = TestStripeAPI.error(status == 429 ? "rate_limit_error" : "api_error", "Scripted \(status).")
                    // Stripe keeps the answer of an endpoint that ran and failed; a rate limit
                    // refuses before it runs.
                    if status >= 500, let key = fields["idempotency-key"] { state.answered[key] = (body, status, answer) }
                    return finish(status, answer, error: "scripted")
                }
                if path == "v1/refunds" {
                    // A refund: of a PaymentIntent, for a reason Stripe knows, nothing else.
                    let allowed = ["payment_intent", "reason"]
                    if let unknown = form.keys.sorted().first(where: { !allowed.contains($0) && !$0.hasPrefix("metadata[") }) {
                        return finish(400, TestStripeAPI.error("invalid_request_error", "Received unknown parameter: \(unknown)"), error: unknown)
                    }
                    guard let intent = form["payment_intent"], intent.hasPrefix("pi_"),
                        ["duplicate", "fraudulent", "requested_by_customer", nil].contains(form["reason"])
                    else { return finish(400, TestStripeAPI.error("invalid_request_error", "Invalid refund"), error: "refund") }
                    guard !state.refunds.contains(intent) else {
                        return finish(
                            400,
                            TestStripeAPI.error(
                                "invalid_request_error", "Charge ch_\(intent.dropFirst(3)) has already been refunded.",
                                code: "charge_already_refunded"),
                            error: "charge_already_refunded")
                    }
                    state.refunds.append(intent)
                    let answer =
                        "{\"id\":\"re_\(state.refunds.count)\",\"object\":\"refund\",\"status\":\"succeeded\",\"payment_intent\":\"\(intent)\"}"
                    if let key = fields["idempotency-key"] { state.answered[key] = (body, 200, answer) }
                    return finish(200, answer)
                }
                if let problem = TestStripeAPI.check(form) {
                    return finish(400, TestStripeAPI.error("invalid_request_error", problem), error: problem)
                }
                if let (code, problem) = TestStripeAPI.outOfBounds(form) {
                    return finish(400, TestStripeAPI.error("invalid_request_error", problem, code: code), error: code)
                }
                state.sessions += 1
                let id = "cs_test_\(state.sessions)"
                let session: [String: Any] = [
                    "id": id, "object": "checkout.session", "url": "https://checkout.stripe.com/c/pay/\(id)",
                    "expires_at": Int(Date().timeIntervalSince1970) + 86_400, "mode": form["mode"] ?? "",
                    "client_reference_id": form["client_reference_id"] ?? "",
                ]
                let answer = String(decoding: (try? JSONSerialization.data(withJSONObject: session)) ?? Data(), as: UTF8.self)
                if let key = fields["idempotency-key"] { state.answered[key] = (body, 200, answer) }
                return finish(200, answer)
            }
        }
    }

    static func error(_ type: String, _ message: String, code: String? = nil) -> String {
        var error: [String: Any] = ["type": type, "message": message]
        if let code { error["code"] = code }
        let json: [String: Any] = ["error": error]
        return String(decoding: (try? JSONSerialization.data(withJSONObject: json)) ?? Data(), as: UTF8.self)
    }

    /// `application/x-www-form-urlencoded`, as Stripe reads it (`+` is a space); nil if malformed
    /// or a key repeats.
    static func parse(_ body: String) -> [String: String]? {
        var form: [String: String] = [:]
        for pair in body.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2,
                let key = parts[0].replacingOccurrences(of: "+", with: " ").removingPercentEncoding,
                let value = parts[1].replacingOccurrences(of: "+", with: " ").removingPercentEncoding,
                form[key] == nil
            else { return nil }
            form[key] = value
        }
        return form
    }

    /// The least Stripe charges, in its units, for an account that settles in the currency (its
    /// "Minimum and maximum charge amounts"; for another settlement currency Stripe converts
    /// first, which the local Stripe does not).
    static let minimum: [String: Int] = [
        "usd": 50, "eur": 50, "gbp": 30, "cad": 50, "aud": 50, "chf": 50, "nzd": 50, "sgd": 50, "jpy": 50, "dkk": 250, "nok": 300,
        "sek": 300, "czk": 1500, "huf": 17500, "pln": 200, "hkd": 400, "mxn": 1000,
    ]

    /// A payment's amount below the currency's least charge or above Stripe's most: its code
    /// and message.
    static func outOfBounds(_ form: [String: String]) -> (String, String)? {
        guard form["mode"] == "payment", let currency = form["line_items[0][price_data][currency]"],
            let amount = form["line_items[0][price_data][unit_amount]"].flatMap(Int.init)
        else { return nil }
        if let least = minimum[currency], amount < least {
            return ("amount_too_small", "Amount must be at least \(least) in \(currency)'s smallest unit")
        }
        return nil
    }

    /// Stripe's checks of a Checkout Session's parameters; nil when it would make one.
    static func check(_ form: [String: String]) -> String? {
        let known = [
            #"^mode$"#, #"^success_url$"#, #"^cancel_url$"#, #"^client_reference_id$"#, #"^customer$"#,
            #"^line_items\[0\]\[(price|quantity)\]$"#, #"^line_items\[0\]\[price_data\]\[(currency|unit_amount)\]$"#,
            #"^line_items\[0\]\[price_data\]\[product_data\]\[name\]$"#,
            #"^metadata\[[^\[\]]+\]$"#, #"^subscription_data\[metadata\]\[[^\[\]]+\]$"#, #"^payment_intent_data\[metadata\]\[[^\[\]]+\]$"#,
        ]
        for key in form.keys.sorted() where !known.contains(where: { key.range(of: $0, options: .regularExpression) != nil }) {
            return "Received unknown parameter: \(key)"
        }
        for (key, value) in form where key.contains("metadata[") {
            let name = key.split(separator: "[").last.map { String($0.dropLast()) } ?? ""
            guard name.count <= 40, value.count <= 500 else { return "Invalid metadata: \(key)" }
        }
        guard let mode = form["mode"], ["payment", "subscription", "setup"].contains(mode) else { return "Invalid mode" }
        for key in ["success_url", "cancel_url"] {
            guard let text = form[key], let url = URL(string: text), ["https", "http"].contains(url.scheme), url.host != nil else {
                return "Not a valid URL: \(key)"
            }
        }
        if let reference = form["client_reference_id"], reference.isEmpty || reference.count > 200 { return "Invalid client_reference_id" }
        guard form["line_items[0][quantity]"].flatMap(Int.init).map({ $0 > 0 }) == true else { return "Invalid quantity" }
        switch mode {
        case "subscription":
            guard form["line_items[0][price]"] == price else { return "No such price: '\(form["line_items[0][price]"] ?? "")'" }
            guard !form.keys.contains(where: { $0.hasPrefix("payment_intent_data") }) else {
                return "You can not pass `payment_intent_data` in `subscription` mode."
            }
        case "payment":
            guard let currency = form["line_items[0][price_data][currency]"], currency.count == 3, currency == currency.lowercased() else {
                return "Invalid currency"
            }
            guard let amount = form["line_items[0][price_data][unit_amount]"].flatMap(Int.init), amount >= 0, amount <= 99_999_999 else {
                return "Invalid unit_amount"
            }
            // Stripe's own rules for its units (its "Supported currencies" page), independent of
            // the server's table: whole krónur only (ISK is two-decimal in Stripe's API), and the
            // last digit of a three-decimal currency's amount 0.
            if currency == "isk", amount % 100 != 0 {
                return "Invalid amount. Currency ISK has become effectively zero-decimal and charged amounts must be evenly divisible by 100."
            }
            if ["bhd", "jod", "kwd", "omr", "tnd"].contains(currency), amount % 10 != 0 {
                return "Invalid amount: the last digit of a \(currency.uppercased()) amount must be 0."
            }
            guard form["line_items[0][price_data][product_data][name]"]?.isEmpty == false else { return "Missing product name" }
            guard !form.keys.contains(where: { $0.hasPrefix("subscription_data") }) else {
                return "You can not pass `subscription_data` in `payment` mode."
            }
        default:
            break
        }
        return nil
    }
}
