import ArgumentParser
import Foundation
import Logging
import OrbitAPI
import OrbitCore
import OrbitPostgres
import OrbitPush
import OrbitRuntime
import OrbitStripe
import ServiceLifecycle

/// Options of the HTTP API shared by `orbitctl serve` and `orbitctl dev`.
struct APIOptions: ParsableArguments {
    @Option(help: "The iOS app's bundle id: the audience of its Sign in with Apple tokens.")
    var appleBundleID = "app.orbitcove.ios"

    @Option(help: "Apple's key set (JWKS): an https URL or a file path.")
    var appleKeys = "https://appleid.apple.com/auth/keys"

    @Option(help: "Allow cross-origin requests from this origin (default: CORS off).")
    var corsOrigin: String?

    @Option(help: "Directory for uploaded media.")
    var mediaDirectory = ".orbit/media"

    @Option(
        help:
            "The API's address as the app reaches it, e.g. https://api.example.com: media and calendar feed URLs begin with it (default: http://HOST:PORT)."
    )
    var publicURL: String?

    @Option(help: "Database connections of the server.")
    var poolSize = 10

    @Option(
        help: """
            Client connections served at once; more are answered 503 with Retry-After (a /live upgrade \
            is refused). Default: the limit on open files (raised to the hard limit at start) less \
            room for the database pool, files and refusals.
            """)
    var maxConnections: Int?

    @Option(help: "Writes per user per minute (0: no limit).")
    var writeRateLimit = 600

    @Option(help: "Sign-in requests per IP per minute (0: no limit).")
    var authRateLimit = 30

    @Option(help: "Calendar feed requests (GET /calendar/{token}.ics) per IP per minute (0: no limit).")
    var calendarRateLimit = 120

    @Option(help: "Webhook deliveries (POST /webhooks/*) per IP per minute (0: no limit).")
    var webhookRateLimit = 600

    @OptionGroup var apns: APNsOptions

    @OptionGroup var payments: PaymentOptions

    @Flag(inversion: .prefixedNo, help: "Run the scheduled jobs (reminders, delivery, balances snapshot, retention) in this process.")
    var jobs = true

    func configuration(host: String, port: Int, devAuth: Bool) -> APIConfiguration {
        var configuration = APIConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.devAuth = devAuth
        configuration.appleBundleID = appleBundleID
        configuration.corsOrigin = corsOrigin
        // Only an address given: calendar links are built from it (outside `orbitctl dev`, where
        // they take the address a request came to, the link routes answer 501 without it).
        configuration.publicURL = publicURL
        configuration.writeRateLimit =
            writeRateLimit == 0 ? .unlimited : .init(perMinute: Double(writeRateLimit), burst: Double(max(1, writeRateLimit / 5)))
        configuration.authRateLimit =
            authRateLimit == 0 ? .unlimited : .init(perMinute: Double(authRateLimit), burst: Double(max(1, authRateLimit / 3)))
        configuration.calendarFeedRateLimit =
            calendarRateLimit == 0 ? .unlimited : .init(perMinute: Double(calendarRateLimit), burst: Double(max(1, calendarRateLimit / 4)))
        configuration.webhookRateLimit =
            webhookRateLimit == 0 ? .unlimited : .init(perMinute: Double(webhookRateLimit), burst: Double(max(1, webhookRateLimit / 6)))
        return configuration
    }

    /// `--public-url`, else the address served (nil for port 0: the port is not known yet).
    func resolvedPublicURL(host: String, port: Int) -> String? {
        publicURL ?? (port == 0 ? nil : "http://\(host.contains(":") ? "[\(host)]" : host):\(port)")
    }

    var appleKeySource: AppleJWKSVerifier.KeySource {
        if appleKeys.hasPrefix("https://") || appleKeys.hasPrefix("http://"), let url = URL(string: appleKeys) { return .url(url) }
        return .file(appleKeys)
    }

    /// ORBIT_JWT_SECRET (at least 32 bytes), or a random secret for this process.
    static func accessTokenSecret() -> (secret: [UInt8], random: Bool) {
        if let secret = ProcessInfo.processInfo.environment["ORBIT_JWT_SECRET"], !secret.isEmpty { return (Array(secret.utf8), false) }
        return (AccessTokens.randomSecret(), true)
    }

