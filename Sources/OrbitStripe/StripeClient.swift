import AsyncHTTPClient
import Crypto
package import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOPosix
import NIOSSL
package import OrbitCore

/// What `orbitctl serve` needs to call Stripe's API: the secret key, and where the API is.
package struct StripeConfiguration: Sendable {
    /// `sk_live_…`, `sk_test_…` or a restricted `rk_…` key with Checkout Sessions' write right.
    package var secretKey: String
    /// Stripe's API; tests point it at a local server.
    package var apiURL = URL(string: "https://api.stripe.com")!
    /// PEM certificates to trust instead of the system's (tests only).
    package var trustRootsPEM: [String]?
    /// The API version the requests are written for (Stripe-Version).
    package var apiVersion = "2025-03-31.basil"
    /// How long one request may take, connecting included.
    package var requestTimeout: Duration = .seconds(30)
    /// Tries of a request that got no answer, 429, 409 (the same key still in flight) or 5xx
    /// (`StripeClient.post` says which key each retry uses).
    package var attempts = 3

    package init(secretKey: String) throws {
        let key = secretKey.trimmingCharacters(in: .whitespacesAndNewlines)
        guard ["sk_", "rk_"].contains(where: key.hasPrefix), key.count > 8, key.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw StripeConfigurationError("the Stripe secret key begins with sk_ (or rk_ for a restricted key)")
        }
        self.secretKey = key
    }
}

