import CCorruptFuzzSpawn
import CorruptFuzzCore
import Foundation

/// One distinct finding of a campaign, with how often and when it was hit.
public struct FindingRecord: Sendable, Codable {
    /// The first hit.
    public var finding: Finding
    /// How many executions hit it.
    public var hits: Int
    /// The execution number (1-based) of the first hit.
    public var firstExecution: Int
    /// Seconds from the campaign's start to the first hit.
    public var firstSeconds: Double
    /// The minimized input, when minimization ran and the input is a file.
    @Base64Coded public var minimized: [UInt8]?
    /// The minimized input's execution (what the replay shows).
    public var minimizedExecution: Execution?
    /// Executions spent minimizing.
    public var minimizationTests = 0
    /// How minimization ended; nil when it did not run.
    public var minimizationEnd: MinimizationEnd?
    /// The distinct ways the finding showed itself, first one first (the finding's own detail,
    /// its input being the finding's): one bug broken at many paths, or with many values, is one
    /// finding whose paths are counted here. Nil for a finding that showed only one.
    public var variants: [FindingVariant]?
    /// Hits whose detail was new after ``FindingVariant/maxCounted`` variants.
    public var uncountedVariantHits: Int?
    /// Found in a persistent worker, and not shown the same way by a fresh process (what the
    /// printed replay runs); nil when it was (or the campaign ran one process per input).
    public var freshProcess: FreshProcessCheck?

    public init(
        finding: Finding, hits: Int, firstExecution: Int, firstSeconds: Double, minimized: [UInt8]? = nil,
        minimizedExecution: Execution? = nil, minimizationTests: Int = 0
    ) {
        self.finding = finding
        self.hits = hits
        self.firstExecution = firstExecution
        self.firstSeconds = firstSeconds
        self.minimized = minimized
        self.minimizedExecution = minimizedExecution
        self.minimizationTests = minimizationTests
    }
}

/// What a fresh process did with a finding a persistent worker showed, when it differed.
public enum FreshProcessCheck: Sendable, Hashable, Codable {
    /// The minimized input showed the finding only in the worker; the original, run in a fresh
    /// process, shows it, and is the reproducer.
    case originalOnly
    /// Neither the minimized input nor the original showed it in a fresh process: the finding
    /// depends on what the worker ran before. What the minimized input did there instead: its
    /// finding (`kind: signature`), if any, and its outcome.
    case notReproduced(finding: String?, outcome: String)
    /// A memory fault (SIGSEGV, SIGBUS) whose site differs from one fresh process to the next
    /// (the heap's layout decides where corrupted memory is touched): the reproducer crashes
    /// every time, its signature is one of `sites`.
    case siteVaries(sites: [String])
    /// Not run in a fresh process: the check could take `neededSeconds` (a hang's takes its
    /// deadline and twice its confirmation's) and the campaign had `leftSeconds` left of its
    /// duration, or was stopped. The replay is the check.
    case notChecked(neededSeconds: Double, leftSeconds: Double)
    /// Run in a fresh process, which the machine starved of CPU before it showed anything
    /// (still running at the hang confirmation's wall-clock cap with less than half its CPU
    /// time): nobody can tell from it whether the finding reproduces, so it is neither
    /// confirmed nor refuted. The replay is the check.
    case undecided(reason: String)

    /// `original only`, `not reproduced`, `site varies`, `not checked` or `undecided`.
    public var label: String {
        switch self {
        case .originalOnly: "original only"
        case .notReproduced: "not reproduced"
        case .siteVaries: "site varies"
        case .notChecked: "not checked"
        case .undecided: "undecided"
        }
    }

    /// What the replay shows instead, when the finding did not reproduce: `KIND: SIGNATURE`, or
    /// `none`.
    public var replayedFinding: String? {
        guard case .notReproduced(let finding, _) = self else { return nil }
        return finding ?? "none"
    }
}

extension FreshProcessCheck: CustomStringConvertible {
    private static func seconds(_ value: Double) -> String { String(format: "%.1f s", value) }

    /// The report's line: what a fresh process did, and what it means for the replay.
    public var description: String {
        switch self {
        case .originalOnly:
            "the minimized input shows this only in the persistent worker; the original, run in a fresh process as the replay runs it, shows it and is the reproducer"
        case .notReproduced(let finding, let outcome):
            "NOT REPRODUCED: run in a fresh process as the replay runs it, the reproducer gave \(finding.map { "another finding, \($0)" } ?? "no finding") (\(outcome)), and the original did not show it either: this finding depends on what the persistent worker ran before it (its heap, a cache, a global)"
        case .siteVaries(let sites):
            "the reproducer crashes in every fresh process, but where varies from run to run (memory corruption: the heap's layout decides where it is touched); a replay may show any of: \(sites.joined(separator: "; "))"
        case .notChecked(let needed, let left):
            "NOT CHECKED in a fresh process: the check can take \(Self.seconds(needed)) and the campaign had \(Self.seconds(left)) left (its --duration, or it was stopped); the printed replay runs the reproducer as the check would"
        case .undecided(let reason):
            "UNDECIDED in a fresh process: the machine was too busy to tell (\(reason)); the finding stands as the worker showed it, and the printed replay runs the reproducer as the check would"
        }
    }
}

/// An input that missed the deadline once and finished when run again with a longer one.
public struct SlowInput: Sendable, Codable, Hashable {
    public var bytes: [UInt8]
    /// How it was made (``TestInput/origin``).
    public var origin: String
    /// What the second run did (``Outcome/summary``).
    public var outcome: String

    public init(bytes: [UInt8], origin: String, outcome: String) {
        self.bytes = bytes
        self.origin = origin
        self.outcome = outcome
    }

    /// Adds `input` to `kept` unless it holds it or ``CampaignResult/maxSlowInputsKept``.
    static func keep(_ input: SlowInput, in kept: inout [SlowInput]?) {
        var list = kept ?? []
        guard list.count < CampaignResult.maxSlowInputsKept, !list.contains(where: { $0.bytes == input.bytes }) else { return }
        list.append(input)
        kept = list
    }
}

/// How a finding's minimization ended.
public enum MinimizationEnd: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// No single byte, or chunk, could be removed and keep the finding (kind and signature).
    case oneMinimal = "1-minimal"
    /// The budget of executions (`minimizeMaxTests`) ran out first.
    case outOfTests = "out of executions"
    /// The time for it ran out first (its own, the campaign's, or a stop).
    case outOfTime = "out of time"

    public var description: String { rawValue }
}

