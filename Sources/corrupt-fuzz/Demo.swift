import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation

/// The bundled demo that `corrupt-fuzz run` runs without arguments: example loaders shipped
/// with the package, a naive one with realistic bugs and a hardened one, on their seed files.
enum Demo {
    /// One example: a loader executable built with the package and its corpus folder.
    struct Example {
        var name: String
        var executable: String
        var corpus: String
        /// What labels inputs and guides mutations: `--schema FILE` (relative to the package)
        /// or `--format NAME`.
        var validatorArguments: [String]
    }

    static let examples: [Example] = [
        Example(name: "habit-loader-naive", executable: "habit-loader-naive", corpus: "Corpus/habits", validatorArguments: ["--schema", "Corpus/schemas/habit-tracker.ksy"]),
        Example(name: "habit-loader-hardened", executable: "habit-loader-hardened", corpus: "Corpus/habits", validatorArguments: ["--schema", "Corpus/schemas/habit-tracker.ksy"]),
        Example(name: "friend-list-naive", executable: "friend-list-naive", corpus: "Corpus/friend-lists", validatorArguments: ["--format", "friend-list"]),
        Example(name: "friend-list-hardened", executable: "friend-list-hardened", corpus: "Corpus/friend-lists", validatorArguments: ["--format", "friend-list"]),
        Example(name: "notes-loader-naive", executable: "notes-loader-naive", corpus: "Corpus/notes", validatorArguments: ["--format", "notes"]),
        Example(name: "notes-loader-hardened", executable: "notes-loader-hardened", corpus: "Corpus/notes", validatorArguments: ["--format", "notes"]),
    ]

    /// Seconds each example gets when the user gave no limit, so the demo takes about a minute.
    static let secondsPerExample = 15.0

    static func plans(configuration: FuzzConfiguration, durationGiven: Bool) throws -> [CampaignPlan] {
        var configuration = configuration
        if !durationGiven { configuration.maxSeconds = secondsPerExample }
        // Short deadlines keep hangs cheap; the naive loader's hangs run for minutes anyway.
        configuration.limits.timeoutMilliseconds = min(configuration.limits.timeoutMilliseconds, 500)
        configuration.minimizeMaxSeconds = 5
        configuration.minimizeTotalSeconds = 15
        let binDirectory = URL(fileURLWithPath: executablePath()).deletingLastPathComponent()
        let root = try packageRoot()
        return try examples.map { example in
            let loader = binDirectory.appendingPathComponent(example.executable).path
            guard FileManager.default.isExecutableFile(atPath: loader) else {
                throw CorruptFuzzError(.unusableTarget, "the demo loader \(loader) is missing; build the package first (swift build)")
            }
            let arguments = example.validatorArguments.first == "--schema"
                ? ["--schema", root.appendingPathComponent(example.validatorArguments[1]).path] : example.validatorArguments
            let options = try TargetOptions.parse(arguments)
            return try CampaignPlan.make(
                target: "\(ShellWords.quote(loader)) @@", corpus: root.appendingPathComponent(example.corpus).path,
                options: options, configuration: configuration, name: example.name)
        }
    }

    /// The package checkout: the current folder when it holds the demo corpus, else the
    /// checkout this binary was built from.
    static func packageRoot() throws -> URL {
        let candidates = [
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent(),
        ]
        for candidate in candidates where FileManager.default.fileExists(atPath: candidate.appendingPathComponent("Corpus/habits").path) {
            return candidate
        }
        throw CorruptFuzzError(.unusableCorpus, "the demo corpus (Corpus/habits) was not found; run the demo from the package folder")
    }

    static func executablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}
