import Foundation
package import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
package import Logging
import NIOCore
package import OrbitCore
import OrbitPostgres
package import OrbitRuntime
package import ServiceLifecycle

/// How `orbitctl serve` runs the API.
package struct APIConfiguration: Sendable {
    package var host = "127.0.0.1"
    package var port = 8080
    /// The iOS app's bundle id: the `aud` of its Sign in with Apple identity tokens.
    package var appleBundleID = "app.orbitcove.ios"
    /// `POST /auth/dev` mints tokens for existing users; only on a loopback address.
    package var devAuth = false
    package var authRateLimit = RateLimiter.Limit(perMinute: 30, burst: 10)
    package var writeRateLimit = RateLimiter.Limit(perMinute: 600, burst: 120)
    /// Per client address on `GET /calendar/{token}.ics` (a calendar app polls a feed a few times
    /// an hour; guesses of tokens are what this stops).
    package var calendarFeedRateLimit = RateLimiter.Limit(perMinute: 120, burst: 30)
    /// `GET /invites/{code}` (no token) per client address: codes are short, so guessing them is
    /// slow.
    package var invitePreviewRateLimit = RateLimiter.Limit(perMinute: 20, burst: 10)
    /// Per client address on `POST /webhooks/*` (the providers send from few addresses, in
    /// bursts; anyone else may post too, and each request costs a signature check).
    package var webhookRateLimit = RateLimiter.Limit(perMinute: 600, burst: 100)
    /// Origins allowed cross-origin requests; none (CORS off) by default.
    package var corsOrigin: String?
    /// The API's address as the app reaches it (`https://api.example.com`): calendar feed links
    /// begin with it. Nil: the address a request came to.
    package var publicURL: String?
    package var refreshTokenLifetime: Duration = .seconds(60 * 86_400)
    package var idempotencyKeyLifetime: Duration = .seconds(86_400)
    /// Uploads above this are refused before they are read (the service's limits by type apply too).
    package var mediaUploadLimit = 200 << 20
    /// How often `GET /live` sockets get a heartbeat message.
    package var liveHeartbeat: Duration = .seconds(25)
    /// Client connections served at once (and refused with a 503 beyond); nil: no limit.
    /// `orbitctl serve` derives one from the process's limit on open files.
    package var connectionLimit: ConnectionLimit?
    /// Stripe's webhook endpoint secrets (`whsec_…`; two while one is rolled). None: `POST
    /// /webhooks/stripe` answers 501.
    package var stripeWebhookSecrets: [String] = []
    /// Makes checkout sessions (Stripe's API with the secret key). Nil: the checkout routes
    /// answer 501.
    package var payments: (any PaymentProvider)?
    /// The provider's price of a community's subscription (`price_…`). Nil: the subscription's
    /// checkout answers 501.
    package var subscriptionPrice: String?
    /// Where a checkout returns the payer (`--stripe-return-url`, else the public URL's
    /// `/checkout`). Nil: the checkout routes answer 501.
    package var checkout: CheckoutSettings?
    /// Verifies App Store Server Notifications (the configured root, the app's bundle id). Nil:
    /// `POST /webhooks/app-store` answers 501.
    package var appStore: AppStoreSignature?

    package init() {}

    /// Refuses settings that would be unsafe: dev auth reachable from another machine.
    package func validate() throws {
        if devAuth && !Self.isLoopback(host) {
            throw APIConfigurationError(
                "--dev-auth mints tokens for any user: it is refused unless the server binds to localhost (127.0.0.1 or ::1).")
        }
        guard (0...65535).contains(port) else { throw APIConfigurationError("The port must be between 0 and 65535.") }
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}

/// The HTTP API: routes over the service layer, with authentication, problem responses, rate
/// limits, idempotency, metrics and request logs.
package struct OrbitAPI: Sendable {
    package let services: OrbitServices
    package let configuration: APIConfiguration
    package let tokens: AccessTokens
    package let appleVerifier: any AppleIdentityVerifier
    package let metrics: APIMetrics
    let limiter = RateLimiter()
    /// The `GET /live` sockets of this server.
    let live = LiveHub()
    /// Wakes push delivery when a chat message is stored (pass it to `ScheduledJobs`).
    package let pushSignal = PushSignal()
    /// The delivered marks the sockets send, written a batch at a time.
    let deliveredMarks: DeliveredMarks

    package init(
        services: OrbitServices, configuration: APIConfiguration, tokens: AccessTokens, appleVerifier: any AppleIdentityVerifier,
        metrics: APIMetrics = APIMetrics()
    ) throws {
        try configuration.validate()
        self.services = services
        self.configuration = configuration
        self.tokens = tokens
        self.appleVerifier = appleVerifier
        self.metrics = metrics
        self.deliveredMarks = DeliveredMarks(chat: services.chat, logger: Logger(label: "orbit.live"))
    }

    /// Every route of the API (the OpenAPI document lists the same ones; a test checks it), and
    /// `benchmarkPage` when given.
    package func makeRouter(benchmarkPage: BenchmarkPageRoute? = nil) -> Router<APIContext> {
        let router = Router(context: APIContext.self)
        let routes = RouteTable()
        router.add(middleware: ProblemMiddleware(metrics: metrics, routes: routes))
        if let origin = configuration.corsOrigin {
            router.add(
                middleware: CORSMiddleware(
                    allowOrigin: .custom(origin),
                    allowHeaders: [
                        .authorization, .contentType, APIHeaders.idempotencyKey, APIHeaders.readAfter, EntityTags.ifMatch, EntityTags.ifNoneMatch,
                    ],
                    allowMethods: [.get, .head, .post, .put, .patch, .delete, .options],
                    exposedHeaders: ExposeHeadersMiddleware.exposed))
            router.add(middleware: ExposeHeadersMiddleware())
        }
        addOperationRoutes(to: router)
        addAuthRoutes(to: router.group())

        let app = router.group()
            .add(middleware: AuthenticationMiddleware(tokens: tokens))
            .add(middleware: RateLimitMiddleware(limiter: limiter, scope: .writesByUser, limit: configuration.writeRateLimit))
            .add(middleware: BufferedJSONBody())
            .add(middleware: IdempotencyMiddleware(services: services, lifetime: configuration.idempotencyKeyLifetime))
        addUserRoutes(to: app)
        addCommunityRoutes(to: app)
        addEventRoutes(to: app)
        // The routes without a token: a limit per client address of their own each.
        addCalendarFeedRoutes(
            open: router.group().add(
                middleware: RateLimitMiddleware(limiter: limiter, scope: .byIP("calendar"), limit: configuration.calendarFeedRateLimit)),
            signedIn: app)
        addInvitePreviewRoutes(
            open: router.group().add(
                middleware: RateLimitMiddleware(limiter: limiter, scope: .byIP("invites"), limit: configuration.invitePreviewRateLimit)))
        addBillingRoutes(
            open: router.group().add(
                middleware: RateLimitMiddleware(limiter: limiter, scope: .byIP("webhooks"), limit: configuration.webhookRateLimit)),
            signedIn: app)
        addFeedRoutes(to: app)
        addMediaRoutes(to: app)
        addExpenseRoutes(to: app)
        addSettlementRoutes(to: app)
        addPaymentRoutes(to: app)
        addDuesRoutes(to: app)
        addRecurringChargeRoutes(to: app)
        addRateRoutes(to: app)
        addExportRoutes(to: app)
        addNotificationRoutes(to: app)
        addSyncRoutes(to: app)
        addChatRoutes(to: app)
        addChoreRoutes(to: app)
        addSearchRoutes(to: app)
        addEncryptionRoutes(to: app)
        if let benchmarkPage {
            app.get(RouterPath(benchmarkPage.path)) { _, context in
                _ = try context.requireUser()
                return JSON(benchmarkPage.page)
            }
        }
        routes.load(router.routes)
        return router
    }

    /// The server: SIGTERM or SIGINT stops accepting connections, lets requests in flight
    /// finish, then runs `onShutdown` (closing the pool) after the server has stopped.
    package func makeApplication(
        logger: Logger, services extraServices: [any Service] = [], benchmarkPage: BenchmarkPageRoute? = nil,
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let gate = configuration.connectionLimit.map(ConnectionGate.init)
        let server = HTTPServerBuilder { responder in
            GatedChildChannel(
                inner: HTTP1WebSocketUpgradeChannel(responder: responder, configuration: .init()) { request, channel, _ in
                    await liveUpgrade(request, channel: channel)
                },
                gate: gate)
        }
        return Application(
            router: makeRouter(benchmarkPage: benchmarkPage),
            server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: nil,
                availableConnectionsDelegate: gate?.acceptance),
            services: [PoolService(pool: services.pool, replicas: services.runner.replicas)] + extraServices
                + [
                    LiveListener(
                        hub: live, services: services, pushSignal: pushSignal, logger: logger,
                        encode: { String(decoding: try ResponseJSONEncoder.encode($0), as: UTF8.self) })
                ],
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }
}

/// For `orbit-bench http` only: GET `path` answers `page` from memory, behind the same middleware
/// and token check as the app's routes. What that route costs per request is what HTTP costs a
/// feed page (parsing, routing, the token, the JSON, the socket), without the database.
package struct BenchmarkPageRoute: Sendable {
    package var path: String
    package var page: FeedPage

    package init(path: String, page: FeedPage) {
        self.path = path
        self.page = page
    }
}