/// One distinct way a finding showed itself: its detail (the validator's message with the path
/// where the rule broke, a crash's message), how often, and the first input that showed it.
public struct FindingVariant: Sendable, Codable {
    /// The detail, as the first input of this variant gave it.
    public var detail: String
    public var hits: Int
    /// The first input of this variant; nil for the finding's own (its input is the finding's),
    /// a missing file, an input over ``maxInputBytes``, or a variant after ``maxKept``.
    @Base64Coded public var input: [UInt8]?

    /// How many variants a finding counts; later new details only add to its uncounted hits.
    public static let maxCounted = 100
    /// How many variants keep their input (the report saves each beside the reproducer).
    public static let maxKept = 10
    /// The largest input a variant keeps.
    public static let maxInputBytes = 1 << 20

    public init(detail: String, hits: Int, input: [UInt8]? = nil) {
        self.detail = detail
        self.hits = hits
        self.input = input
    }

    /// What makes two details one variant: the detail with its numbers as `#` (the path
    /// `habits[2].name` and `habits[7].name` are one), what it quotes kept (`Element 'title'` and
    /// `Element 'body'` are two), hashed.
    public static func key(of detail: String) -> UInt64 {
        var hash = WordHash()
        var text = detail
        text.withUTF8 { buffer in
            let prefix = UnsafeBufferPointer(rebasing: buffer.prefix(1024))
            var word: UInt64 = 0
            var shift: UInt64 = 0
            Normalize.normalizedBytes(of: prefix) { byte in
                word |= UInt64(byte) << shift
                shift += 8
                if shift == 64 {
                    hash.add(word)
                    word = 0
                    shift = 0
                }
            }
            hash.add(word)
        }
        return hash.value
    }
}

extension FindingRecord {
    /// Counts one more hit of this finding with `finding`'s detail, given the variants' keys
    /// seen so far (the first is the record's own finding).
    public mutating func count(_ finding: Finding, keys: inout [UInt64: Int]) {
        hits += 1
        if keys.isEmpty { keys[FindingVariant.key(of: self.finding.detail)] = 0 }
        let key = FindingVariant.key(of: finding.detail)
        if let index = keys[key] {
            if variants != nil { variants![index].hits += 1 }
            return
        }
        if variants == nil { variants = [FindingVariant(detail: self.finding.detail, hits: hits - 1)] }
        guard variants!.count < FindingVariant.maxCounted else {
            uncountedVariantHits = (uncountedVariantHits ?? 0) + 1
            return
        }
        keys[key] = variants!.count
        let keep = variants!.count < FindingVariant.maxKept && (finding.input.bytes?.count ?? .max) <= FindingVariant.maxInputBytes
        variants!.append(FindingVariant(detail: String(finding.detail.prefix(1000)), hits: 1, input: keep ? finding.input.bytes : nil))
    }

    /// The variants as a list, the record's own first (with its input).
    private var allVariants: [FindingVariant] {
        var list = variants ?? [FindingVariant(detail: finding.detail, hits: hits)]
        list[0].input = finding.input.bytes.flatMap { $0.count <= FindingVariant.maxInputBytes ? $0 : nil }
        return list
    }

    /// Adds the hits and variants of `other`, the same finding first hit later (by another job
    /// of the campaign, in another shard).
    public mutating func absorb(_ other: FindingRecord) {
        mergeVariants(of: other)
        hits += other.hits
    }

    /// Adds `other`'s variants (the same finding, from another shard or night) to these.
    public mutating func mergeVariants(of other: FindingRecord) {
        var merged = allVariants
        merged[0].input = nil
        var keys: [UInt64: Int] = [:]
        for (index, variant) in merged.enumerated() { keys[FindingVariant.key(of: variant.detail)] = index }
        var uncounted = (uncountedVariantHits ?? 0) + (other.uncountedVariantHits ?? 0)
        for variant in other.allVariants {
            if let index = keys[FindingVariant.key(of: variant.detail)] {
                merged[index].hits += variant.hits
            } else if merged.count < FindingVariant.maxCounted {
                keys[FindingVariant.key(of: variant.detail)] = merged.count
                var added = variant
                if merged.count >= FindingVariant.maxKept { added.input = nil }
                merged.append(added)
            } else {
                uncounted += variant.hits
            }
        }
        variants = merged.count > 1 ? merged : nil
        uncountedVariantHits = uncounted > 0 ? uncounted : nil
    }
}

/// Why a run stopped, with what each mode knows about its end.
public enum StopReason: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The campaign ran its `--runs`.
    case runs
    /// The campaign's time was up.
    case duration
    /// Ctrl-C, SIGTERM or the caller's stop.
    case interrupted
    /// A failure of corrupt-fuzz itself (``CampaignResult/toolError`` says which).
    case error
    /// Every given input was checked (version skew, round trip).
    case completed
    /// Findings read from libFuzzer's saved inputs (`import`).
    case imported
    /// Crash points: how many crash states of how many operations were checked.
    case crashStates(checked: Int, operations: Int)

    /// `runs`, `duration`, …, `12 crash states of 7 operations`: the report's words.
    public var description: String {
        switch self {
        case .runs: "runs"
        case .duration: "duration"
        case .interrupted: "interrupted"
        case .error: "error"
        case .completed: "completed"
        case .imported: "imported"
        case .crashStates(let checked, let operations): "\(checked) crash states of \(operations) operations"
        }
    }

    /// Reads the report's words back (a report.json of any version: an unknown text is
    /// `completed`).
    public init(_ text: String) {
        switch text {
        case "runs": self = .runs
        case "duration": self = .duration
        case "interrupted": self = .interrupted
        case "error": self = .error
        case "imported": self = .imported
        default:
            let words = text.split(separator: " ")
            if words.count == 6, let checked = Int(words[0]), let operations = Int(words[4]), text.hasSuffix(" operations") {
                self = .crashStates(checked: checked, operations: operations)
            } else {
                self = .completed
            }
        }
    }

    public init(from decoder: any Decoder) throws { self.init(try decoder.singleValueContainer().decode(String.self)) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Whether the run ended before it was done (the merged report of shards says so if one did).
    public var endedEarly: Bool { self == .interrupted || self == .error }
}

