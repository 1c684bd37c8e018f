// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // Applies to this package's own targets only (SwiftPM ignores it for packages that depend
    // on corrupt-fuzz).
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "corrupt-fuzz",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "CorruptFuzzCore", targets: ["CorruptFuzzCore"]),
        .library(name: "CorruptFuzzRunner", targets: ["CorruptFuzzRunner"]),
        .library(name: "CorruptFuzzReporting", targets: ["CorruptFuzzReporting"]),
        .library(name: "CorruptFuzzSchema", targets: ["CorruptFuzzSchema"]),
        .library(name: "CorruptFuzzTesting", targets: ["CorruptFuzzTesting"]),
        .library(name: "CorruptFuzzWorker", targets: ["CorruptFuzzWorker"]),
        .library(name: "CCorruptFuzzWorker", targets: ["CCorruptFuzzWorker"]),
        // The LD_PRELOAD file-operation recorder of `corrupt-fuzz crashpoints`
        // (libCorruptFuzzRecorder.so beside the corrupt-fuzz binary).
        .library(name: "CorruptFuzzRecorder", type: .dynamic, targets: ["CCorruptFuzzRecorder"]),
        .library(name: "CorruptFuzzPlist", targets: ["CorruptFuzzPlist"]),
        .library(name: "CorruptFuzzXML", targets: ["CorruptFuzzXML"]),
        .library(name: "CorruptFuzzGenerators", targets: ["CorruptFuzzGenerators"]),
        .library(name: "CorruptFuzzSQLite", targets: ["CorruptFuzzSQLite"]),
        .library(name: "CorruptFuzzSQLiteTesting", targets: ["CorruptFuzzSQLiteTesting"]),
        .library(name: "CorruptFuzzExamples", targets: ["CorruptFuzzExamples"]),
        .library(name: "CorruptFuzzLibFuzzer", targets: ["CorruptFuzzLibFuzzer"]),
        // The bundled loaders as libraries, for the libFuzzer harnesses of Fuzz/.
        .library(name: "HabitLoaders", targets: ["HabitLoaders"]),
        .library(name: "NotesLoaders", targets: ["NotesLoaders"]),
        .executable(name: "corrupt-fuzz", targets: ["corrupt-fuzz"]),
        .executable(name: "habit-loader-naive", targets: ["HabitLoaderNaive"]),
        .executable(name: "habit-loader-hardened", targets: ["HabitLoaderHardened"]),
        .executable(name: "friend-list-naive", targets: ["FriendListNaive"]),
        .executable(name: "friend-list-hardened", targets: ["FriendListHardened"]),
        .executable(name: "friend-list-v2", targets: ["FriendListV2"]),
        .executable(name: "notes-loader-naive", targets: ["NotesLoaderNaive"]),
        .executable(name: "notes-loader-hardened", targets: ["NotesLoaderHardened"]),
        .executable(name: "notes-writer-naive", targets: ["NotesWriterNaive"]),
        .executable(name: "notes-writer-hardened", targets: ["NotesWriterHardened"]),
        .executable(name: "notes-migrate-naive", targets: ["NotesMigrateNaive"]),
        .executable(name: "notes-migrate-hardened", targets: ["NotesMigrateHardened"]),
        .executable(name: "notes-migrate-check", targets: ["NotesMigrateCheck"]),
        .executable(name: "foundation-atomic-write", targets: ["FoundationAtomicWrite"]),
        .executable(name: "note-store-naive", targets: ["NoteStoreNaive"]),
        .executable(name: "note-store-hardened", targets: ["NoteStoreHardened"]),
        .executable(name: "plist-harness", targets: ["plist-harness"]),
        .executable(name: "xml-harness", targets: ["xml-harness"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        // MARK: - Engine
        .target(
            name: "CCorruptFuzzSpawn",
            cSettings: [.define("_GNU_SOURCE")]
        ),
        .target(
            name: "CorruptFuzzCore",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CorruptFuzzRunner",
            dependencies: ["CorruptFuzzCore", "CCorruptFuzzSpawn"],
            swiftSettings: swiftSettings
        ),
        // The persistent-worker side of a loader executable: Foundation only (Swift), or C.
        .target(
            name: "CorruptFuzzWorker",
            swiftSettings: swiftSettings
        ),
        .target(name: "CCorruptFuzzWorker"),
        // Never linked into a Swift target: it is loaded into programs under test.
        .target(name: "CCorruptFuzzRecorder"),
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
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
        ),
        .target(
            name: "CorruptFuzzXML",
            dependencies: ["CorruptFuzzCore", "CLibXML2"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CorruptFuzzGenerators",
            dependencies: ["CorruptFuzzCore"],
            swiftSettings: swiftSettings
        ),
        // SQLite databases (#15): the real SQLite through the system library.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(
            name: "CorruptFuzzSQLite",
            dependencies: ["CorruptFuzzCore", "CorruptFuzzGenerators", "CSQLite"],
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
                "CorruptFuzzCore", "CorruptFuzzSchema", "CorruptFuzzPlist", "CorruptFuzzXML", "CorruptFuzzGenerators",
                "FriendListLoaders", "NotesLoaders", "CorruptFuzzSQLite",
            ],
            path: "Examples/CorruptFuzzExamples",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HabitLoaders",
            path: "Examples/HabitLoaders",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "HabitLoaderNaive",
            dependencies: ["HabitLoaders", "CCorruptFuzzWorker"],
            path: "Examples/HabitLoaderNaive",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "HabitLoaderHardened",
            dependencies: ["HabitLoaders", "CCorruptFuzzWorker"],
            path: "Examples/HabitLoaderHardened",
            swiftSettings: swiftSettings
        ),

        .target(
            name: "FriendListLoaders",
            path: "Examples/FriendListLoaders",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "FriendListNaive",
            dependencies: ["FriendListLoaders", "CorruptFuzzWorker"],
            path: "Examples/FriendListNaive",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "FriendListHardened",
            dependencies: ["FriendListLoaders", "CorruptFuzzWorker"],
            path: "Examples/FriendListHardened",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "FriendListV2",
            dependencies: ["FriendListLoaders", "CorruptFuzzWorker"],
            path: "Examples/FriendListV2",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "NotesLoaders",
            dependencies: ["CLibXML2"],
            path: "Examples/NotesLoaders",
            resources: [.copy("notes.xsd")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "NotesLoaderNaive",
            dependencies: ["NotesLoaders", "CorruptFuzzWorker"],
            path: "Examples/NotesLoaderNaive",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "NotesLoaderHardened",
            dependencies: ["NotesLoaders", "CorruptFuzzWorker"],
            path: "Examples/NotesLoaderHardened",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "NotesWriterNaive",
            dependencies: ["NotesLoaders"],
            path: "Examples/NotesWriterNaive",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "NotesWriterHardened",
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
            name: "NotesMigrateNaive",
            dependencies: ["NotesMigration"],
            path: "Examples/NotesMigrateNaive",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "NotesMigrateHardened",
            dependencies: ["NotesMigration"],
            path: "Examples/NotesMigrateHardened",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "NotesMigrateCheck",
            dependencies: ["NotesMigration"],
            path: "Examples/NotesMigrateCheck",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "FoundationAtomicWrite",
            path: "Examples/FoundationAtomicWrite",
            swiftSettings: swiftSettings
        ),
        // The SQLite note store (#15): app code on the system SQLite, and its two loaders.
        .target(
            name: "SQLiteLoaders",
            dependencies: ["CSQLite"],
            path: "Examples/SQLiteLoaders",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "NoteStoreNaive",
            dependencies: ["SQLiteLoaders", "CorruptFuzzSQLite", "CorruptFuzzWorker"],
            path: "Examples/NoteStoreNaive",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "NoteStoreHardened",
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
                "CorruptFuzzXML",
                "CCorruptFuzzSpawn",
                // The demo runs these loaders, so `swift run corrupt-fuzz` builds them.
                "HabitLoaderNaive",
                "HabitLoaderHardened",
                "FriendListNaive",
                "FriendListHardened",
                "NotesLoaderNaive",
                "NotesLoaderHardened",
                "FriendListV2",
                "NotesWriterNaive",
                "NotesWriterHardened",
                "NotesMigrateNaive",
                "NotesMigrateHardened",
                "NotesMigrateCheck",
                "NoteStoreNaive",
                "NoteStoreHardened",
                "CorruptFuzzSQLite",
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
            dependencies: ["CorruptFuzzWorker"],
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
            dependencies: ["CorruptFuzzRunner", "CorruptFuzzCore", "FixtureTarget", "WorkerFixture"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CorruptFuzzSchemaTests",
            dependencies: ["CorruptFuzzSchema", "CorruptFuzzCore", "CorruptFuzzExamples"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CorruptFuzzPlistTests",
            dependencies: ["CorruptFuzzPlist", "CorruptFuzzCore", "CorruptFuzzExamples", "CorruptFuzzGenerators", "FriendListLoaders"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CorruptFuzzXMLTests",
            dependencies: ["CorruptFuzzXML", "CorruptFuzzCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CorruptFuzzTestingTests",
            dependencies: [
                "CorruptFuzzTesting", "CorruptFuzzWorker", "CorruptFuzzSchema", "CorruptFuzzCore", "HabitLoaders", "CorruptFuzzExamples", "FriendListLoaders",
                "NotesLoaders", "NotesMigration",
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
            dependencies: ["CorruptFuzzSQLite", "CorruptFuzzSQLiteTesting", "CorruptFuzzCore", "CorruptFuzzExamples", "SQLiteLoaders", "CorruptFuzzTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CorruptFuzzLibFuzzerTests",
            dependencies: ["CorruptFuzzLibFuzzer", "CorruptFuzzCore", "CorruptFuzzSchema", "CorruptFuzzExamples", "HabitLoaders"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CorruptFuzzCLITests",
            dependencies: ["corrupt-fuzz", "CorruptFuzzExamples", "CorruptFuzzCore"],
            swiftSettings: swiftSettings
        ),
    ]
)
