// swift-tools-version:6.1
// An app's package outside corrupt-fuzz: it depends on CorruptFuzzTesting as a user's package
// does, and tests its own contacts loader (a fuzzing campaign) and save code (crash points) with
// it. Its targets CSQLite, FixtureTarget and habit-loader-naive are named as targets of
// corrupt-fuzz were or are, to show that those names do not clash in a user's package graph.
// Scripts/fresh-machine-check.sh runs `swift test` here on a fresh Debian root, both ways:
//
//   swift test                                   # corrupt-fuzz by path: this checkout (../..)
//   CORRUPT_FUZZ_URL=file:///path/to/corrupt-fuzz CORRUPT_FUZZ_BRANCH=main swift test --scratch-path .build-url
//
// (CORRUPT_FUZZ_REVISION=<commit> instead of the branch pins a commit.)
import Foundation
import PackageDescription

let environment = ProcessInfo.processInfo.environment
let corruptFuzz: Package.Dependency
// The identity a product is named by: a URL dependency's last path component (without .git),
// a path dependency's folder name (the checkout's name, whatever it is).
let corruptFuzzPackage: String
if let url = environment["CORRUPT_FUZZ_URL"], !url.isEmpty {
    if let revision = environment["CORRUPT_FUZZ_REVISION"], !revision.isEmpty {
        corruptFuzz = .package(url: url, revision: revision)
    } else {
        corruptFuzz = .package(url: url, branch: environment["CORRUPT_FUZZ_BRANCH"] ?? "main")
    }
    let last = url.split(separator: "/").last.map(String.init) ?? url
    corruptFuzzPackage = last.hasSuffix(".git") ? String(last.dropLast(4)) : last
} else {
    corruptFuzz = .package(path: "../..")
    corruptFuzzPackage =
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().lastPathComponent
}

let package = Package(
    name: "consumer-app",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "ContactsApp", targets: ["ContactsApp"]),
        .executable(name: "habit-loader-naive", targets: ["habit-loader-naive"]),
    ],
    dependencies: [corruptFuzz],
    targets: [
        // A plain C target (corrupt-fuzz's CSQLite is a system-library target for SQLite).
        .target(name: "CSQLite"),
        .target(name: "ContactsApp", dependencies: ["CSQLite"]),
        // Sample files (corrupt-fuzz's FixtureTarget is an executable its runner tests start).
        .target(name: "FixtureTarget", dependencies: ["ContactsApp"]),
        // The contacts loader as a command (corrupt-fuzz's habit-loader-naive is a demo loader).
        .executableTarget(name: "habit-loader-naive", dependencies: ["ContactsApp"]),
        .testTarget(
            name: "ContactsAppTests",
            dependencies: [
                "ContactsApp", "FixtureTarget", .product(name: "CorruptFuzzTesting", package: corruptFuzzPackage),
                // Brings corrupt-fuzz's SQLite system-library target into this graph beside this
                // package's own CSQLite (before the rename to CCorruptFuzzSQLite: "multiple
                // packages declare targets with a conflicting name: 'CSQLite'").
                .product(name: "CorruptFuzzSQLite", package: corruptFuzzPackage),
            ]
        ),
    ]
)