/// What a campaign did and found.
public struct CampaignResult: Sendable, Codable {
    public var targetName: String
    /// The target's command line, `@@` included, for replay commands.
    public var targetCommand: String
    /// The validator's name, when one ran.
    public var validatorName: String?
    public var configuration: FuzzConfiguration
    public var seedNames: [String]
    public var executions = 0
    /// Seconds spent running inputs (minimization excluded).
    public var fuzzSeconds = 0.0
    /// Seconds in all, minimization included.
    public var totalSeconds = 0.0
    public var findings: [FindingRecord] = []
    /// Why the run stopped.
    public var stopReason = StopReason.runs
    /// A failure of corrupt-fuzz itself that ended the campaign early (the target could no
    /// longer be started, an input file could not be written): what was found before it is
    /// kept, and the report shows the error.
    public var toolError: String?
    /// Whether the target ever printed a `reason:` line (if not, wrong reasons cannot be seen).
    public var targetGivesReasons = false
    /// The canary and listener the campaign set, if its format has external references.
    public var outsideTraps: OutsideTraps?
    /// A hash of every input run, in order: equal for equal seeds and corpora (with outside
    /// traps, of their seeds, mutation names and lengths: the trap URLs differ per run).
    public var inputSequenceHash: UInt64 = FNV1a.offset
    /// Processes the target left running outside its process group (a daemon, `setsid cmd &`)
    /// that the campaign killed; counted only where corrupt-fuzz could become their subreaper.
    public var escapedProcessesKilled = 0
    /// Inputs the validator could not decide (beyond what it reads safely, a resource it
    /// could not use), by reason with numbers as `#`: they got no label, so only crashes, hangs
    /// and memory were checked on them. At most ``maxUndecidedReasons`` reasons are kept.
    public var undecided: [String: Int] = [:]
    public static let maxUndecidedReasons = 20
    /// Inputs that missed the deadline once and finished when run again with a longer one
    /// (``Judge``): slow, not hangs.
    public var slowInputs = 0
    /// The first ``maxSlowInputsKept`` of them (distinct), kept for inspection as AFL++ keeps
    /// its hangs: the report saves them under `slow/<target>/`. An input near the deadline on
    /// this machine may be a hang on a slower one.
    public var slowInputsKept: [SlowInput]?
    public static let maxSlowInputsKept = 20
    /// Findings a persistent worker's process showed only after it had lived through a crash (a
    /// trap, an abort, a memory fault: `CORRUPT_FUZZ_RECOVER_CRASHES`) and a fresh process did
    /// not show: what the crash left (a
    /// lock held, a global half set), not the loader's bug; left out of ``findings``.
    public var findingsOnlyAfterTrap = 0
    /// With a persistent worker: how often an input run again gave the same outcome.
    public var stability: Stability?
    /// What the target's instrumentation showed, when it has any (nil: none was seen, or
    /// coverage was off).
    public var coverage: CoverageSummary?
    /// The checks this run made, when it is not a fuzz campaign (a version-skew or round-trip
    /// check); nil for a campaign's own ``FindingKind/campaignChecks``.
    public var checks: [FindingKind]?

    /// The checks this run made, one JUnit test case each.
    public var checkedKinds: [FindingKind] { checks ?? FindingKind.campaignChecks }

    public var executionsPerSecond: Double { fuzzSeconds > 0 ? Double(executions) / fuzzSeconds : 0 }

    public init(targetName: String, targetCommand: String, validatorName: String?, configuration: FuzzConfiguration, seedNames: [String]) {
        self.targetName = targetName
        self.targetCommand = targetCommand
        self.validatorName = validatorName
        self.configuration = configuration
        self.seedNames = seedNames
    }
}

/// What an instrumented target's coverage showed a campaign.
public struct CoverageSummary: Sendable, Hashable, Codable {
    /// Edges (positions of the 64 KiB map) the inputs reached.
    public var edges = 0
    /// Inputs kept for the pool because they reached new edges or hit counts.
    public var inputsKept = 0

    public init(edges: Int = 0, inputsKept: Int = 0) {
        self.edges = edges
        self.inputsKept = inputsKept
    }
}

/// A snapshot of a running campaign, for progress displays.
public struct CampaignProgress: Sendable {
    public var targetName: String
    public var executions: Int
    public var elapsedSeconds: Double
    /// Seconds left, or the fraction of runs left, depending on the limit.
    public var remaining: String
    public var findingsByKind: [FindingKind: Int]
    /// `fuzzing` or `minimizing`.
    public var phase: String
    /// Edges reached so far, when the target is instrumented.
    public var edges: Int?
}

/// Drives the loop: schedule inputs, run them in parallel, ask the oracle, keep new behaviour,
/// stop on a run count, a time budget or an interrupt, then minimize every finding.
public final class Campaign: @unchecked Sendable {
    public let executor: any Executor
    /// Decides what a finding is (oracle, validators, outside traps, remembered verdicts).
    public let judge: Judge
    public var validator: (any Validator)? { judge.validator }
    /// The executor a finding's printed replay runs, when it is not ``executor``: a persistent
    /// worker's findings replay one process per input, so each is run there once more after
    /// minimization, and a finding that does not show there says so
    /// (``FindingRecord/freshProcess``).
    public var replayExecutor: (any Executor)?
    /// Called with each finding the moment the campaign first has it (the first input with its
    /// kind and signature), on the thread of the job that found it, before that job runs its
    /// next input; once per finding, never per input. A report saves its input there
    /// (`found/`), so that a run killed later still holds it.
    public var found: (@Sendable (FindingRecord) -> Void)?
    public let configuration: FuzzConfiguration
    public let targetName: String
    public let targetCommand: String
    /// The most bytes of inputs the jobs' exchange held at once in the last run (0 with one
    /// job): what the jobs pass each other stays within the pools' parent size.
    private(set) var exchangeMostHeldBytes = 0
    let seeds: [Seed]
    let takesPath: Bool
    let mutator: (any StructureAwareMutator)?
    let regressions: [TestInput]
    /// The jobs' schedules after ``run(progress:shouldStop:fuzzed:)``.
    private var schedules: [InputSchedule] = []

    /// Creates a campaign.
    /// - Parameters:
    ///   - executor: Runs the target.
    ///   - judge: Decides what a finding is.
    ///   - targetName: The target's name in reports.
    ///   - targetCommand: The command line, for replay commands.
    ///   - takesPath: Whether the target reads a path (then a missing file is tried).
    ///   - seeds: The corpus; at least one seed.
    ///   - configuration: Limits, seed and mutators.
    ///   - mutator: The format's structure-aware mutations, catalogue and generator, if any.
    public init(
        executor: any Executor, judge: Judge, targetName: String, targetCommand: String, takesPath: Bool, seeds: [Seed],
        configuration: FuzzConfiguration, mutator: (any StructureAwareMutator)? = nil, regressions: [TestInput] = []
    ) {
        self.executor = executor
        self.judge = judge
        self.configuration = configuration
        self.targetName = targetName
        self.targetCommand = targetCommand
        self.seeds = seeds
        self.takesPath = takesPath
        self.mutator = mutator
        self.regressions = regressions
    }

