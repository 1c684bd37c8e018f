import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation

/// How `skew` and `roundtrip` run loaders and writers.
public struct DocumentCheckSettings: Sendable {
    public var worker = false
    public var limits = ProcessExecutor.Limits()
    /// The seed of generated documents.
    public var seed: UInt64 = 0
    /// The options that select the same settings again in a replay command.
    public var replayWords: [String] = []

    public init(worker: Bool = false, limits: ProcessExecutor.Limits = .init(), seed: UInt64 = 0, replayWords: [String] = []) {
        self.worker = worker
        self.limits = limits
        self.seed = seed
        self.replayWords = replayWords
    }

    /// A loader: a command run once per file, or a worker.
    public func loader(_ line: String, name: String? = nil, fileExtension: String) throws(CorruptFuzzError) -> DocumentLoader {
        let command = try TargetCommand(line)
        let target: CampaignSpec.Target = worker ? .worker(command) : .command(command)
        let executor = try target.executor(limits: limits, slots: 1, fileExtension: fileExtension)
        return DocumentLoader(name: name ?? command.name, command: line, executor: executor)
    }
}

/// The documents at a path: the file, or the files of a folder.
public enum DocumentFiles {
    /// The documents at each path, in order.
    public static func load(_ paths: [String]) throws(CorruptFuzzError) -> [Seed] {
        var seeds: [Seed] = []
        for path in paths { seeds += try load(path) }
        return seeds
    }

    public static func load(_ path: String) throws(CorruptFuzzError) -> [Seed] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CorruptFuzzError(.unusableCorpus, "\(path) does not exist")
        }
        if isDirectory.boolValue { return try CorpusLoader.load(path).seeds }
        guard let data = FileManager.default.contents(atPath: path) else { throw CorruptFuzzError(.unusableCorpus, "cannot read \(path)") }
        return [Seed(name: (path as NSString).lastPathComponent, bytes: [UInt8](data))]
    }

    /// `count` documents the format generates from `seed`, named after `name`.
    public static func generate(_ format: ResolvedFormat, named name: String, count: Int, seed: UInt64) throws(CorruptFuzzError) -> [Seed] {
        guard let mutator = format.format.mutator else {
            throw CorruptFuzzError(.invalidArgument, "the format \(name) has no generator")
        }
        var rng = FuzzRNG(seed: seed)
        return (0..<count).map { Seed(name: "\(name)-generated-\($0)", bytes: mutator.generate(using: &rng)) }
    }
}

extension Session.Check {
    /// Version skew (``VersionSkewCheck``) between two loader commands, as `corrupt-fuzz skew`
    /// runs it: two suites (the newer version reading older files, the older reading newer ones),
    /// each finding replayed by `skew` with the one file in its role.
    /// - Parameter newerFormatWord: The `--newer-format` value that selects `newerFormat` again.
    public static func versionSkew(
        older: String, newer: String, names: (older: String?, newer: String?) = (nil, nil), newerWriter: String?, olderCorpus: [String], newerCorpus: [String],
        newerFormat: ResolvedFormat?, newerFormatWord formatName: String?, generate: Int, options: DocumentCheckSettings
    ) -> Session.Check {
        .suites(name: "version skew: \(older) and \(newer)") { () throws(CorruptFuzzError) in
            let fileExtension = newerFormat?.format.fileExtension ?? ""
            var newerFiles = try DocumentFiles.load(newerCorpus)
            if let newerFormat, let formatName, generate > 0 {
                newerFiles += try DocumentFiles.generate(
                    newerFormat, named: (formatName as NSString).lastPathComponent, count: generate, seed: options.seed)
            }
            var writer: CommandWriter?
            if let newerWriter { writer = try CommandWriter(newerWriter, limits: options.limits, fileExtension: fileExtension) }
            let check = VersionSkewCheck(
                older: try options.loader(older, name: names.older, fileExtension: fileExtension),
                newer: try options.loader(newer, name: names.newer, fileExtension: fileExtension),
                newerWriter: writer,
                validator: newerFormat?.format.validator,
                olderFiles: try DocumentFiles.load(olderCorpus),
                newerFiles: newerFiles, fileExtension: fileExtension)
            let result = try check.run()
            // A replay checks the one file in the same role, with the same loaders and writer.
            var words = [ExecutablePath.current, "skew", "--older", older, "--newer", newer]
            if let name = names.older { words += ["--older-name", name] }
            if let name = names.newer { words += ["--newer-name", name] }
            if let newerWriter { words += ["--newer-writer", newerWriter] }
            if let formatName { words += ["--newer-format", formatName] }
            words += options.replayWords
            var downgrade = result.downgrade
            if !result.unreadableNewerFiles.isEmpty {
                downgrade.undecided["the newer loader itself rejects it, so it is no newer file"] = result.unreadableNewerFiles.count
            }
            return [
                RunReport.Suite(result: result.upgrade, replay: ReplayDescription(command: words + ["--older-corpus"], fileExtension: fileExtension)),
                RunReport.Suite(result: downgrade, replay: ReplayDescription(command: words + ["--newer-corpus"], fileExtension: fileExtension)),
            ]
        }
    }