    func validate() throws {
        guard (1...200).contains(poolSize) else { throw ValidationError("--pool-size must be between 1 and 200.") }
        if let publicURL {
            guard let url = URL(string: publicURL), ["https", "http"].contains(url.scheme), url.host != nil, url.query == nil else {
                throw ValidationError("--public-url must be an http(s) URL such as https://api.example.com.")
            }
        }
        if let maxConnections, maxConnections < 1 { throw ValidationError("--max-connections must be at least 1.") }
        guard writeRateLimit >= 0, authRateLimit >= 0, calendarRateLimit >= 0, webhookRateLimit >= 0 else {
            throw ValidationError("Rate limits must be 0 (none) or positive.")
        }
    }

    /// Raises the limit on open files as far as allowed, and derives the connection limit from it
    /// (or takes `--max-connections`, warning when the files cannot hold that many).
    func connectionLimit(databaseConnections: Int, logger: Logger) -> ConnectionLimit {
        let files = FileLimit.raise()
        var limit = ConnectionLimit.derived(files: files, databaseConnections: databaseConnections)
        if let maxConnections {
            if maxConnections > limit.maximum {
                logger.warning(
                    "--max-connections \(maxConnections) is more than the open-file limit (\(files)) leaves room for (\(limit.maximum)): raise the limit (ulimit -n) or the server may run out of files"
                )
            }
            limit.maximum = maxConnections
        }
        logger.info("serving up to \(limit.maximum) connections at once (open-file limit \(files))")
        return limit
    }

    /// Runs the API over `pool` until `shutdown` returns (or SIGTERM/SIGINT when nil), then
    /// finishes requests in flight and closes the pool.
    func serve(
        pool: ConnectionPool, replicas: ReadReplicas? = nil, host: String, port: Int, devAuth: Bool, logger: Logger,
        warnAboutRandomSecret: Bool = true,
        onRunning: @escaping @Sendable (Int) async -> Void, shutdown: (@Sendable () async -> Void)?
    ) async throws {
        let (secret, random) = Self.accessTokenSecret()
        if random && warnAboutRandomSecret {
            logger.warning("ORBIT_JWT_SECRET is not set: access tokens are signed with a random key and stop working when this process ends.")
        }
        let storage = LocalDirectoryStorage(
            root: URL(fileURLWithPath: mediaDirectory, isDirectory: true).standardizedFileURL,
            publicURL: resolvedPublicURL(host: host, port: port))
        let services = OrbitServices(pool: pool, replicas: replicas, storage: storage)
        if let replicas {
            logger.info(
                "reads that may be slightly stale go to \(replicas.configurations.count) replica(s); writes and read-your-writes to the primary")
        }
        var apiConfiguration = configuration(host: host, port: port, devAuth: devAuth)
        let stripe: StripeClient?
        do {
            stripe = try payments.configure(&apiConfiguration, publicURL: publicURL, logger: logger)
        } catch {
            await pool.close()
            await replicas?.close()
            throw error
        }
        apiConfiguration.connectionLimit = connectionLimit(
            databaseConnections: poolSize * (1 + (replicas?.configurations.count ?? 0)) + 1, logger: logger)
        let api: OrbitAPI
        do {
            api = try OrbitAPI(
                services: services, configuration: apiConfiguration,
                tokens: try await AccessTokens(secret: secret), appleVerifier: AppleJWKSVerifier(source: appleKeySource, bundleID: appleBundleID)
            )
        } catch {
            await pool.close()
            await replicas?.close()
            await PaymentOptions.close(stripe, logger: logger)
            throw (error as? APIConfigurationError).map { CommandFailure($0.description) } ?? error
        }
        var apnsSender: APNsSender?
        var jobServices: [any Service] = []
        if jobs {
            let pushes: any PushSender
            do {
                (pushes, apnsSender) = try await apns.pushSender(logger: logger)
            } catch {
                await pool.close()
                await replicas?.close()
                await PaymentOptions.close(stripe, logger: logger)
                throw error
            }
            jobServices = [ScheduledJobs(services: services, pushes: pushes, logger: logger, pushSignal: api.pushSignal)]
        }
        let app = api.makeApplication(logger: logger, services: jobServices, onRunning: onRunning)
        do {
            if let shutdown {
                let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { try await group.run() }
                    tasks.addTask {
                        await shutdown()
                        await group.triggerGracefulShutdown()
                    }
                    try await tasks.next()
                    tasks.cancelAll()
                }
            } else {
                try await app.runService()
            }
        } catch {
            await APNsOptions.close(apnsSender, logger: logger)
            await PaymentOptions.close(stripe, logger: logger)
            throw error
        }
        await APNsOptions.close(apnsSender, logger: logger)
        await PaymentOptions.close(stripe, logger: logger)
    }
}