    /// A campaign whose judge labels with `validator` (and reports `reference`'s verdict beside
    /// each finding), with outside traps when `mutator`'s catalogue uses them.
    public convenience init(
        executor: any Executor, targetName: String, targetCommand: String, takesPath: Bool,
        validator: (any Validator)?, seeds: [Seed], configuration: FuzzConfiguration,
        mutator: (any StructureAwareMutator)? = nil, regressions: [TestInput] = [], reference: (any Validator)? = nil
    ) {
        self.init(
            executor: executor,
            judge: Judge(validator: validator, reference: reference, outsideTraps: mutator?.usesOutsideTraps == true, slots: executor.slots),
            targetName: targetName, targetCommand: targetCommand, takesPath: takesPath, seeds: seeds, configuration: configuration,
            mutator: mutator, regressions: regressions)
    }

    /// The inputs that showed new behaviour, kept to be mutated further (at most 512 per job):
    /// after ``run(progress:shouldStop:fuzzed:)``, what `run --corpus-output` saves for the next
    /// run. Each once, though the jobs offered them to each other.
    public var interestingInputs: [TestInput] {
        var seen: Set<[UInt8]?> = []
        return schedules.flatMap(\.addedInputs).filter { seen.insert($0.bytes).inserted }
    }

    /// Runs the campaign: one job per slot of the executor (``Job``), job 0 on the calling
    /// thread and the others on threads of their own; their findings merged when all have
    /// stopped, then minimized and checked in a fresh process.
    /// - Parameters:
    ///   - progress: Called after every batch of job 0, then while the others finish (from the
    ///     calling thread).
    ///   - shouldStop: Polled after every batch of job 0, then while the others finish (from the
    ///     calling thread; every job stops at its next batch), and during minimization (e.g.
    ///     Ctrl-C).
    ///   - fuzzed: Called with the findings before minimization starts, so a report can be
    ///     written that no later phase can lose.
    /// - Throws: ``CorruptFuzzError`` when the first seeds show the target cannot be used (it
    ///   cannot be started, or it rejects every seed on standard input and probably needs
    ///   `@@`). A failure after that ends the campaign with ``CampaignResult/toolError`` set
    ///   and what was found kept.
    public func run(
        progress: (CampaignProgress) -> Void = { _ in }, shouldStop: @Sendable () -> Bool = { false },
        fuzzed: (CampaignResult) -> Void = { _ in }
    ) throws(CorruptFuzzError) -> CampaignResult {
        var result = CampaignResult(
            targetName: targetName, targetCommand: targetCommand, validatorName: validator?.name,
            configuration: configuration, seedNames: seeds.map(\.name))
        result.outsideTraps = judge.traps
        let clock = configuration.clock
        let start = configuration.startedAt ?? clock.now
        let maxSeconds = configuration.maxSeconds ?? (configuration.maxRuns == nil ? 60 : nil)
        // The whole campaign ends by `end`; with a finding, fuzzing leaves minimization its share
        // and the report a moment.
        let end = maxSeconds.map { start + .milliseconds(Int($0 * 1000)) }
        let minimizeShare: Duration =
            configuration.minimize ? .milliseconds(Int(min(configuration.minimizeTotalSeconds, (maxSeconds ?? 0) / 5) * 1000)) : .zero
        let reportMargin: Duration = .milliseconds(Int(min(1, (maxSeconds ?? 0) / 50) * 1000))
        let jobCount = max(1, executor.slots)
        var planned = Plan(end: end, minimizeShare: minimizeShare, reportMargin: reportMargin, batchSize: max(1, executor.batchSize / jobCount))
        if let replayExecutor, maxSeconds != nil {
            // A worker's findings are checked in a fresh process after fuzzing: with a hang, that
            // takes seconds, which fuzzing leaves them (up to another fifth of the time, or up to
            // two fifths for one check, a hang's in a short campaign).
            planned.checkTimeout = configuration.limits.timeoutMilliseconds
            planned.checkSlots = max(1, min(replayExecutor.slots, executor.slots))
            planned.maxCheckReserve = .milliseconds(Int((maxSeconds ?? 0) / 5 * 1000))
            planned.maxOneCheckReserve = .milliseconds(Int((maxSeconds ?? 0) * 2 / 5 * 1000))
        }
        let plan = planned
        let shared = Shared(jobs: jobCount, start: start, seedCount: seeds.count, exchangeWaits: configuration.maxRuns != nil)
        let jobs = (0..<jobCount).map { Job(index: $0, of: jobCount, campaign: self, shared: shared, result: result) }

        func elapsed() -> Double { (clock.now - start).seconds }
        func report(_ phase: String) {
            let now = shared.snapshot()
            let remaining: String
            if let maxRuns = configuration.maxRuns {
                remaining = "\(max(0, maxRuns - now.executions)) runs"
            } else {
                remaining = "\(Int(max(0, (maxSeconds ?? 0) - elapsed()).rounded(.up)))s"
            }
            progress(
                CampaignProgress(
                    targetName: targetName, executions: now.executions, elapsedSeconds: elapsed(), remaining: remaining,
                    findingsByKind: now.findingsByKind, phase: phase, edges: now.edges > 0 ? now.edges : nil))
        }
        // Housekeeping of the machine's processes and memory, on the machine's clock (not
        // ``FuzzConfiguration/clock``: nothing a campaign decides depends on it).
        var lastSweep = ContinuousClock.now
        var lastTrim = ContinuousClock.now
        /// What the calling thread does every 100 ms while the jobs run, each on a thread of its
        /// own: processes the targets left running killed, memory given back, progress
        /// reported, and the caller's stop polled for every job (the jobs' threads never call
        /// the caller's closures). Not between one job's inputs: a job checking a new hang in a
        /// fresh process (seconds) left the progress silent and a Ctrl-C unseen.
        func checkpoint() {
            if ContinuousClock.now - lastSweep > .milliseconds(250) {
                result.escapedProcessesKilled += Int(cf_reap_escapees())
                lastSweep = ContinuousClock.now
                if lastSweep - lastTrim > .seconds(5) {
                    // Freed memory back to the system: after one large input (megabytes of XML
                    // the validator parsed) resident memory would otherwise stay at its peak.
                    cf_release_freed_memory()
                    lastTrim = lastSweep
                }
            }
            report("fuzzing")
            if shouldStop() { shared.requestStop() }
        }

        // Each job on a free core with the processes it starts (CPUBinding), when it starts any.
        let cpus = executor is WorkerExecutor || executor is ProcessExecutor ? CPUBinding.claim(jobs: jobs.count) : jobs.map { _ in nil }
        defer { CPUBinding.release(cpus) }
        if shouldStop() { shared.requestStop() }
        let running = DispatchGroup()
        for (job, cpu) in zip(jobs, cpus) {
            running.enter()
            let thread = Thread {
                // Told apart from the calling thread in top, perf and /proc (the benchmarks of
                // a job's share of its core read it).
                _ = cf_name_thread("cf-job \(job.index + 1)")
                CPUBinding.bound(to: cpu) { job.run(plan) }
                running.leave()
            }
            // As much stack as the calling thread has: a validator may recurse deep.
            thread.stackSize = 8 << 20
            thread.start()
        }
        while running.wait(timeout: .now() + .milliseconds(100)) == .timedOut { checkpoint() }
        schedules = jobs.map(\.schedule)

        Self.merge(jobs.map(\.result), into: &result)
        if let failure = shared.failure {
            // Before anything ran, the target is unusable: a configuration error.
            if failure.thrown || result.executions == 0 { throw failure.error }
            result.toolError = failure.error.description
            result.stopReason = .error
        }
        if result.coverage != nil { result.coverage?.edges = shared.edges }
        exchangeMostHeldBytes = shared.exchange?.mostHeldBytes ?? 0
        result.fuzzSeconds = elapsed()
        result.totalSeconds = elapsed()
        result.stability = executor.stability
        let reportStart = clock.now
        fuzzed(result)
        // The report written then (the caller's, of what was found: findings' inputs of
        // megabytes make it take a second) is written again at the end, with the minimized
        // inputs beside the originals: twice its time is kept for it, up to a fifth of the
        // duration.
        let finalMargin = max(reportMargin, min((clock.now - reportStart) * 2, .milliseconds(Int((maxSeconds ?? 0) / 5 * 1000))))

        if configuration.minimize, !result.findings.isEmpty, result.toolError == nil {
            report("minimizing")
            // Up to when the checks of the findings in a fresh process need the time.
            var checks = CheckCost()
            for record in result.findings { checks.add(plan.checkCost(of: record.finding)) }
            minimize(&result.findings, until: end.map { $0 - finalMargin - plan.checkReserve(checks) }, shouldStop: shouldStop)
        }
        if let replayExecutor, !result.findings.isEmpty, result.toolError == nil {
            report("checking findings in a fresh process")
            result.findingsOnlyAfterTrap += checkInFreshProcess(
                &result.findings, on: replayExecutor, until: end.map { $0 - finalMargin }, cost: { plan.freshCheckCost(of: $0) },
                shouldStop: shouldStop)
        }
        result.escapedProcessesKilled += Self.reapEscapees()
        result.stability = executor.stability
        result.totalSeconds = elapsed()
        return result
    }

