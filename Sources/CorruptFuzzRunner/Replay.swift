import CorruptFuzzCore
import Foundation

/// Runs saved inputs once each, through the executor and the judge a campaign with the same
/// target, format and validator builds (its outside traps included), and says whether each is
/// still a finding: what `corrupt-fuzz replay` prints.
public struct Replay: Sendable {
    /// One file, replayed.
    public struct Entry: Sendable {
        /// The path as given.
        public var path: String
        public var judgement: Judge.Judgement
    }

    public let executor: any Executor
    public let judge: Judge

    /// A replay of `files` against `target`, labelled as a campaign labels: the app's validator
    /// when given, else the format's. The judge sets outside traps when the format's catalogue
    /// uses them or a file names the traps of the run that saved it.
    /// - Parameter coverage: Whether each run reads the target's edge coverage (a corpus
    ///   minimization keeps files by it).
    public init(
        target: TargetCommand, format: (any FuzzFormat)?, validator: TargetCommand?, limits: ProcessExecutor.Limits, files: [String],
        coverage: Bool = false
    ) throws(CorruptFuzzError) {
        let fileExtension = format.map(\.fileExtension).flatMap { $0.isEmpty ? nil : $0 } ?? (files.first.map { ($0 as NSString).pathExtension } ?? "")
        executor = try CampaignSpec.Target.command(target).executor(limits: limits, slots: 1, fileExtension: fileExtension, coverage: coverage)
        let appValidator: (any Validator)? = try validator.map { command throws(CorruptFuzzError) in
            try ExternalValidator(command: command, limits: limits, slots: 1, fileExtension: fileExtension)
        }
        let namesTraps = files.contains { path in (FileManager.default.contents(atPath: path)).map { OutsideTrapsHost.mentionsTraps([UInt8]($0)) } ?? false }
        judge = Judge(
            validator: appValidator ?? format?.validator, reference: appValidator == nil ? nil : format?.validator,
            outsideTraps: namesTraps || format?.mutator?.usesOutsideTraps == true)
    }

    /// Replays the file at `path`.
    /// - Throws: ``CorruptFuzzError`` when the file does not exist or cannot be read (a typo in
    ///   a CI step's path must fail it, not pass it as a loader that rejects a missing file;
    ///   ``replayMissingFile()`` replays that input on purpose), or the target cannot be run.
    public func replay(_ path: String) throws(CorruptFuzzError) -> Entry {
        guard FileManager.default.fileExists(atPath: path) else { throw CorruptFuzzError(.unusableCorpus, "\(path) does not exist") }
        guard let data = FileManager.default.contents(atPath: path) else { throw CorruptFuzzError(.unusableCorpus, "cannot read \(path)") }
        return try replay(judge.rebind([UInt8](data)), path: path)
    }

    /// Replays a missing file: the input every loader that reads a path must reject as
    /// `not-found` (the target is given a path that does not exist).
    public func replayMissingFile() throws(CorruptFuzzError) -> Entry {
        try replay(nil, path: Self.missingFileName)
    }

    /// What ``replayMissingFile()``'s entry is called.
    public static let missingFileName = "(a missing file)"

    private func replay(_ bytes: [UInt8]?, path: String) throws(CorruptFuzzError) -> Entry {
        let input = TestInput(bytes: bytes, mutations: ["replay"], seedName: path)
        // Each file's suspected hang is confirmed (not only the first), at the confirmation's
        // deadline: half what a campaign's hang was shown to take (a minimized hang and a
        // worker's finding in a fresh process hang twice that long). Confirmed at the same
        // deadline as the campaign's check, an input near it (an entity loop that runs out of
        // memory after about that much CPU time) was a hang in the check and finished in the
        // replay; now it would have to run twice as fast here to.
        return Entry(path: path, judgement: try judge.run(input, on: executor, confirming: .every))
    }
}
