// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Fatchat",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "RecordStore", targets: ["RecordStore"]),
        .library(name: "SyncEngine", targets: ["SyncEngine"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .target(name: "CStatfs"),
        .target(
            name: "RecordStore",
            dependencies: ["CStatfs", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .target(name: "SyncEngine", dependencies: ["RecordStore"]),
        .executableTarget(
            name: "StoreWorker",
            dependencies: [
                "RecordStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "RecordStoreTests",
            dependencies: ["RecordStore", "StoreWorker"]
        ),
        .executableTarget(
            name: "SyncWorker",
            dependencies: [
                "SyncEngine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "SyncEngineTests",
            dependencies: ["SyncEngine", "RecordStore", "SyncWorker"]
        ),
        .systemLibrary(
            name: "CNCurses",
            pkgConfig: "ncursesw",
            providers: [.apt(["libncursesw5-dev"])]
        ),
        .target(
            name: "TerminalUI",
            dependencies: ["CNCurses"],
            resources: [.copy("Resources/help.txt")]
        ),
        .executableTarget(name: "TUIDemo", dependencies: ["TerminalUI"]),
        .testTarget(
            name: "TerminalUITests",
            dependencies: ["TerminalUI", "CNCurses", "TUIDemo"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