    /// Adds the jobs' results to `result`: executions and counts add up, the input hashes are
    /// mixed in job order (one job's is the campaign's), findings with one key become one (the
    /// first hit's, by execution number, with every job's hits and variants; a hang checked in a
    /// fresh process while fuzzing before others), and the campaign
    /// stopped for the reason its jobs did (an interruption first, then the time).
    static func merge(_ jobs: [CampaignResult], into result: inout CampaignResult) {
        result.inputSequenceHash = jobs.count == 1 ? jobs[0].inputSequenceHash : FNV1a.offset
        var records: [FindingKey: Int] = [:]
        for job in jobs {
            result.executions += job.executions
            result.slowInputs += job.slowInputs
            for slow in job.slowInputsKept ?? [] { SlowInput.keep(slow, in: &result.slowInputsKept) }
            result.targetGivesReasons = result.targetGivesReasons || job.targetGivesReasons
            for (reason, count) in job.undecided
            where result.undecided[reason] != nil || result.undecided.count < CampaignResult.maxUndecidedReasons {
                result.undecided[reason, default: 0] += count
            }
            if let coverage = job.coverage {
                result.coverage = CoverageSummary(edges: 0, inputsKept: (result.coverage?.inputsKept ?? 0) + coverage.inputsKept)
            }
            if jobs.count > 1 {
                for shift in stride(from: 0, to: 64, by: 8) {
                    result.inputSequenceHash = FNV1a.add(UInt8(truncatingIfNeeded: job.inputSequenceHash >> UInt64(shift)), to: result.inputSequenceHash)
                }
            }
        }
        for record in jobs.flatMap(\.findings).sorted(by: { $0.firstExecution < $1.firstExecution }) {
            if let index = records[record.finding.key] {
                let first = result.findings[index]
                if record.finding.execution.hangConfirmedAsReplayed, !first.finding.execution.hangConfirmedAsReplayed {
                    // A hang checked in a fresh process while fuzzing (by the job that found it
                    // first in time) is the one reported: its check is done.
                    var confirmed = record
                    confirmed.firstExecution = first.firstExecution
                    confirmed.firstSeconds = first.firstSeconds
                    confirmed.absorb(first)
                    result.findings[index] = confirmed
                } else {
                    result.findings[index].absorb(record)
                }
            } else {
                records[record.finding.key] = result.findings.count
                result.findings.append(record)
            }
        }
        let reasons = Set(jobs.map(\.stopReason))
        result.stopReason = reasons.contains(.interrupted) ? .interrupted : reasons.contains(.duration) ? .duration : .runs
    }

    /// Kills what targets left running, until nothing is left (a killed escapee's own children
    /// are re-parented to us in turn). Returns how many were killed.
    static func reapEscapees() -> Int {
        var total = 0
        for _ in 0..<20 {
            let found = Int(cf_reap_escapees())
            total += found
            if found == 0 { break }
            usleep(2_000)
        }
        return total
    }

    // MARK: - Execution

    /// How many distinct behaviours a campaign remembers before it starts over.
    static let maxBehaviours = 20_000

    /// A coarse description of what the loader did, for keeping inputs with new behaviour: a
    /// hash of the outcome, the reason and exit code, and the messages of the loader and the
    /// validator with their numbers as `#` (so `habits[2].num_dates` and `habits[0].num_dates`
    /// are one behaviour), or the violation's site where the validator gives one. It runs for
    /// every input, so it builds no strings: each distinct message is normalized once
    /// (``NormalizedMessages``).
    static func behaviour(of outcome: Outcome, verdict: Verdict?, normalized: inout NormalizedMessages) -> Int {
        // One run's key: a ``WordHash`` (a Hasher's SipHash finalization alone costs more than
        // the rest of the key).
        var hash = WordHash()
        switch outcome {
        case .accepted: hash.add(0)
        case .acceptedInvalid: hash.add(1)
        case .rejected(let reason, let code, let message):
            hash.add(2)
            hash.add(reason?.rawValue)
            hash.add(Int(code))
            hash.add(normalized.key(message ?? ""))
        case .crashed: hash.add(3)
        case .hung: hash.add(4)
        case .outOfMemory: hash.add(5)
        }
        if let (reason, site) = verdict?.violationSite {
            hash.add(reason?.rawValue)
            if let site {
                hash.add(site)
            } else if case .invalid(let violation)? = verdict {
                hash.add(normalized.key(violation.path))
                hash.add(normalized.key(violation.message))
            }
        }
        return Int(truncatingIfNeeded: hash.value)
    }

