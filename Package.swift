// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // Applies to this package's own targets only (SwiftPM ignores it for packages that depend
    // on corrupt-fuzz).
    .treatAllWarnings(as: .error),
]

/// `CORRUPT_FUZZ_COVERAGE=1 swift build …` builds the example loaders' code with SanitizerCoverage,
/// as an app's Package.swift does for coverage guidance (README, Docs/Coverage.md): what
/// BENCHMARKS.md's coverage cost is measured with. Off by default (only programs that link
/// corrupt-fuzz's coverage runtime can link instrumented code).
let loaderSettings: [SwiftSetting] =
    swiftSettings + (Context.environment["CORRUPT_FUZZ_COVERAGE"] == "1" ? [.unsafeFlags(["-sanitize=fuzzer"])] : [])

/// The demo's programs (Examples/): executable targets with no product, so a package that
/// depends on corrupt-fuzz never sees them (SwiftPM gives each an executable of the target's
/// name in this package's own builds).
let demoExecutables = [
    "habit-loader-naive", "habit-loader-hardened", "friend-list-naive", "friend-list-hardened", "friend-list-v2", "notes-loader-naive",
    "notes-loader-hardened", "notes-writer-naive", "notes-writer-hardened", "notes-migrate-naive", "notes-migrate-hardened",
    "notes-migrate-check", "notes-save-naive", "notes-save-hardened", "note-store-naive", "note-store-hardened", "foundation-atomic-write", "plist-harness",
    "xml-harness",
]