/// A setting Stripe's client cannot start with.
package struct StripeConfigurationError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// Makes Stripe Checkout Sessions (`POST /v1/checkout/sessions`) and refunds (`POST /v1/refunds`)
/// through Stripe's API: form-encoded
/// as Stripe takes it, the secret key as a bearer token, an `Idempotency-Key` per intent so that a
/// retry never makes a second session.
package final class StripeClient: PaymentProvider {
    private let configuration: StripeConfiguration
    private let client: HTTPClient
    private let logger = Logger(label: "orbit.stripe")

    package init(configuration: StripeConfiguration) throws {
        self.configuration = configuration
        var tls = TLSConfiguration.makeClientConfiguration()
        if let roots = configuration.trustRootsPEM {
            tls.trustRoots = .certificates(try roots.flatMap { try NIOSSLCertificate.fromPEMBytes(Array($0.utf8)) })
        }
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
    }

    /// Closes the connections; call once, when the server stops.
    package func shutdown() async throws {
        try await client.shutdown()
    }

    package func createCheckoutSession(_ request: CheckoutRequest) async throws -> CheckoutSession {
        let json: [String: Any]
        do {
            json = try await post("v1/checkout/sessions", form: try Self.form(request), key: request.idempotencyKey)
        } catch let error as PaymentProviderError where ["amount_too_small", "amount_too_large"].contains(error.code) {
            // Stripe's least and most per charge (the least depends on the account's settlement
            // currency, so only Stripe can say): the payer's answer, not a failure of Stripe's.
            throw ServiceError.conflict(field: "amount", reason: "Stripe cannot charge this amount: \(error.stripeMessage)")
        }
        guard let id = json["id"] as? String, let url = json["url"] as? String else {
            throw PaymentProviderError(status: 200, message: "Stripe answered something that is not a Checkout Session")
        }
        let expires = (json["expires_at"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue) }
        return CheckoutSession(id: id, url: url, expiresAt: expires)
    }

    /// Refuses what Stripe cannot charge exactly in its own units (`StripeUnits`).
    package func requireChargeable(_ amount: Money) throws {
        _ = try StripeUnits.amount(of: amount)
    }

    /// Gives back all of `payment`. A payment Stripe has already refunded in full counts as
    /// given back (`charge_already_refunded`): the first refund's answer was lost, or its key
    /// expired before the event came again; asking once more can then never succeed.
    package func refund(payment: String, idempotencyKey: String) async throws {
        let form = [("payment_intent", payment), ("reason", "duplicate")]
        let json: [String: Any]
        do {
            json = try await post("v1/refunds", form: Self.encode(form), key: idempotencyKey)
        } catch let error as PaymentProviderError where error.code == "charge_already_refunded" {
            logger.notice("stripe payment already refunded", metadata: ["payment_intent": "\(payment)"])
            return
        }
        guard json["object"] as? String == "refund" else {
            throw PaymentProviderError(status: 200, message: "Stripe answered something that is not a refund")
        }
    }

    /// POSTs `form` to Stripe's `path` and answers its JSON: 409 (the same key in flight), 429,
    /// 5xx and no answer are tried again; any other refusal is thrown at once.
    ///
    /// Which key a retry uses: Stripe keeps the first answer to a key for 24 hours, a 5xx
    /// included, and replays it (its "Idempotent requests"); it keeps none for a 409 or a 429
    /// (refused before the endpoint ran). So a retry after no answer, a 409 or a 429 sends the
    /// same key (one session, one refund however often it is sent), and a retry after a 5xx a new
    /// one: the same key would only get the stored 5xx again, until the key expired. A new key is
    /// safe there: a session that the failed request may have made reached no one (it expires
    /// unpaid), and a second refund of a payment is refused (`charge_already_refunded`).
    private func post(_ path: String, form body: String, key: String) async throws -> [String: Any] {
        // The caller's key names the intent; the body's digest makes any change of what is sent
        // (a new customer, a renamed dues) a new key: Stripe refuses a key reused with other
        // parameters, and would answer an old session for the same ones.
        let digest = SHA256.hash(data: Data(body.utf8)).prefix(12).map { String(format: "%02x", $0) }.joined()
        var idempotencyKey = "\(key)-\(digest)"
        var failure = PaymentProviderError(status: nil, message: "Stripe was not asked")
        for attempt in 1...max(1, configuration.attempts) {
            if let status = failure.status, status >= 500 {
                idempotencyKey = "\(key)-\(digest)-\(UUID().uuidString.lowercased().prefix(8))"
            }
            if attempt > 1 { try await Task.sleep(for: .milliseconds(250 << (attempt - 2))) }
            var http = HTTPClientRequest(url: configuration.apiURL.appendingPathComponent(path).absoluteString)
            http.method = .POST
            http.headers.add(name: "authorization", value: "Bearer \(configuration.secretKey)")
            http.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
            http.headers.add(name: "idempotency-key", value: idempotencyKey)
            http.headers.add(name: "stripe-version", value: configuration.apiVersion)
            http.body = .bytes(ByteBuffer(string: body))
            let response: HTTPClientResponse
            let answer: ByteBuffer
            do {
                response = try await client.execute(http, timeout: .seconds(configuration.requestTimeout.components.seconds))
                answer = try await response.body.collect(upTo: 1 << 20)
            } catch {
                failure = PaymentProviderError(status: nil, message: "Stripe could not be reached: \(error)")
                logger.warning("stripe request failed", metadata: ["path": "\(path)", "attempt": "\(attempt)", "error": "\(error)"])
                continue
            }
            let status = Int(response.status.code)
            let json = (try? JSONSerialization.jsonObject(with: Data(buffer: answer))) as? [String: Any]
            if status == 200, let json { return json }
            let error = json?["error"] as? [String: Any]
            let message = (error?["message"] as? String) ?? "an answer that is not JSON"
            failure = PaymentProviderError(status: status, message: "Stripe answered \(status): \(message)", code: error?["code"] as? String)
            logger.warning(
                "stripe refused",
                metadata: ["path": "\(path)", "attempt": "\(attempt)", "status": "\(status)", "type": "\(error?["type"] as? String ?? "")"])
            guard status == 429 || status == 409 || status >= 500 else { break }
        }
        throw failure
    }

    /// The request as Stripe's form encoding: nested keys in brackets, each pair percent-encoded.
    /// An amount goes out in Stripe's units, not ISO 4217's (`StripeUnits`): one Stripe cannot
    /// charge exactly is refused here, before anything is sent.
    static func form(_ request: CheckoutRequest) throws -> String {
        var fields: [(String, String)] = []
        switch request.mode {
        case .subscription(let price):
            fields += [("mode", "subscription"), ("line_items[0][price]", price), ("line_items[0][quantity]", "1")]
            fields += request.metadata.sorted { $0.key < $1.key }.map { ("subscription_data[metadata][\($0.key)]", $0.value) }
        case .payment(let amount, let name):
            fields += [
                ("mode", "payment"),
                ("line_items[0][price_data][currency]", amount.currency.code.lowercased()),
                ("line_items[0][price_data][unit_amount]", String(try StripeUnits.amount(of: amount))),
                ("line_items[0][price_data][product_data][name]", name),
                ("line_items[0][quantity]", "1"),
            ]
            fields += request.metadata.sorted { $0.key < $1.key }.map { ("payment_intent_data[metadata][\($0.key)]", $0.value) }
        }
        fields += [
            ("success_url", request.successURL), ("cancel_url", request.cancelURL), ("client_reference_id", request.clientReferenceID),
        ]
        fields += request.metadata.sorted { $0.key < $1.key }.map { ("metadata[\($0.key)]", $0.value) }
        if let customer = request.customer { fields.append(("customer", customer)) }
        return encode(fields)
    }

    static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    private static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }
}

extension PaymentProviderError {
    /// Stripe's own words, without "Stripe answered 400: ".
    fileprivate var stripeMessage: String {
        guard let range = message.range(of: ": ") else { return message }
        return String(message[range.upperBound...])
    }
}