    // MARK: - Minimization

    /// - Parameter end: When the campaign's time is up, if it has a duration.
    private func minimize(_ findings: inout [FindingRecord], until end: FuzzInstant?, shouldStop: @Sendable () -> Bool) {
        let slots = executor.slots
        let clock = configuration.clock
        let minimizer = Minimizer(maxTests: configuration.minimizeMaxTests ?? Int.max)
        let started = clock.now
        let overall = min(end ?? started + .seconds(86400), started + .milliseconds(Int(configuration.minimizeTotalSeconds * 1000)))
        // Kinds in order of severity (crash first), then in the order found.
        let order = findings.indices.sorted { (findings[$0].finding.kind, $0) < (findings[$1].finding.kind, $1) }
        findings.withUnsafeMutableBufferPointer { buffer in
            let records = UnsafeMutableSendableBuffer(buffer)
            DispatchQueue.concurrentPerform(iterations: min(slots, records.count)) { slot in
                let mine = stride(from: slot, to: order.count, by: slots).map({ order[$0] })
                for (position, index) in mine.enumerated() {
                    var record = records[index]
                    let original = record.finding.input
                    let now = clock.now
                    guard let bytes = original.bytes, !bytes.isEmpty, now < overall else { continue }
                    // This finding's share of the time left: all of it for the last, a part
                    // for each of many; at most minimizeMaxSeconds when that is set.
                    var deadline = now + (overall - now) / (mine.count - position)
                    if let most = configuration.minimizeMaxSeconds { deadline = min(deadline, now + .milliseconds(Int(most * 1000))) }
                    var lastExecution: Execution?
                    // A test of a hang costs the deadline and a confirmation at twice its own; no
                    // test starts that could end after `deadline`. Another finding's candidate
                    // that hangs is not confirmed: it is not that finding either way.
                    let timeout = configuration.limits.timeoutMilliseconds
                    let isHang = record.finding.kind == .hang
                    let worstCase = Duration.milliseconds(isHang ? timeout + 2 * hangConfirmationMilliseconds(for: timeout) : timeout)
                    let outcome = minimizer.minimize(bytes, structure: mutator.map { s in { s.shrinkCandidates(of: $0) } }) { candidate in
                        if shouldStop() || clock.now + worstCase > deadline { return nil }
                        var input = original
                        input.bytes = candidate
                        guard let judged = try? judge.run(input, on: executor, slot: slot, confirming: isHang ? .every : .none, hangMargin: 2) else {
                            return nil
                        }
                        guard judged.finding?.key == record.finding.key else { return false }
                        // A reproducer must show its finding with a margin, or it replays as
                        // another finding on a busier machine: a hang is confirmed by the judge;
                        // anything else must finish within half the deadline (an entity bomb
                        // accepted in 480 of 500 ms is a hang the next time).
                        if !isHang, judged.execution.microseconds > Int64(timeout) * 500 {
                            return false
                        }
                        lastExecution = judged.execution
                        return true
                    }
                    record.minimized = outcome.bytes
                    record.minimizationTests = outcome.tests
                    record.minimizationEnd = !outcome.exhausted ? .oneMinimal : outcome.tests >= minimizer.maxTests ? .outOfTests : .outOfTime
                    if outcome.bytes == bytes {
                        record.minimizedExecution = record.finding.execution
                    } else if let lastExecution {
                        record.minimizedExecution = lastExecution
                    }
                    records[index] = record
                }
            }
        }
    }

    // MARK: - Fresh processes

