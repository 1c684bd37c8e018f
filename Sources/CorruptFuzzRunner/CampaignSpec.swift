import CorruptFuzzCore
import Foundation

/// Everything a campaign is made of, typed: what runs, what mutates, what judges, from which
/// seeds, under which limits. Every entry point (the command line, the bundled demo,
/// CorruptFuzzTesting) fills one in, and ``assemble()`` turns it into a ``Campaign``: there is
/// one way to put a campaign together.
public struct CampaignSpec: Sendable {
    /// What runs each input.
    public enum Target: Sendable {
        /// A command line, one process per input (`@@` is the input's path).
        case command(TargetCommand)
        /// A command line started once per slot as a persistent worker (CorruptFuzzWorker's
        /// protocol), restarted after a crash or hang; `@@` in it is dropped.
        case worker(TargetCommand)
        /// An executor the caller made (in-process closures, persistent workers).
        case executor(any Executor, command: String, takesPath: Bool)
    }

    /// Where the seeds come from.
    public enum Seeds: Sendable {
        /// The files of a corpus folder.
        case corpus(String)
        /// Seeds in memory; when empty, the format generates them.
        case given([Seed])
        /// The format generates this many (deterministically from the configuration's seed).
        case generated(count: Int)
    }

    public var target: Target
    /// The target's name in reports (default: the command's name).
    public var name: String?
    /// The format: its reference validator, and its mutator (structure-aware mutations,
    /// hostile catalogue and generator) if it has one.
    public var format: (any FuzzFormat)?
    /// The app's own validator (a `validateUserData`-style check or command). When given, it
    /// labels the inputs and the format's verdict is reported beside each finding; when nil,
    /// the format's validator labels them.
    public var validator: (any Validator)?
    public var seeds: Seeds
    /// The input files' extension (nil: the format's, else the one most seeds share).
    public var fileExtension: String?
    public var configuration: FuzzConfiguration
    /// Inputs that failed before, run first.
    public var regressions: [TestInput]

    public init(
        target: Target, name: String? = nil, format: (any FuzzFormat)? = nil, validator: (any Validator)? = nil,
        seeds: Seeds, fileExtension: String? = nil,
        configuration: FuzzConfiguration = FuzzConfiguration(), regressions: [TestInput] = []
    ) {
        self.target = target
        self.name = name
        self.format = format
        self.validator = validator
        self.seeds = seeds
        self.fileExtension = fileExtension
        self.configuration = configuration
        self.regressions = regressions
    }

    /// A campaign ready to run, with what the report needs to know about it.
    public struct Assembled: Sendable {
        public var campaign: Campaign
        /// The input files' extension, for reproducer files.
        public var fileExtension: String
        /// Problems that did not stop the campaign (unreadable corpus files…).
        public var warnings: [String]
    }

    /// How many seeds a format generates when there is no corpus.
    public static let generatedSeedCount = 8

    /// Loads or generates the seeds, makes the executor and the campaign.
    /// - Throws: ``CorruptFuzzError`` when the corpus is unusable, no seed can be had, or the
    ///   target cannot be set up.
    public func assemble() throws(CorruptFuzzError) -> Assembled {
        var warnings: [String] = []
        var seedFiles: [Seed]
        switch seeds {
        case .corpus(let folder):
            let loaded = try CorpusLoader.load(folder, maxLength: configuration.maxInputLength)
            seedFiles = loaded.seeds
            warnings += loaded.warnings
        case .given(let given):
            seedFiles = given
        case .generated:
            seedFiles = []
        }
        let mutator = format?.mutator
        if seedFiles.isEmpty {
            guard let mutator else {
                throw CorruptFuzzError(.unusableCorpus, "no seeds: give a corpus, or a format or schema that generates them")
            }
            var count = Self.generatedSeedCount
            if case .generated(let n) = seeds { count = max(1, n) }
            var rng = FuzzRNG(seed: configuration.seed)
            seedFiles = (0..<count).map { Seed(name: "generated-\($0)", bytes: mutator.generate(using: &rng)) }
        }
        let formatExtension = format.map(\.fileExtension).flatMap { $0.isEmpty ? nil : $0 }
        let fileExtension = self.fileExtension ?? formatExtension ?? Self.commonExtension(seedFiles)
        var coverage = configuration.coverage
        if coverage, case .executor = target {
            coverage = false  // the caller's executor reads coverage itself, or not
        } else if coverage {
            // Shared memory can be missing (a container without SysV IPC): then the campaign
            // runs without coverage, and says so, rather than not at all.
            do throws(CorruptFuzzError) {
                _ = try CoverageSegment()
            } catch {
                warnings.append("coverage guidance is off: \(error)")
                coverage = false
            }
        }
        let executor = try target.executor(
            limits: configuration.limits, slots: configuration.jobs, fileExtension: fileExtension, coverage: coverage)
        let command: String
        let takesPath: Bool
        let defaultName: String
        switch target {
        case .command(let targetCommand):
            command = targetCommand.line
            takesPath = targetCommand.takesPath
            defaultName = targetCommand.name
        case .worker(let targetCommand):
            command = targetCommand.line
            takesPath = true
            defaultName = targetCommand.name
        case .executor(_, let line, let path):
            command = line
            takesPath = path
            defaultName = line
        }
        let campaign = Campaign(
            executor: executor, judge: Judge(format: format, validator: validator, slots: executor.slots), targetName: name ?? defaultName,
            targetCommand: command, takesPath: takesPath, seeds: seedFiles, configuration: configuration, mutator: mutator,
            regressions: regressions)
        if case .worker(let targetCommand) = target {
            campaign.replayExecutor = try CampaignSpec.Target.command(targetCommand).executor(
                limits: configuration.limits, slots: configuration.jobs, fileExtension: fileExtension)
        }
        return Assembled(campaign: campaign, fileExtension: fileExtension, warnings: warnings)
    }

    /// The extension most seeds share, so inputs look like the real files.
    static func commonExtension(_ seeds: [Seed]) -> String {
        var counts: [String: Int] = [:]
        for seed in seeds { counts[(seed.name as NSString).pathExtension, default: 0] += 1 }
        return counts.max { a, b in a.value < b.value || (a.value == b.value && a.key > b.key) }?.key ?? ""
    }
}

extension CampaignSpec.Target {
    /// The target's executor: the one place one is made for a command or a worker (a campaign,
    /// a replay and the document checks all ask here).
    /// - Parameter coverage: Whether runs read the target's edge coverage (a campaign's do).
    public func executor(limits: ProcessExecutor.Limits, slots: Int, fileExtension: String, coverage: Bool = false) throws(CorruptFuzzError)
        -> any Executor
    {
        switch self {
        case .command(let command):
            return try ProcessExecutor(command: command, limits: limits, slots: slots, fileExtension: fileExtension, coverage: coverage)
        case .worker(let command):
            return try WorkerExecutor(
                path: command.executablePath, arguments: command.words.dropFirst().filter { $0 != "@@" }, environment: [:], limits: limits, slots: slots,
                coverage: coverage)
        case .executor(let given, _, _):
            return given
        }
    }
}
