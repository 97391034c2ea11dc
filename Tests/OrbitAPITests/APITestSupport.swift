import Foundation
import HTTPTypes
import Hummingbird
import JWTKit
import Logging
import NIOCore
import NIOEmbedded
import NIOFoundationCompat
import OrbitAPI
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing
import _CryptoExtras

/// A response as the tests see it.
struct TestResponse: Sendable {
    var status: Int
    var headers: HTTPFields
    var body: Data

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object (a test failure if it is not one).
    var json: [String: Any] {
        get throws {
            let object = try JSONSerialization.jsonObject(with: body)
            return try #require(object as? [String: Any], "not a JSON object: \(text)")
        }
    }

    func string(_ key: String) throws -> String {
        try #require(try json[key] as? String, "no string \(key) in \(text)")
    }

    var items: [[String: Any]] {
        get throws { try #require(try json["items"] as? [[String: Any]], "no items in \(text)") }
    }
}

/// Sign in with Apple, played locally: an RSA key, its JWKS (what Apple publishes), and
/// identity tokens signed with it. The API verifies them with the real `AppleJWKSVerifier`.
struct TestApple: Sendable {
    static let bundleID = "app.orbitcove.tests"
    let signer: JWTKeyCollection
    let jwks: String

    static func make(kid: String = "test-key") async throws -> TestApple {
        let key = try Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
        let (modulus, exponent) = try key.publicKey.getKeyPrimitives()
        let jwks = """
            {"keys": [{"kty": "RSA", "kid": "\(kid)", "use": "sig", "alg": "RS256", "n": "\(modulus.base64URL)", "e": "\(exponent.base64URL)"}]}
            """
        let signer = JWTKeyCollection()
        await signer.add(rsa: key, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        return TestApple(signer: signer, jwks: jwks)
    }

    func identityToken(
        subject: String, email: String? = nil, audience: String = TestApple.bundleID, issuer: String = "https://appleid.apple.com",
        expires: Date = Date().addingTimeInterval(600)
    ) async throws -> String {
        let token = AppleIdentityToken(
            issuer: IssuerClaim(value: issuer), audience: AudienceClaim(value: [audience]), expires: ExpirationClaim(value: expires),
            issuedAt: IssuedAtClaim(value: Date()), subject: SubjectClaim(value: subject), email: email
        )
        return try await signer.sign(token, kid: JWKIdentifier(string: "test-key"))
    }
}

extension Data {
    var base64URL: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// The API over a test database, called in process through its router.
struct APIHarness: Sendable {
    let api: OrbitAPI
    let services: OrbitServices
    let apple: TestApple
    let database: TestDatabase
    private let respond: @Sendable (Request, APIContext) async throws -> Response

    init(api: OrbitAPI, apple: TestApple, database: TestDatabase) {
        self.api = api
        self.services = api.services
        self.apple = apple
        self.database = database
        let responder = api.makeRouter().buildResponder()
        respond = { request, context in try await responder.respond(to: request, context: context) }
    }