    /// Runs each finding's reproducer the way its printed replay does, in `fresh` (one process
    /// per input), when the campaign ran the target as a persistent worker: there a finding can
    /// depend on what the worker ran before (its heap, a cache, a global), and a finding that
    /// does not replay as printed is not one a developer can act on.
    ///
    /// The minimized input is tried first, then the original; the first that shows the finding
    /// (kind and signature) becomes the reproducer. When neither does, the finding stays (the
    /// worker did show it) and says what a fresh process did instead
    /// (``FindingRecord/freshProcess``); unless the worker's process showed it after it had
    /// lived through a trap (``Execution/afterRecoveredTrap``): then what the trap left may have
    /// made it, and it is left out (``CampaignResult/findingsOnlyAfterTrap``). Those are checked
    /// first, before the time is up.
    /// - Parameters:
    ///   - end: When the campaign's time is up, if it has a duration: a check that could end
    ///     past it (`cost`) is not started, and its finding is reported as found, marked
    ///     ``FreshProcessCheck/notChecked(neededSeconds:leftSeconds:)``; so is one not reached
    ///     before a stop.
    ///   - cost: What checking a finding can take.
    private func checkInFreshProcess(
        _ findings: inout [FindingRecord], on fresh: any Executor, until end: FuzzInstant?, cost: @Sendable (Finding) -> Duration,
        shouldStop: @Sendable () -> Bool
    ) -> Int {
        let slots = min(fresh.slots, executor.slots)
        let clock = configuration.clock
        // The findings a process showed after a trap it lived through are checked first, then
        // the longest checks (a hang's): each slot takes the next one when it is free, so the
        // short ones fill the other slots while a hang's runs.
        let order = findings.indices.sorted { a, b in
            func key(_ index: Int) -> (Int, Duration, Int) {
                let finding = findings[index].finding
                return (finding.execution.afterRecoveredTrap ? 0 : 1, .zero - cost(finding), index)
            }
            return key(a) < key(b)
        }
        let next = LockedBox(0)
        findings.withUnsafeMutableBufferPointer { buffer in
            let records = UnsafeMutableSendableBuffer(buffer)
            DispatchQueue.concurrentPerform(iterations: min(slots, records.count)) { slot in
                while true {
                    let position = next.withLock { position in
                        defer { position += 1 }
                        return position
                    }
                    guard position < order.count else { break }
                    let index = order[position]
                    var record = records[index]
                    // A file held open after the answer is something only a process that stays
                    // running can show: a fresh process has exited when anyone looks.
                    if record.finding.kind == .heldLock { continue }
                    let original = record.finding.input
                    // A hang checked while fuzzing (``Execution/hangConfirmedAsReplayed``) is
                    // checked already, its original input at least.
                    let originalChecked = record.finding.execution.hangConfirmedAsReplayed
                    var candidates = originalChecked ? [] : [original]
                    if let minimized = record.minimized, minimized != original.bytes {
                        var input = original
                        input.bytes = minimized
                        candidates.insert(input, at: 0)
                    }
                    /// The checked original as the reproducer, in place of a minimized input
                    /// that did not show the finding in a fresh process (or had no time to).
                    func originalIsTheReproducer(showed: Bool) {
                        record.minimized = original.bytes
                        record.minimizationEnd = nil
                        record.minimizedExecution = record.finding.execution
                        if showed { record.freshProcess = .originalOnly }
                    }
                    if candidates.isEmpty { continue }
                    let needed = cost(record.finding)
                    let left = end.map { $0 - clock.now }
                    if shouldStop() || left.map({ $0 < needed }) == true {
                        if originalChecked {
                            originalIsTheReproducer(showed: false)
                        } else {
                            record.freshProcess = .notChecked(neededSeconds: needed.seconds, leftSeconds: max(0, left?.seconds ?? 0))
                        }
                        records[index] = record
                        continue
                    }
                    let checkStart = clock.now
                    var runs = 0
                    var seen: Judge.Judgement?
                    var unconfirmed: Duration?
                    /// Why a candidate's fresh process told nothing (starved of CPU), when one did not.
                    var undecided: String?
                    for candidate in candidates {
                        // Every suspected hang confirmed: the campaign's judge may have confirmed
                        // one already, and then it would take a slow input's first deadline for a hang.
                        // A hang at twice the confirmation's deadline, which a replay confirms it
                        // at: an input that needs about one deadline's CPU time (an entity bomb
                        // that runs out of memory after 2.5 s) is a hang one run and finishes the
                        // next, so what is reported hangs with a margin. Any other finding at the
                        // replay's own deadline: one that finishes only past it would replay as a
                        // hang.
                        let margin = record.finding.kind == .hang ? 2 : 1
                        // A candidate of another finding that hangs here is confirmed only if
                        // the confirmation fits the time left; else the check is not done.
                        let timeout = configuration.limits.timeoutMilliseconds
                        let confirmation =
                            .milliseconds(timeout) + .milliseconds(margin * hangConfirmationMilliseconds(for: timeout))
                            * record.finding.execution.hangConfirmationStretch
                        let confirms = end.map { $0 - clock.now >= confirmation } ?? true
                        runs += 1
                        guard
                            let judged = try? judge.run(candidate, on: fresh, slot: slot, confirming: confirms ? .every : .none, hangMargin: margin)
                        else { break }
                        if !confirms, case .hung = judged.execution.outcome {
                            unconfirmed = confirmation
                            break
                        }
                        // Starved of CPU: this run says nothing either way (the next candidate may).
                        if case .undecided(let why)? = judged.verdict, case .hung = judged.execution.outcome {
                            undecided = why
                            continue
                        }
                        if judged.finding?.key == record.finding.key {
                            if candidate.bytes != (record.minimized ?? original.bytes) {
                                // The minimized input showed it only in the worker: the original is the reproducer.
                                record.minimized = candidate.bytes
                                record.minimizationEnd = nil
                                record.freshProcess = .originalOnly
                            }
                            record.minimizedExecution = judged.execution
                            seen = nil
                            undecided = nil
                            break
                        }
                        seen = seen ?? judged
                    }
                    if let unconfirmed {
                        let left = end.map { max(.zero, $0 - clock.now) } ?? .zero
                        record.freshProcess = .notChecked(neededSeconds: unconfirmed.seconds, leftSeconds: left.seconds)
                        records[index] = record
                        continue
                    }
                    if let undecided {
                        // A run starved before it showed anything, and none showed the finding:
                        // neither confirmed nor refuted (never a NOT REPRODUCED mark). A hang
                        // checked while fuzzing keeps its original as the reproducer.
                        if originalChecked {
                            originalIsTheReproducer(showed: true)
                        } else {
                            record.freshProcess = .undecided(reason: undecided)
                        }
                        records[index] = record
                        continue
                    }
                    if seen != nil, originalChecked {
                        // The minimized input showed it only in the worker.
                        originalIsTheReproducer(showed: true)
                        seen = nil
                    }
                    if let seen, let other = seen.finding, !record.finding.execution.afterRecoveredTrap, other.kind == record.finding.kind,
                        Self.isMemoryFault(seen.execution.outcome),
                        ["SIGSEGV", "SIGBUS"].contains(where: { record.finding.signature.hasPrefix($0) })
                    {
                        // The same kind of memory fault at another site: the heap's layout moves it.
                        record.freshProcess = .siteVaries(sites: [record.finding.signature, other.signature])
                    } else if let seen {
                        record.freshProcess = .notReproduced(
                            finding: seen.finding.map { "\($0.kind.rawValue): \($0.signature)" }, outcome: seen.execution.outcome.summary)
                    } else if let execution = record.minimizedExecution, Self.isMemoryFault(execution.outcome),
                        end.map({ $0 - clock.now >= (clock.now - checkStart) / max(1, runs) * 2 }) ?? true
                    {
                        // A memory fault's site can depend on the heap's layout: two more runs say
                        // whether the printed signature is the one a replay shows, when they fit
                        // the time left (a fresh process's full crash report of a deep stack
                        // overflow takes most of a second).
                        var sites = [record.finding.signature]
                        var reproducer = original
                        reproducer.bytes = record.minimized ?? original.bytes
                        for _ in 0..<2 {
                            guard let again = try? judge.run(reproducer, on: fresh, slot: slot, confirming: .every), let finding = again.finding,
                                finding.kind == record.finding.kind, !sites.contains(finding.signature)
                            else { continue }
                            sites.append(finding.signature)
                        }
                        if sites.count > 1 { record.freshProcess = .siteVaries(sites: sites) }
                    }
                    records[index] = record
                }
            }
        }
        // One that a process showed only after it had lived through a trap is left out.
        let before = findings.count
        findings.removeAll { record in
            guard record.finding.execution.afterRecoveredTrap, case .notReproduced? = record.freshProcess else { return false }
            return true
        }
        return before - findings.count
    }

    // MARK: - Helpers

    /// A crash by SIGSEGV or SIGBUS, whose site can depend on the heap's layout.
    static func isMemoryFault(_ outcome: Outcome) -> Bool {
        if case .crashed(let signal, _, _) = outcome { return signal == SIGSEGV || signal == SIGBUS }
        return false
    }

