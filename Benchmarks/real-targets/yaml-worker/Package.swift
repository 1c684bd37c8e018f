// swift-tools-version:6.2
import PackageDescription

// A YAML loader of the offline package mirror (Yams, libyaml underneath) as a corrupt-fuzz
// worker, for Benchmarks/real-targets/run.py. A package of its own: corrupt-fuzz itself does
// not depend on it.
let package = Package(
    name: "yaml-worker",
    dependencies: [
        .package(name: "corrupt-fuzz", path: "../../.."),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
    ],
    targets: [
        .executableTarget(
            name: "yaml-worker",
            dependencies: [.product(name: "CorruptFuzzWorker", package: "corrupt-fuzz"), .product(name: "Yams", package: "Yams")]
        )
    ]
)