    /// One request; `json` is encoded as the body, or `body` is sent as it is.
    func request(
        _ method: HTTPRequest.Method, _ path: String, token: String? = nil, json: Any? = nil, body: Data? = nil,
        headers: [String: String] = [:]
    ) async throws -> TestResponse {
        var fields = HTTPFields()
        if let token { fields[.authorization] = "Bearer \(token)" }
        var payload = body
        if let json {
            payload = try JSONSerialization.data(withJSONObject: json)
            fields[.contentType] = "application/json"
        }
        for (name, value) in headers { fields[try #require(HTTPField.Name(name))] = value }
        if let payload { fields[.contentLength] = String(payload.count) }
        let request = Request(
            head: HTTPRequest(method: method, scheme: "http", authority: "localhost", path: path, headerFields: fields),
            body: RequestBody(buffer: ByteBuffer(data: payload ?? Data()))
        )
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let context = APIContext(source: ApplicationRequestContextSource(channel: NIOAsyncTestingChannel(), logger: logger))
        let response = try await respond(request, context)
        let collector = Collector()
        try await response.body.write(collector)
        return TestResponse(status: response.status.code, headers: response.headers, body: Data(buffer: await collector.buffer))
    }

    /// POSTs `json` to `path` as the holder of `token`, expects 201, and returns the new id.
    func create(_ path: String, _ json: [String: Any], token: String) async throws -> String {
        let response = try await request(.post, path, token: token, json: json)
        #expect(response.status == 201, "\(path): \(response.text)")
        return try response.string("id")
    }

    /// One request whose body is `body` as it is, streamed (no Content-Length).
    func request(
        _ method: HTTPRequest.Method, _ path: String, token: String?, streaming body: RequestBody, headers: [String: String] = [:]
    ) async throws -> TestResponse {
        var fields = HTTPFields()
        if let token { fields[.authorization] = "Bearer \(token)" }
        for (name, value) in headers { fields[try #require(HTTPField.Name(name))] = value }
        let request = Request(head: HTTPRequest(method: method, scheme: "http", authority: "localhost", path: path, headerFields: fields), body: body)
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let context = APIContext(source: ApplicationRequestContextSource(channel: NIOAsyncTestingChannel(), logger: logger))
        let response = try await respond(request, context)
        let collector = Collector()
        try await response.body.write(collector)
        return TestResponse(status: response.status.code, headers: response.headers, body: Data(buffer: await collector.buffer))
    }

    /// An access token for `user`, minted as the server does.
    func token(for user: UserID) async throws -> String {
        try await api.tokens.issue(for: user)
    }
}

/// Collects a response body.
actor Collector: ResponseBodyWriter {
    var buffer = ByteBuffer()

    func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        self.buffer.writeBuffer(&buffer)
    }

    nonisolated func finish(_ trailingHeaders: HTTPFields?) async throws {}
}

/// A test database, the API over it (dev auth on, rate limits as given), and a local Apple.
func withAPI<Result>(
    sourceLocation: SourceLocation = #_sourceLocation,
    configure: (inout APIConfiguration) -> Void = { _ in },
    storage: (any MediaStorage)? = nil,
    _ body: (APIHarness) async throws -> Result
) async throws -> Result {
    try await withTestDatabase(sourceLocation: sourceLocation) { database in
        let pool = database.makePool(maxConnections: 8)
        do {
            let apple = try await TestApple.make()
            var configuration = APIConfiguration()
            configuration.appleBundleID = TestApple.bundleID
            configuration.writeRateLimit = .unlimited
            configuration.authRateLimit = .unlimited
            configuration.calendarFeedRateLimit = .unlimited
            configuration.webhookRateLimit = .unlimited
            configure(&configuration)
            let api = try OrbitAPI(
                services: OrbitServices(pool: pool, storage: storage), configuration: configuration,
                tokens: try await AccessTokens(secret: AccessTokens.randomSecret()),
                appleVerifier: AppleJWKSVerifier(source: .json(apple.jwks), bundleID: TestApple.bundleID)
            )
            let result = try await body(APIHarness(api: api, apple: apple, database: database))
            await pool.close()
            return result
        } catch {
            await pool.close()
            throw error
        }
    }
}

/// The shared cast's people (`Cast.people`, OrbitTestSupport; no former member) signed in: an
/// access token for each, and the outsider's own community.
struct APICast: Sendable {
    var admin: UserID
    var member: UserID
    var outsider: UserID
    var community: CommunityID
    var otherCommunity: CommunityID
    var adminToken: String
    var memberToken: String
    var outsiderToken: String

    static func make(_ harness: APIHarness) async throws -> APICast {
        let people = try await Cast.people(harness.services, former: false)
        let other = try await harness.services.communities.create(name: "Other club", as: people.outsider).id
        return APICast(
            admin: people.admin, member: people.member, outsider: people.outsider, community: people.community, otherCommunity: other,
            adminToken: try await harness.token(for: people.admin), memberToken: try await harness.token(for: people.member),
            outsiderToken: try await harness.token(for: people.outsider))
    }
}
