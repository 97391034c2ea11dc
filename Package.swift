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
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
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
        // them. The files are built into the module by the EmbedSQLFiles plugin.
        .target(
            name: "OrbitMigrations",
            dependencies: [
                "OrbitPostgres",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["EmbedSQLFiles"]
        ),
        // The domain: users, communities, members, invites, … and the service layer that enforces
        // the permission matrix. Used by orbitctl and (later) the HTTP API.
        .target(
            name: "OrbitCore",
            dependencies: ["OrbitPostgres"],
            swiftSettings: swiftSettings
        ),
        // Build-time tool of the EmbedSQLFiles plugin: writes migrations/ and sql/ into Swift.
        .executableTarget(name: "embed-sql-files", path: "Plugins/embed-sql-files"),
        .plugin(
            name: "EmbedSQLFiles",
            capability: .buildTool(),
            dependencies: ["embed-sql-files"]
        ),
        // Shared test support: one server per test process, one cloned database per test.
        .target(
            name: "OrbitTestSupport",
            dependencies: ["OrbitPostgres", "LocalPostgres", "OrbitMigrations"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "orbitctl",
            dependencies: [
                "OrbitPostgres",
                "OrbitCore",
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
                "LocalPostgres",
                "OrbitMigrations",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
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
            dependencies: ["OrbitCore", "OrbitPostgres", "OrbitTestSupport"],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        // orbitctl end to end: runs the built binary against a test database.
        .testTarget(
            name: "OrbitctlTests",
            dependencies: ["orbitctl", "LocalPostgres", "OrbitPostgres", "OrbitTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SchemaTests",
            dependencies: ["OrbitMigrations", "OrbitPostgres", "OrbitTestSupport"],
            exclude: ["DraftDDL"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LocalPostgresTests",
            dependencies: ["LocalPostgres", "OrbitPostgres", "OrbitTestSupport"],
            swiftSettings: swiftSettings
        ),
    ]
)