let package = Package(
    name: "corrupt-fuzz",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "corrupt-fuzz", targets: ["corrupt-fuzz"]),
        .library(name: "CorruptFuzzTesting", targets: ["CorruptFuzzTesting"]),
        .library(name: "CorruptFuzzWorker", targets: ["CorruptFuzzWorker"]),
        // The C side of a persistent worker (corrupt_fuzz_worker.h), for C and C++ loaders.
        .library(name: "CCorruptFuzzWorker", targets: ["CCorruptFuzzWorker"]),
        .library(name: "CorruptFuzzCore", targets: ["CorruptFuzzCore"]),
        .library(name: "CorruptFuzzRunner", targets: ["CorruptFuzzRunner"]),
        .library(name: "CorruptFuzzReporting", targets: ["CorruptFuzzReporting"]),
        .library(name: "CorruptFuzzSchema", targets: ["CorruptFuzzSchema"]),
        .library(name: "CorruptFuzzPlist", targets: ["CorruptFuzzPlist"]),
        .library(name: "CorruptFuzzGenerators", targets: ["CorruptFuzzGenerators"]),
        .library(name: "CorruptFuzzLibFuzzer", targets: ["CorruptFuzzLibFuzzer"]),
        // Need libxml2's and SQLite's headers (the traits below decide only whether the CLI
        // and its bundled formats use them).
        .library(name: "CorruptFuzzXML", targets: ["CorruptFuzzXML"]),
        .library(name: "CorruptFuzzSQLite", targets: ["CorruptFuzzSQLite"]),
        .library(name: "CorruptFuzzSQLiteTesting", targets: ["CorruptFuzzSQLiteTesting"]),
    ],
    traits: [
        .trait(name: "XML", description: "XML documents and XML Schemas through the system libxml2 (libxml2-dev, or Homebrew's libxml2)."),
        .trait(name: "SQLite", description: "SQLite databases through the system SQLite (libsqlite3-dev, or Homebrew's sqlite)."),
        .default(enabledTraits: ["XML", "SQLite"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // `swift package generate-documentation` (DocC); a plugin, never linked.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: - Engine
        .target(
            name: "CCorruptFuzzSpawn",
            cSettings: [.define("_GNU_SOURCE")]
        ),
        .target(
            name: "CorruptFuzzCore",
            // Platform/ is the one platform layer (scratch folders, open files, the executable's
            // path, signals, interrupts); CCorruptFuzzSpawn its C side.
            dependencies: ["CCorruptFuzzSpawn", "CCorruptFuzzWorker"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CorruptFuzzRunner",
            dependencies: ["CorruptFuzzCore", "CCorruptFuzzSpawn", "CorruptFuzzWorker"],
            // The crash-point recorder's C source, compiled on first use (RecorderLibrary):
            // nothing a user builds would otherwise build a dynamic library for LD_PRELOAD.
            // And the crash reporter of C targets (CrashHandler/crash_handler.c), the same way.
            resources: [.embedInCode("Recorder/recorder.c"), .embedInCode("CrashHandler/crash_handler.c")],
            swiftSettings: swiftSettings
        ),
        // The persistent-worker side of a loader executable: Foundation only (Swift), or C.
        .target(
            name: "CorruptFuzzWorker",
            // Its C side: the coverage callbacks of instrumented loaders (corrupt_fuzz_coverage.h).
            dependencies: ["CCorruptFuzzWorker"],
            swiftSettings: swiftSettings
        ),
        .target(name: "CCorruptFuzzWorker"),
        .target(
            name: "CorruptFuzzReporting",
            dependencies: ["CorruptFuzzCore", "CorruptFuzzRunner"],
            swiftSettings: swiftSettings
        ),

        .target(
            name: "CorruptFuzzSchema",
            dependencies: ["CorruptFuzzCore", .product(name: "Yams", package: "Yams")],
            swiftSettings: swiftSettings
        ),

        .target(
            name: "CorruptFuzzPlist",
            dependencies: ["CorruptFuzzCore"],
            swiftSettings: swiftSettings
        ),
        .systemLibrary(
            name: "CCorruptFuzzLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
        ),
        .target(
            name: "CorruptFuzzXML",
            dependencies: ["CorruptFuzzCore", "CCorruptFuzzLibXML2"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CorruptFuzzGenerators",
            dependencies: ["CorruptFuzzCore"],
            swiftSettings: swiftSettings
        ),
        // SQLite databases (#15): the real SQLite through the system library.
        .systemLibrary(
            name: "CCorruptFuzzSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(
            name: "CorruptFuzzSQLite",
            dependencies: ["CorruptFuzzCore", "CorruptFuzzGenerators", "CCorruptFuzzSQLite"],
            swiftSettings: swiftSettings
        ),
        // CorruptFuzzTesting's checks for SQLite stores (a separate product, so CorruptFuzzTesting needs no libsqlite3).
        .target(
            name: "CorruptFuzzSQLiteTesting",
            dependencies: ["CorruptFuzzTesting", "CorruptFuzzSQLite"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CorruptFuzzTesting",
            dependencies: ["CorruptFuzzCore", "CorruptFuzzRunner", "CorruptFuzzSchema", "CorruptFuzzGenerators", "CorruptFuzzWorker"],
            swiftSettings: swiftSettings
        ),

        // The libFuzzer bridge: a loader, a format and a validator as a libFuzzer target
        // (harnesses in Fuzz/, built with -sanitize=fuzzer; nothing here needs the runtime).
        .target(name: "CCorruptFuzzLibFuzzer"),
        .target(
            name: "CorruptFuzzLibFuzzer",
            dependencies: ["CCorruptFuzzLibFuzzer", "CorruptFuzzCore", "CorruptFuzzRunner", "CorruptFuzzReporting", "CorruptFuzzWorker"],
            swiftSettings: swiftSettings
        ),

        // MARK: - Bundled examples (the demo's formats and loaders), under Examples/
        .target(
            name: "CorruptFuzzExamples",
            dependencies: [
                "CorruptFuzzCore", "CorruptFuzzSchema", "CorruptFuzzPlist", "CorruptFuzzGenerators", "CorruptFuzzRunner", "CorruptFuzzReporting",
                "FriendListLoaders",
                .target(name: "CorruptFuzzXML", condition: .when(traits: ["XML"])),
                .target(name: "NotesLoaders", condition: .when(traits: ["XML"])),
                .target(name: "CorruptFuzzSQLite", condition: .when(traits: ["SQLite"])),
            ],
            path: "Examples/CorruptFuzzExamples",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HabitLoaders",
            path: "Examples/HabitLoaders",
            swiftSettings: loaderSettings
        ),
        .executableTarget(
            name: "habit-loader-naive",
            dependencies: ["HabitLoaders", "CCorruptFuzzWorker"],
            path: "Examples/HabitLoaderNaive",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "habit-loader-hardened",
            dependencies: ["HabitLoaders", "CCorruptFuzzWorker"],
            path: "Examples/HabitLoaderHardened",
            swiftSettings: swiftSettings
        ),

        // The coverage maze (BENCHMARKS.md "Coverage guidance"): the loader's code is built with
        // SanitizerCoverage, as a user's loader target is for coverage guidance (README).
        // unsafeFlags are allowed here because no product contains this target. Linux only:
        // Xcode's swiftc refuses -sanitize=fuzzer (it has no libFuzzer), a swift.org toolchain
        // takes it (Docs/Coverage.md); the tests that need the instrumentation are Linux-only.
        .target(
            name: "MazeLoader",
            path: "Examples/MazeLoader",
            swiftSettings: swiftSettings + [.unsafeFlags(["-sanitize=fuzzer"], .when(platforms: [.linux]))]
        ),
        .executableTarget(
            name: "maze-worker",
            dependencies: ["MazeLoader", "CorruptFuzzWorker"],
            path: "Examples/MazeWorker",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FriendListLoaders",
            path: "Examples/FriendListLoaders",
            swiftSettings: loaderSettings
        ),
        .executableTarget(
            name: "friend-list-naive",
            dependencies: ["FriendListLoaders", "CorruptFuzzWorker"],
            path: "Examples/FriendListNaive",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "friend-list-hardened",
            dependencies: ["FriendListLoaders", "CorruptFuzzWorker"],
            path: "Examples/FriendListHardened",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "friend-list-v2",
            dependencies: ["FriendListLoaders", "CorruptFuzzWorker"],
            path: "Examples/FriendListV2",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "NotesLoaders",
            dependencies: ["CCorruptFuzzLibXML2"],
            path: "Examples/NotesLoaders",
            resources: [.copy("notes.xsd")],
            swiftSettings: loaderSettings
        ),
        .executableTarget(
            name: "notes-loader-naive",
            dependencies: ["NotesLoaders", "CorruptFuzzWorker"],
            path: "Examples/NotesLoaderNaive",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "notes-loader-hardened",
            dependencies: ["NotesLoaders", "CorruptFuzzWorker"],
            path: "Examples/NotesLoaderHardened",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "notes-writer-naive",
            dependencies: ["NotesLoaders"],
            path: "Examples/NotesWriterNaive",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "notes-writer-hardened",
            dependencies: ["NotesLoaders"],
            path: "Examples/NotesWriterHardened",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "NotesMigration",
            path: "Examples/NotesMigration",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "notes-migrate-naive",
            dependencies: ["NotesMigration"],
            path: "Examples/NotesMigrateNaive",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "notes-migrate-hardened",
            dependencies: ["NotesMigration"],
            path: "Examples/NotesMigrateHardened",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "notes-migrate-check",
            dependencies: ["NotesMigration"],
            path: "Examples/NotesMigrateCheck",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "notes-save-naive",
            dependencies: ["NotesMigration"],
            path: "Examples/NotesSaveNaive",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "notes-save-hardened",
            dependencies: ["NotesMigration"],
            path: "Examples/NotesSaveHardened",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "foundation-atomic-write",
            path: "Examples/FoundationAtomicWrite",
            swiftSettings: swiftSettings
        ),
        // The SQLite note store (#15): app code on the system SQLite, and its two loaders.
        .target(
            name: "SQLiteLoaders",
            dependencies: ["CCorruptFuzzSQLite"],
            path: "Examples/SQLiteLoaders",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "note-store-naive",
            dependencies: ["SQLiteLoaders", "CorruptFuzzSQLite", "CorruptFuzzWorker"],
            path: "Examples/NoteStoreNaive",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "note-store-hardened",
            dependencies: ["SQLiteLoaders", "CorruptFuzzSQLite", "CorruptFuzzWorker"],
            path: "Examples/NoteStoreHardened",
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "corrupt-fuzz-speed",
            dependencies: ["CorruptFuzzTesting", "CorruptFuzzWorker", "CorruptFuzzSchema", "HabitLoaders"],
            path: "Benchmarks/Speed",
            exclude: ["libfuzzer-habit.swift", "run.sh"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "plist-harness",
            path: "Examples/PlistHarness",
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "xml-harness",
            path: "Examples/XMLHarness",
            swiftSettings: swiftSettings
        ),

        // MARK: - Command-line tool
        .executableTarget(
            name: "corrupt-fuzz",
            dependencies: [
                "CorruptFuzzCore",
                "CorruptFuzzRunner",
                "CorruptFuzzReporting",
                "CorruptFuzzExamples",
                "CorruptFuzzSchema",
                "CorruptFuzzPlist",
                "CCorruptFuzzSpawn",
                .target(name: "CorruptFuzzXML", condition: .when(traits: ["XML"])),
                .target(name: "CorruptFuzzSQLite", condition: .when(traits: ["SQLite"])),
                // Not the demo's loaders: `corrupt-fuzz run` builds them on first use (Demo.swift),
                // so a user's CI that builds this product builds the CLI alone.
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - Tests
        .executableTarget(
            name: "FixtureTarget",
            path: "Tests/Fixtures/FixtureTarget",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "WorkerFixture",
            dependencies: ["CorruptFuzzWorker", "HabitLoaders"],
            path: "Tests/Fixtures/WorkerFixture",
            swiftSettings: swiftSettings
        ),
        // The loop of the self-fuzz properties, shared by two test targets.
        .target(
            name: "SelfFuzzSupport",
            dependencies: ["CorruptFuzzCore"],
            path: "Tests/SelfFuzzSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CorruptFuzzCoreTests",
            dependencies: ["CorruptFuzzCore", "SelfFuzzSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CorruptFuzzRunnerTests",
            dependencies: [
                "CorruptFuzzRunner", "CorruptFuzzCore", "CorruptFuzzWorker", "CCorruptFuzzWorker", "FixtureTarget", "WorkerFixture", "maze-worker",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CorruptFuzzSchemaTests",
            dependencies: ["CorruptFuzzSchema", "CorruptFuzzCore", "CorruptFuzzExamples"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CorruptFuzzPlistTests",
            // plist-harness: the keyed-archive sweep's NSKeyedUnarchiver, a process per input.
            dependencies: [
                "CorruptFuzzPlist", "CorruptFuzzCore", "CorruptFuzzExamples", "CorruptFuzzGenerators", "FriendListLoaders", "SelfFuzzSupport", "plist-harness",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CorruptFuzzXMLTests",
            dependencies: ["CorruptFuzzXML", "CorruptFuzzCore", "SelfFuzzSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CorruptFuzzTestingTests",
            dependencies: [
                "CorruptFuzzTesting", "CorruptFuzzWorker", "CorruptFuzzSchema", "CorruptFuzzCore", "HabitLoaders", "CorruptFuzzExamples", "FriendListLoaders",
                "NotesLoaders", "NotesMigration", "MazeLoader",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CorruptFuzzReportingTests",
            dependencies: ["CorruptFuzzReporting", "CorruptFuzzRunner", "CorruptFuzzCore", "SelfFuzzSupport"],
            exclude: ["Resources"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CorruptFuzzSQLiteTests",
            dependencies: [
                "CorruptFuzzSQLite", "CorruptFuzzSQLiteTesting", "CorruptFuzzCore", "CorruptFuzzExamples", "SQLiteLoaders", "CorruptFuzzTesting",
                "SelfFuzzSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CorruptFuzzLibFuzzerTests",
            dependencies: ["CorruptFuzzLibFuzzer", "CorruptFuzzCore", "CorruptFuzzSchema", "CorruptFuzzExamples", "HabitLoaders"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CorruptFuzzCLITests",
            dependencies: ["corrupt-fuzz", "CorruptFuzzExamples", "CorruptFuzzCore"] + demoExecutables.map { .target(name: $0) },
            swiftSettings: swiftSettings
        ),
    ]
)

// The repository's own libFuzzer harnesses (Fuzz/, a package of their own) link the demo's
// loaders and formats; they set CORRUPT_FUZZ_FUZZERS=1, and no one else sees these products.
if Context.environment["CORRUPT_FUZZ_FUZZERS"] == "1" {
    package.products += [
        .library(name: "HabitLoaders", targets: ["HabitLoaders"]),
        .library(name: "NotesLoaders", targets: ["NotesLoaders"]),
        .library(name: "CorruptFuzzExamples", targets: ["CorruptFuzzExamples"]),
    ]
}
