import CorruptFuzzCore
import CorruptFuzzReporting
import CorruptFuzzRunner
import Foundation

/// The bundled demo that `corrupt-fuzz run` runs without arguments: example loaders shipped
/// with the package, a naive one with realistic bugs and a hardened one, on their seed files,
/// each run as a persistent worker (`--worker`), then the checks of versions, writers and crash
/// points; the checks a ``Session`` runs.
public enum BundledDemo {
    /// What judges an example's inputs and guides its mutations.
    enum Format {
        /// A Kaitai Struct schema, relative to the package.
        case schema(String)
        /// A bundled format.
        case builtin(String)
    }

    /// One example: a loader executable built with the package and its corpus folder.
    struct Example {
        var name: String
        var executable: String
        var corpus: String
        var format: Format
    }

    static var examples: [Example] {
        var examples = [
            Example(
                name: "habit-loader-naive", executable: "habit-loader-naive", corpus: "Corpus/habits", format: .schema("Corpus/schemas/habit-tracker.ksy")),
            Example(
                name: "habit-loader-hardened", executable: "habit-loader-hardened", corpus: "Corpus/habits",
                format: .schema("Corpus/schemas/habit-tracker.ksy")),
            Example(name: "friend-list-naive", executable: "friend-list-naive", corpus: "Corpus/friend-lists", format: .builtin("friend-list")),
            Example(name: "friend-list-hardened", executable: "friend-list-hardened", corpus: "Corpus/friend-lists", format: .builtin("friend-list")),
        ]
        #if XML
            examples += [
                Example(name: "notes-loader-naive", executable: "notes-loader-naive", corpus: "Corpus/notes", format: .builtin("notes")),
                Example(name: "notes-loader-hardened", executable: "notes-loader-hardened", corpus: "Corpus/notes", format: .builtin("notes")),
            ]
        #endif
        #if SQLite
            // SQLite databases in WAL mode: page-level corruption of the main file and the log.
            examples += [
                Example(name: "note-store-naive", executable: "note-store-naive", corpus: "Corpus/sqlite-wal", format: .builtin("sqlite-wal")),
                Example(name: "note-store-hardened", executable: "note-store-hardened", corpus: "Corpus/sqlite-wal", format: .builtin("sqlite-wal")),
            ]
        #endif
        return examples
    }

    /// How many campaigns the demo runs in this build (they share a `--duration` equally).
    public static var campaignCount: Int { examples.count }

    /// What this build of the demo cannot run, a line each (printed before it starts).
    public static var skipped: [String] {
        var lines: [String] = []
        #if !XML
            lines.append("skipping the notes loaders and writers: this corrupt-fuzz was built without the XML trait (libxml2)")
        #endif
        #if !SQLite
            lines.append("skipping the note-store loaders: this corrupt-fuzz was built without the SQLite trait")
        #endif
        #if !os(Linux)
            lines.append("skipping the crash points of the notes migration: they record file operations with LD_PRELOAD, which needs Linux")
        #endif
        return lines
    }

    /// Every program the demo runs (built with the package, beside this binary).
    static var programs: [String] {
        var names = examples.map(\.executable) + ["friend-list-v2"]
        #if XML
            names += ["notes-writer-naive", "notes-writer-hardened"]
        #endif
        #if os(Linux)
            names += ["notes-migrate-naive", "notes-migrate-hardened", "notes-migrate-check", "notes-save-naive", "notes-save-hardened"]
        #endif
        return names
    }

    /// Seconds each example gets when the user gave no limit, so the demo takes about a minute.
    static let secondsPerExample = 15.0

    /// The demo's checks: its campaigns (each `secondsPerExample`, or an equal part of the
    /// duration given), then its version, writer and crash-point checks.
    public static func checks(configuration: FuzzConfiguration, durationGiven: Bool) throws(CorruptFuzzError) -> [Session.Check] {
        try plans(configuration: configuration, durationGiven: durationGiven).map { .campaign($0) } + documentChecks(configuration: configuration)
    }

