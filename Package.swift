// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Fatchat",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "RecordStore", targets: ["RecordStore"]),
        .library(name: "SyncEngine", targets: ["SyncEngine"]),
        .library(name: "FatchatCore", targets: ["FatchatCore"]),
        .executable(name: "fatchat", targets: ["fatchat"]),
        .executable(name: "fatchat-bench", targets: ["FatchatBench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        .target(name: "CStatfs"),
        .target(
            name: "RecordStore",
            dependencies: [
                "CStatfs",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(name: "SyncEngine", dependencies: ["RecordStore", "CStatfs"]),
        .target(
            name: "FatchatResources",
            path: "Resources",
            resources: [.copy("help.txt"), .copy("alerts.en.json")]
        ),
        .target(name: "FatchatCore", dependencies: ["SyncEngine", "RecordStore", "FatchatResources", "CStatfs"]),
        .executableTarget(
            name: "fatchat",
            dependencies: [
                "FatchatCore",
                "TerminalUI",
                "SyncEngine",
                "RecordStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .executableTarget(
            name: "StoreWorker",
            dependencies: [
                "RecordStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(name: "ProcessTestKit", path: "Tests/ProcessTestKit"),
        .testTarget(
            name: "RecordStoreTests",
            dependencies: [
                "RecordStore", "StoreWorker", "ProcessTestKit", "FatchatResources", "FatchatFuzz",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .executableTarget(
            name: "SyncWorker",
            dependencies: [
                "SyncEngine",
                "RecordStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "FatchatCoreTests",
            dependencies: ["FatchatCore", "RecordStore", "SyncEngine", "fatchat", "ProcessTestKit"]
        ),
        .testTarget(
            name: "SyncEngineTests",
            dependencies: ["SyncEngine", "RecordStore", "SyncWorker", "ProcessTestKit"]
        ),
        .systemLibrary(
            name: "CNCurses",
            pkgConfig: "ncursesw",
            providers: [.apt(["libncursesw5-dev"])]
        ),
        .target(
            name: "TerminalUI",
            dependencies: ["CNCurses", "FatchatCore"]
        ),
        .executableTarget(name: "TUIDemo", dependencies: ["TerminalUI"]),
        .testTarget(
            name: "TerminalUITests",
            dependencies: ["TerminalUI", "CNCurses", "TUIDemo", "fatchat", "ProcessTestKit", "FatchatCore", "RecordStore", "SyncEngine"]
        ),
        .executableTarget(
            name: "FatchatBench",
            dependencies: [
                "FatchatCore",
                "TerminalUI",
                "SyncEngine",
                "RecordStore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // Only for the raw-INSERT baseline beside the postgresql engine.
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .testTarget(name: "FatchatBenchTests", dependencies: ["FatchatBench", "ProcessTestKit"]),
        // Fuzz targets (issue 11). `swift build` makes a replayer of saved inputs; scripts/fuzz.sh builds the fuzzer.
        .executableTarget(
            name: "FatchatFuzz",
            dependencies: ["RecordStore", "FatchatCore", .product(name: "GRDB", package: "GRDB.swift")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
