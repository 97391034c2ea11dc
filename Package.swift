// swift-tools-version:6.0
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "OrbitCove",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "orbitctl", targets: ["orbitctl"]),
        .library(name: "OrbitPostgres", targets: ["OrbitPostgres"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "4.1.0"..<"5.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/yaslab/CSV.swift.git", from: "2.5.2"),
    ],
    targets: [
        // libpq, the PostgreSQL C client library, as a system library (Debian: libpq-dev).
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        // The thin, safe async Swift layer over libpq: connections, pool, parameters, rows, errors.
        .target(
            name: "OrbitPostgres",
            dependencies: [
                "CLibPQ",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Starts and stops a throwaway PostgreSQL cluster (tests, `orbitctl dev`, benchmarks).
        .target(
            name: "LocalPostgres",
            dependencies: [.product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // Versioned and repeatable SQL (migrations/, sql/): reads, checksums, applies and records
        // them. The files are built into the module by the EmbedFiles plugin.
        .target(
            name: "OrbitMigrations",
            dependencies: [
                "OrbitPostgres",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["EmbedFiles"]
        ),
        // The domain, one folder per domain (Communities, Events, Feed, Expenses, …), each a service
        // over the shared RequestRunner that enforces the permission matrix. Used by orbitctl and the API.
        .target(
            name: "OrbitCore",
            dependencies: [
                "OrbitPostgres", .product(name: "Logging", package: "swift-log"), .product(name: "CSV", package: "CSV.swift"),
            ],
            swiftSettings: swiftSettings,
            // The notifications' texts per language (catalogs/), built into the module.
            plugins: ["EmbedFiles"]
        ),
        // The deterministic bulk data set of `orbitctl dev seed`, `orbit-bench scale` and the tests:
        // set-based SQL as a superuser, with triggers off, verified against recounts afterwards.
        .target(
            name: "OrbitScaleData",
            dependencies: ["OrbitCore", "OrbitPostgres"],
            swiftSettings: swiftSettings
        ),
        // What runs beside the requests on `orbitctl serve`: the change listener, the live hub and
        // its sockets' outboxes, the push wake and the scheduled jobs. No HTTP.
        .target(
            name: "OrbitRuntime",
            dependencies: [
                "OrbitCore",
                "OrbitPostgres",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The HTTP API (`orbitctl serve`): Hummingbird routes over the same service layer, JWT
        // auth with rotating refresh tokens, problem+json errors, idempotency, rate limits, metrics.
        .target(
            name: "OrbitAPI",
            dependencies: [
                "OrbitCore",
                "OrbitPostgres",
                "OrbitRuntime",
                "OrbitMigrations",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["EmbedFiles"]
        ),
        // Push delivery to Apple's APNs provider API: HTTP/2 (async-http-client) with ES256 token
        // authentication (jwt-kit), behind OrbitCore's PushSender.
        .target(
            name: "OrbitPush",
            dependencies: [
                "OrbitCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Stripe's API (Checkout Sessions) behind OrbitCore's PaymentProvider: form-encoded POSTs
        // with the secret key and an Idempotency-Key (async-http-client).
        .target(
            name: "OrbitStripe",
            dependencies: [
                "OrbitCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Build-time tool of the EmbedFiles plugin: writes migrations/, sql/ and openapi.yaml into Swift.
        .executableTarget(name: "embed-files", path: "Plugins/embed-files"),
        .plugin(
            name: "EmbedFiles",
            capability: .buildTool(),
            dependencies: ["embed-files"]
        ),
        // Shared test support: one server per test process, one cloned database per test.
        .target(
            name: "OrbitTestSupport",
            dependencies: [
                "OrbitPostgres", "OrbitCore", "LocalPostgres", "OrbitMigrations", "OrbitScaleData",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "orbitctl",
            dependencies: [
                "OrbitPostgres",
                "OrbitCore",
                "OrbitScaleData",
                "OrbitAPI",
                "OrbitRuntime",
                "OrbitPush",
                "OrbitStripe",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                "LocalPostgres",
                "OrbitMigrations",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "orbit-bench",
            dependencies: [
                "OrbitPostgres",
                "OrbitCore",
                "OrbitScaleData",
                "OrbitAPI",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                "LocalPostgres",
                "OrbitMigrations",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The input parsers with the properties they keep, for libFuzzer and the corpus replay.
        .target(
            name: "OrbitFuzzTargets",
            dependencies: ["OrbitCore"],
            swiftSettings: swiftSettings
        ),
        // libFuzzer's driver (scripts/fuzz.sh builds it with -sanitize=fuzzer); otherwise a replayer.
        .executableTarget(
            name: "orbit-fuzz",
            dependencies: ["OrbitFuzzTargets"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OrbitPostgresTests",
            dependencies: ["OrbitPostgres", "OrbitTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OrbitMigrationsTests",
            dependencies: ["OrbitMigrations", "OrbitPostgres", "OrbitTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OrbitCoreTests",
            dependencies: [
                "OrbitCore", "OrbitFuzzTargets", "OrbitPostgres", "OrbitScaleData", "OrbitTestSupport", .product(name: "CSV", package: "CSV.swift"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        // orbitctl end to end: runs the built binary against a test database.
        .testTarget(
            name: "OrbitctlTests",
            dependencies: ["orbitctl", "LocalPostgres", "OrbitPostgres", "OrbitTestSupport"],
            swiftSettings: swiftSettings
        ),
        // The HTTP API through its router (in process) and a real socket, against a real database.
        .testTarget(
            name: "OrbitAPITests",
            dependencies: [
                "OrbitAPI", "OrbitRuntime", "orbitctl", "OrbitCore", "OrbitPostgres", "OrbitTestSupport", "OrbitScaleData", "LocalPostgres",
                "OrbitStripe",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // APNs delivery against a local HTTP/2 server over TLS that checks what APNs checks.
        .testTarget(
            name: "OrbitPushTests",
            dependencies: [
                "OrbitPush", "OrbitCore", "OrbitPostgres", "OrbitTestSupport",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OrbitScaleDataTests",
            dependencies: ["OrbitScaleData", "OrbitCore", "OrbitPostgres", "OrbitTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SchemaTests",
            dependencies: ["OrbitMigrations", "OrbitPostgres", "OrbitScaleData", "OrbitTestSupport"],
            exclude: ["DraftDDL", "orbit_app_functions.txt"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LocalPostgresTests",
            dependencies: ["LocalPostgres", "OrbitPostgres", "OrbitTestSupport"],
            swiftSettings: swiftSettings
        ),
    ]
)
