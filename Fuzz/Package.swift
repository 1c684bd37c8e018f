// swift-tools-version:6.0
// The libFuzzer harnesses of the bundled loaders: a package of its own, as swift-protobuf's
// FuzzTesting is, because they only build with the fuzzer runtime:
//   swift build -c release -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library
// (ClusterFuzzLite's and OSS-Fuzz's build.sh pass $SWIFTFLAGS, see .clusterfuzzlite/build.sh).
// `swift build` of the main package never builds them.
import Foundation
import PackageDescription

// A path dependency is named by its folder: the checkout's name, whatever it is.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "corrupt-fuzz-fuzzers",
    platforms: [.macOS(.v14)],
    dependencies: [.package(path: "..")],
    targets: [
        .target(
            name: "HabitFuzzSupport",
            dependencies: [
                .product(name: "CorruptFuzzLibFuzzer", package: root), .product(name: "CorruptFuzzSchema", package: root),
            ]
        ),
        .executableTarget(
            name: "HabitLoaderNaiveFuzzer",
            dependencies: [
                "HabitFuzzSupport", .product(name: "CorruptFuzzLibFuzzer", package: root), .product(name: "HabitLoaders", package: root),
            ]
        ),
        .executableTarget(
            name: "HabitLoaderHardenedFuzzer",
            dependencies: [
                "HabitFuzzSupport", .product(name: "CorruptFuzzLibFuzzer", package: root), .product(name: "HabitLoaders", package: root),
            ]
        ),
        .executableTarget(
            name: "NotesLoaderNaiveFuzzer",
            dependencies: [
                .product(name: "CorruptFuzzLibFuzzer", package: root), .product(name: "CorruptFuzzExamples", package: root),
                .product(name: "NotesLoaders", package: root),
            ]
        ),
    ]
)
