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
        // Shared test support: one server per test process, one cloned database per test.
        .target(
            name: "OrbitTestSupport",
            dependencies: ["OrbitPostgres", "LocalPostgres"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "orbitctl",
            dependencies: [
                "OrbitPostgres",
                "LocalPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "orbit-bench",
            dependencies: [
                "OrbitPostgres",
                "LocalPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OrbitPostgresTests",
            dependencies: ["OrbitPostgres", "OrbitTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LocalPostgresTests",
            dependencies: ["LocalPostgres", "OrbitPostgres", "OrbitTestSupport"],
            swiftSettings: swiftSettings
        ),
    ]
)