    /// The app's writer through load, save, load (``RoundTripCheck``), as `corrupt-fuzz
    /// roundtrip` runs it.
    public static func roundTrip(
        loader: String, writer: String, corpus: [String], format: ResolvedFormat?, appValidator: String?, generate: Int, cycles: Int,
        options: DocumentCheckSettings
    ) -> Session.Check {
        .suites(name: "round trip: \(writer)") { () throws(CorruptFuzzError) in
            let fileExtension = format?.format.fileExtension ?? ""
            var documents = try DocumentFiles.load(corpus)
            if let format, generate > 0 {
                documents += try DocumentFiles.generate(
                    format, named: format.replayArguments.last?.last.map { ($0 as NSString).lastPathComponent } ?? "document", count: generate,
                    seed: options.seed)
            }
            var validator: (any Validator)? = format?.format.validator
            if let appValidator {
                validator = try ExternalValidator(
                    command: try TargetCommand(appValidator), limits: options.limits, slots: 1, fileExtension: fileExtension)
            }
            let check = RoundTripCheck(
                loader: try options.loader(loader, fileExtension: fileExtension),
                writer: try CommandWriter(writer, limits: options.limits, fileExtension: fileExtension), validator: validator,
                documents: documents, cycles: cycles, fileExtension: fileExtension)
            var words = [ExecutablePath.current, "roundtrip", "--loader", loader, "--writer", writer]
            words += format?.replayArguments.flatMap { $0 } ?? []
            if let appValidator { words += ["--validator", appValidator] }
            if cycles != 2 { words += ["--cycles", "\(cycles)"] }
            words += options.replayWords + ["--corpus"]
            return [RunReport.Suite(result: try check.run(), replay: ReplayDescription(command: words, fileExtension: fileExtension))]
        }
    }

    /// A save or migration cut short at every file operation (``CrashPointCheck``), as
    /// `corrupt-fuzz crashpoints` runs it (Linux: the recorder is preloaded).
    public static func crashPoints(
        target: String, data: String, check: String?, format: ResolvedFormat?, maxStates: Int = 300, at: Int? = nil, seed: UInt64 = 0,
        faults: [IOFault] = [], faultAt: Int? = nil, limits: ProcessExecutor.Limits = .init(), limitWords: [String] = []
    ) -> Session.Check {
        .suites(name: "crash points: \(target)") { () throws(CorruptFuzzError) in
            #if os(Linux)
                let recorder = try RecorderLibrary.path()
                var crashPoints = CrashPointCheck(
                    target: try TargetCommand(target), check: try check.map { line throws(CorruptFuzzError) in .command(try TargetCommand(line)) },
                    validator: format?.format.validator, fileExtension: format?.format.fileExtension ?? "",
                    data: URL(fileURLWithPath: data), recorder: recorder, limits: limits, maxStates: maxStates, seed: seed, only: at)
                crashPoints.faults = faults
                crashPoints.onlyFault = faultAt
                let outcome = try crashPoints.run()
                var result = outcome.result
                result.stopReason = .crashStates(checked: outcome.statesChecked, operations: outcome.operations.filter(\.isCrashPoint).count)
                var words = [ExecutablePath.current, "crashpoints", "--target", target, "--data", data]
                if let check { words += ["--check", check] }
                words += (format?.replayArguments.flatMap { $0 } ?? []) + limitWords
                if seed != 0 { words += ["--seed", "\(seed)"] }
                return [RunReport.Suite(result: result, replay: ReplayDescription(command: words, fileExtension: ""))]
            #else
                throw CorruptFuzzError(.unusableTarget, "crash points need LD_PRELOAD, which only Linux has here")
            #endif
        }
    }
}