    static func plans(configuration: FuzzConfiguration, durationGiven: Bool) throws(CorruptFuzzError) -> [CampaignCheck] {
        var configuration = configuration
        if !durationGiven {
            configuration.maxSeconds = secondsPerExample
        } else if let total = configuration.maxSeconds {
            configuration.maxSeconds = total / Double(max(1, examples.count))
        }
        // Each campaign's time counts from its own start.
        configuration.startedAt = nil
        // Short deadlines keep hangs cheap; the naive loader's hangs run for minutes anyway.
        configuration.limits.timeoutMilliseconds = min(configuration.limits.timeoutMilliseconds, 500)
        configuration.minimizeMaxSeconds = 5
        configuration.minimizeTotalSeconds = 15
        let binDirectory = try programsFolder()
        let root = try packageRoot()
        return try examples.map { example throws(CorruptFuzzError) in
            let loader = binDirectory.appendingPathComponent(example.executable).path
            guard FileManager.default.isExecutableFile(atPath: loader) else {
                throw CorruptFuzzError(.unusableTarget, "the demo loader \(loader) is missing; build the package first (swift build)")
            }
            let format: ResolvedFormat?
            switch example.format {
            case .schema(let path):
                format = try FormatRegistry.bundled.resolve(format: nil, description: root.appendingPathComponent(path).path)
            case .builtin(let name):
                format = try FormatRegistry.bundled.resolve(format: name)
            }
            // Every demo loader is a persistent worker (CorruptFuzzWorker or corrupt_fuzz_worker.h).
            return try CampaignCheck.make(
                target: try TargetCommand("\(ShellWords.quote(loader)) @@"), worker: true, corpus: root.appendingPathComponent(example.corpus).path,
                format: format, appValidator: nil, configuration: configuration, name: example.name)
        }
    }