/// `orbitctl serve`: the HTTP API the iOS app talks to.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the HTTP API (OpenAPI document at /openapi.yaml) until SIGTERM or Ctrl-C.",
        discussion: """
            Logs are JSON lines on stderr. Access tokens are signed with ORBIT_JWT_SECRET (at least 32 bytes; \
            the same on every server). SIGTERM stops accepting connections, lets requests in flight finish and \
            closes the database pool. --dev-auth adds POST /auth/dev (tokens for any existing user by email) and \
            is refused unless the server binds to localhost.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var api: APIOptions

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0: any free port).")
    var port = 8080

    @Flag(help: "Add POST /auth/dev: tokens for demo users without Apple (localhost only).")
    var devAuth = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "info"

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical.")
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = JSONLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "orbit.api")
        let pool = ConnectionPool(configuration: try database.configuration(), options: .init(maxConnections: api.poolSize))
        let replicas = try database.makeReplicas(maxConnections: api.poolSize)
        let host = host
        try await api.serve(
            pool: pool, replicas: replicas, host: host, port: port, devAuth: devAuth, logger: logger,
            onRunning: { port in
                print("OrbitCove API listening on http://\(host.contains(":") ? "[\(host)]" : host):\(port)")
                fflush(nil)
            },
            shutdown: nil
        )
    }
}

/// Where pushes go: APNs with the team's key, or (without these options) standard output.
struct APNsOptions: ParsableArguments {
    @Option(help: "APNs signing key (the .p8 file): pushes go to APNs. Needs --apns-key-id and --apns-team-id.")
    var apnsKeyFile: String?

    @Option(help: "The APNs key's 10-character id.")
    var apnsKeyID: String?

    @Option(help: "The Apple Developer team id (10 characters).")
    var apnsTeamID: String?

    @Option(help: "APNs environments to send to: production, sandbox or both (devices say which they belong to).")
    var apnsEnvironment = "both"

    func validate() throws {
        let given = [apnsKeyFile, apnsKeyID, apnsTeamID]
        guard given.allSatisfy({ $0 == nil }) || given.allSatisfy({ $0 != nil }) else {
            throw ValidationError("APNs needs all three of --apns-key-file, --apns-key-id and --apns-team-id.")
        }
        guard environments != nil else { throw ValidationError("--apns-environment must be production, sandbox or both.") }
    }

    var environments: Set<APNsEnvironment>? {
        switch apnsEnvironment {
        case "both": [.production, .sandbox]
        default: APNsEnvironment(rawValue: apnsEnvironment).map { [$0] }
        }
    }

    /// Where pushes go, in a few words.
    var summary: String {
        guard apnsKeyFile != nil, let environments else { return "printed on stdout (no --apns-key-file)" }
        return "APNs (\(environments.map(\.rawValue).sorted().joined(separator: ", ")))"
    }

    /// APNs when configured, otherwise the sender that prints; says which. The second value is
    /// the APNs sender to shut down at the end.
    func pushSender(logger: Logger) async throws -> (any PushSender, APNsSender?) {
        guard let apnsKeyFile, let apnsKeyID, let apnsTeamID, let environments else {
            logger.notice("APNs is not configured (--apns-key-file, --apns-key-id, --apns-team-id): pushes are only written to stdout")
            return (LoggingPushSender(), nil)
        }
        let pem: String
        do {
            pem = try String(contentsOfFile: apnsKeyFile, encoding: .utf8)
        } catch {
            throw CommandFailure("cannot read the APNs key \(apnsKeyFile): \(error.localizedDescription)")
        }
        do {
            let sender = try await APNsSender(
                configuration: try APNsConfiguration(keyPEM: pem, keyID: apnsKeyID, teamID: apnsTeamID, environments: environments))
            logger.info(
                "pushes go to APNs",
                metadata: ["environments": "\(environments.map(\.rawValue).sorted())", "key_id": "\(apnsKeyID)", "team_id": "\(apnsTeamID)"])
            return (sender, sender)
        } catch let error as APNsConfigurationError {
            throw CommandFailure(error.description)
        }
    }

    /// Shuts `sender` down, logging a failure.
    static func close(_ sender: APNsSender?, logger: Logger) async {
        do {
            try await sender?.shutdown()
        } catch {
            logger.warning("closing the APNs connections failed", metadata: ["error": "\(error)"])
        }
    }
}