    /// Mixes one input into the sequence hash. With outside traps, the canary path and the
    /// listener's port differ from run to run, so the input counts by its seed, its mutations
    /// (names carry offsets and values) and its length instead of its bytes.
    static func fnv(_ hash: UInt64, _ input: TestInput, byName: Bool) -> UInt64 {
        let prime = FNV1a.prime
        var h = hash
        // No closure for a byte's step: one that captures `h` put it in a heap box per input.
        if byName {
            for byte in (input.seedName + "|" + input.mutations.joined(separator: "+") + "|\(input.bytes?.count ?? -1)").utf8 {
                h = (h ^ UInt64(byte)) &* prime
            }
        } else if let bytes = input.bytes {
            h = (h ^ 1) &* prime
            // Eight bytes a step (the hash runs on every input), then the rest one by one.
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset + 8 <= buffer.count {
                    h = (h ^ buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* prime
                    offset += 8
                }
                while offset < buffer.count {
                    h = (h ^ UInt64(buffer[offset])) &* prime
                    offset += 1
                }
            }
        } else {
            h = h &* prime
        }
        return (h ^ 0xFF) &* prime
    }

    static func firstLine(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes.prefix(400), as: UTF8.self)
        return text.split(separator: "\n").first.map(String.init) ?? "(nothing)"
    }
}

/// The messages of a campaign as behaviour keys: a message counts up to its first quote (what
/// follows quotes the data, which would make every input new), for 100 bytes at most, with its
/// numbers as `#` (``Normalize/message(_:)``). It runs a few times for every input, and most
/// messages differ only in their numbers (`habits[2].dates[7]`), so the key is a hash of the
/// normalized text computed in one pass over the message's bytes, with nothing built or looked
/// up; only a message that names its rule (`… [rule: NAME]`) takes the general path, once.
struct NormalizedMessages {
    private var keys: [String: Int] = [:]

    /// The keys of the messages seen last: a loader rejects most inputs with one of a few
    /// messages, and a describer hands back the very same string for the same error
    /// (``RejectionDescriber``), so a message is most often found here, by its length and its
    /// first and last bytes, and compared with `==` (which returns at once for the same storage).
    private var recent = [(message: String, key: Int)?](repeating: nil, count: 64)

    /// A hash of the normalized `message`.
    mutating func key(_ message: String) -> Int {
        let slot = Self.slot(of: message, in: recent.count)
        if let entry = recent[slot], entry.message == message { return entry.key }
        var text = message
        let made = text.withUTF8({ Self.streamingKey($0) }) ?? lookUp(message)
        recent[slot] = (message, made)
        return made
    }

    /// A table slot from what a string knows without reading it through: its UTF-8 count and
    /// its first and last bytes.
    @inline(__always) static func slot(of message: String, in count: Int) -> Int {
        let utf8 = message.utf8
        var hash = WordHash()
        hash.add(utf8.count)
        hash.add(Int(utf8.first ?? 0) << 8 | Int(utf8.last ?? 0))
        return Int(truncatingIfNeeded: hash.value) & (count - 1)
    }

    private mutating func lookUp(_ message: String) -> Int {
        if let known = keys[message] { return known }
        if keys.count >= 4096 { keys.removeAll(keepingCapacity: true) }
        let utf8 = message.utf8
        let end = utf8.firstIndex { Self.endsText($0) } ?? utf8.endIndex
        let unquoted = String(decoding: utf8[..<end].prefix(100), as: UTF8.self)
        let made = Normalize.message(unquoted).hashValue
        keys[message] = made
        return made
    }

    @inline(__always) private static func endsText(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "<")
    }

    /// FNV-1a over the bytes ``Normalize/message(_:)`` would give for the message's first 100
    /// bytes before a quote; nil when that text names a rule (it ends in `]`).
    static func streamingKey(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = text.baseAddress else { return Int(truncatingIfNeeded: FNV.offset) }
        var end = 0
        let limit = min(text.count, 100)
        while end < limit, !endsText(base[end]) { end += 1 }
        if end > 0, base[end - 1] == UInt8(ascii: "]") { return nil }
        var hash = FNV.offset
        Normalize.normalizedBytes(of: UnsafeBufferPointer(start: base, count: end)) { hash = FNV.add($0, to: hash) }
        return Int(truncatingIfNeeded: hash)
    }

    /// 64-bit FNV-1a.
    typealias FNV = FNV1a
}

/// The verdicts a validator gave on recent inputs. A quarter of a campaign's inputs repeat one
/// it ran before (a structure-aware mutation of a small file has few outcomes; one bit flipped
/// in a 14-byte seed even fewer), and a validator is a function of the bytes: the verdict is
/// looked up instead of validated again. The loader still runs every input. Only `valid` and
/// `invalid` are kept (a validator that failed or could not decide is asked again).
///
/// The memory is a table of ``slots`` entries, each input's hash picking one, where a new
/// verdict replaces the one there (a dictionary spent more on growing and hashing than the
/// lookups saved); inputs over ``maxLength`` bytes are not kept, so it holds 2 MB of inputs at
/// most and a campaign's memory stays flat.
final class VerdictMemory: @unchecked Sendable {
    static let slots = 8192
    static let maxLength = 256
    private struct Entry {
        var hash: UInt64
        var bytes: [UInt8]
        var verdict: Verdict
    }
    private var entries = [Entry?](repeating: nil, count: slots)

    /// An input's hash (a ``WordHash``): it picks the slot; the bytes are compared.
    static func hash(_ bytes: [UInt8]) -> UInt64 {
        var hash = WordHash()
        bytes.withUnsafeBytes { hash.add($0) }
        return hash.value
    }

    func verdict(of input: [UInt8]?, validate: ([UInt8]?) -> Verdict) -> Verdict {
        guard let input, input.count <= Self.maxLength else { return validate(input) }
        let hash = Self.hash(input)
        let slot = Int(truncatingIfNeeded: hash & UInt64(Self.slots - 1))
        if let entry = entries[slot], entry.hash == hash, entry.bytes == input { return entry.verdict }
        let verdict = validate(input)
        switch verdict {
        case .valid, .invalid: entries[slot] = Entry(hash: hash, bytes: input, verdict: verdict)
        case .undecided, .error: break
        }
        return verdict
    }
}

// MARK: - Concurrency helpers

/// A value behind a lock.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func set(_ value: Value) { lock.withLock { stored = value } }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result { lock.withLock { body(&stored) } }
}

/// A buffer whose elements distinct threads write at distinct indices.
struct UnsafeMutableSendableBuffer<Element>: @unchecked Sendable {
    let base: UnsafeMutableBufferPointer<Element>
    init(_ base: UnsafeMutableBufferPointer<Element>) { self.base = base }
    var count: Int { base.count }
    subscript(index: Int) -> Element {
        get { base[index] }
        nonmutating set { base[index] = newValue }
    }
}