    /// The demo's checks of versions, writers and crash points, after the campaigns: version 1
    /// of the friend list (naive and hardened) against version 2's files and writer, the notes
    /// app's two writers through load, save, load again, and its two migrations cut short at
    /// every write.
    static func documentChecks(configuration: FuzzConfiguration) throws(CorruptFuzzError) -> [Session.Check] {
        let binDirectory = try programsFolder()
        let root = try packageRoot()
        func program(_ name: String) throws(CorruptFuzzError) -> String {
            let path = binDirectory.appendingPathComponent(name).path
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw CorruptFuzzError(.unusableTarget, "the demo program \(path) is missing; build the package first (swift build)")
            }
            return ShellWords.quote(path)
        }
        var options = DocumentCheckSettings(worker: true, seed: configuration.seed, replayWords: ["--worker"])
        options.limits.timeoutMilliseconds = min(configuration.limits.timeoutMilliseconds, 2000)
        if options.limits.timeoutMilliseconds != ProcessExecutor.Limits().timeoutMilliseconds {
            options.replayWords += ["--timeout", "\(options.limits.timeoutMilliseconds)ms"]
        }
        let newer = try program("friend-list-v2")
        let skew = try ["friend-list-naive", "friend-list-hardened"].map { older throws(CorruptFuzzError) in
            Session.Check.versionSkew(
                older: "\(try program(older)) @@", newer: "\(newer) @@", newerWriter: "\(newer) resave @@ @out",
                olderCorpus: [root.appendingPathComponent("Corpus/friend-lists").path], newerCorpus: [],
                newerFormat: try FormatRegistry.bundled.resolve(format: "friend-list-v2"), newerFormatWord: "friend-list-v2", generate: 20,
                options: options)
        }
        #if XML
            let roundTrips = try ["notes-writer-naive", "notes-writer-hardened"].map { writer throws(CorruptFuzzError) in
                Session.Check.roundTrip(
                    loader: "\(try program("notes-loader-hardened")) @@", writer: "\(try program(writer)) @@ @out",
                    corpus: [root.appendingPathComponent("Corpus/notes").path], format: try FormatRegistry.bundled.resolve(format: "notes"), appValidator: nil,
                    generate: 20, cycles: 2, options: options)
            }
        #else
            let roundTrips: [Session.Check] = []
        #endif
        // The notes migration cut short at every write and by power cuts (Linux: LD_PRELOAD).
        #if os(Linux)
            let crashPoints = try ["notes-migrate-naive", "notes-migrate-hardened"].map { migration throws(CorruptFuzzError) in
                Session.Check.crashPoints(
                    target: "\(try program(migration)) @@", data: root.appendingPathComponent("Corpus/migration/notes-app").path,
                    check: "\(try program("notes-migrate-check")) @@", format: nil, seed: configuration.seed,
                    limits: ProcessExecutor.Limits(timeoutMilliseconds: 5000), limitWords: ["--timeout", "5s"])
            }
            // A note saved while every operation fails in turn (a full disk, an I/O error, a
            // short write, EINTR), and cut short.
            let faults = try ["notes-save-naive", "notes-save-hardened"].map { save throws(CorruptFuzzError) in
                Session.Check.crashPoints(
                    target: "\(try program(save)) @@", data: root.appendingPathComponent("Corpus/saves/notes-app").path,
                    check: "\(try program("notes-migrate-check")) @@", format: nil, seed: configuration.seed, faults: IOFault.allCases,
                    limits: ProcessExecutor.Limits(timeoutMilliseconds: 5000), limitWords: ["--timeout", "5s"])
            }
        #else
            let crashPoints: [Session.Check] = []
            let faults: [Session.Check] = []
        #endif
        return skew + roundTrips + crashPoints + faults
    }

    /// The folder of the demo's programs: beside this binary, where SwiftPM builds them with the
    /// package. The corrupt-fuzz product does not depend on them (a user's CI that builds the
    /// CLI should not build sixteen demo programs), so the first demo of a checkout builds
    /// them, with the same configuration and build folder as this binary.
    static func programsFolder() throws(CorruptFuzzError) -> URL {
        let binDirectory = URL(fileURLWithPath: executablePath()).deletingLastPathComponent()
        func missing() -> [String] {
            programs.filter { !FileManager.default.isExecutableFile(atPath: binDirectory.appendingPathComponent($0).path) }
        }
        let absent = missing()
        guard !absent.isEmpty else { return binDirectory }
        let root = try packageRoot()
        guard FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path),
            let swift = RecorderLibrary.findInPath("swift", environment: ProcessInfo.processInfo.environment)
        else {
            throw CorruptFuzzError(
                .unusableTarget,
                "the demo's loaders (\(absent.joined(separator: ", "))) are not beside \(executablePath()); they are built from the corrupt-fuzz checkout: run the demo there with `swift run corrupt-fuzz run`"
            )
        }
        // SwiftPM lays products out as <scratch>/<triple>/<configuration>/ (with a
        // <scratch>/<configuration> link): build into the same folder this binary came from.
        let configuration = binDirectory.lastPathComponent == "release" ? "release" : "debug"
        var arguments = ["build", "--package-path", root.path, "-c", configuration]
        let scratch = binDirectory.deletingLastPathComponent().deletingLastPathComponent()
        if ["debug", "release"].contains(binDirectory.lastPathComponent),
            FileManager.default.fileExists(atPath: scratch.appendingPathComponent(configuration).path)
        {
            arguments += ["--scratch-path", scratch.path]
        }
        FileHandle.standardError.write(
            Data("building the demo's loaders once (swift \(arguments.joined(separator: " "))); this takes a few minutes\n".utf8))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: swift)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.standardError
        process.standardError = FileHandle.standardError
        do {
            try process.run()
        } catch {
            throw CorruptFuzzError(.unusableTarget, "cannot start \(swift) to build the demo's loaders: \(error)")
        }
        process.waitUntilExit()
        let still = missing()
        guard process.terminationStatus == 0, still.isEmpty else {
            throw CorruptFuzzError(
                .unusableTarget,
                "building the demo's loaders failed (swift \(arguments.joined(separator: " ")) exited \(process.terminationStatus)\(still.isEmpty ? "" : "; still missing: \(still.joined(separator: ", "))"))"
            )
        }
        return binDirectory
    }

    /// The package checkout: the current folder when it holds the demo corpus, else the
    /// checkout this binary was built from.
    static func packageRoot() throws(CorruptFuzzError) -> URL {
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
        ExecutablePath.current
    }
}
