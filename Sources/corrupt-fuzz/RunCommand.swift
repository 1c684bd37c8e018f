import ArgumentParser
import CCorruptFuzzSpawn
import CorruptFuzzCore
import CorruptFuzzExamples
import CorruptFuzzReporting
import CorruptFuzzRunner
import Foundation

/// `corrupt-fuzz run`: a campaign against one target, or the bundled demo without arguments.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a fuzzing campaign against a loader (no arguments: the bundled demo).",
        discussion: """
            Target protocol: exit 0 = accepted (stdout is the loader's digest of the data); any other exit = rejected, \
            with an optional stderr line 'reason: WORD' (not-found, empty, corrupt, unsupported-version, ...); \
            death by a signal = crash; no exit within --timeout = hang; over --memory-limit = oom.

            Examples, from the repository root after `swift build` (a test runs each): the \
            naive habit loader as a worker, which crashes (exit 1); xmllint, which survives \
            (exit 0).
              corrupt-fuzz run --target '.build/debug/habit-loader-naive @@' \\
                --corpus Corpus/habits --schema Corpus/schemas/habit-tracker.ksy \\
                --worker --runs 3000
              corrupt-fuzz run --target 'xmllint --noout @@' --corpus Corpus/notes \\
                --runs 300 --seed 7
            """)

    @OptionGroup var targetOptions: TargetOptions

    @Option(name: .long, help: ArgumentHelp("Folder of seed files (valid user-data files).", valueName: "dir"))
    var corpus: String?

    @Option(name: .long, help: ArgumentHelp("Stop after this many executions.", valueName: "n"))
    var runs: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The command's wall time, e.g. 60s, 5m (default 60s without --runs): setup, fuzzing, minimization (a fifth of it once something is found, at most 2 minutes) and the report. The demo's campaigns share it equally.",
            valueName: "duration"))
    var duration: Seconds?

    @Option(name: .long, help: ArgumentHelp("Seed of every random choice; the same seed and corpus give the same inputs.", valueName: "n"))
    var seed: UInt64 = 0

    @Option(name: .long, help: ArgumentHelp("Parallel executions (default: number of cores).", valueName: "n"))
    var jobs: Int?

    @Option(name: .long, help: ArgumentHelp("Parent folder of run reports.", valueName: "dir"))
    var reports: String = "Reports"

    @Flag(name: .long, help: "Report findings without minimizing them.")
    var noMinimize = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The most executions spent minimizing one finding (default: no count; the time left decides).", valueName: "n"))
    var minimizeRuns: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The most time spent minimizing all findings, shared among them (default 2m; with --duration, at most a fifth of it).",
            valueName: "duration"))
    var minimizeTime: Seconds?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Run part I of N of the campaign (every N-th deterministic input and a random stream of its own), for a campaign split across machines; combine the reports with `corrupt-fuzz merge`.",
            valueName: "I/N"))
    var shard: Shard?

    @OptionGroup var nightly: NightlyOptions

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Start the target once as a persistent worker that loads input after input (CorruptFuzzWorker.serve, or cf_worker_main in C), instead of once per input; restarted after a crash or hang."
        ))
    var worker = false

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Ignore the target's edge coverage. By default a target built with coverage instrumentation (afl-clang-fast, or SanitizerCoverage with corrupt_fuzz_coverage.c: swiftc -sanitize=fuzzer) guides the campaign: inputs that reach new code are kept, and comparisons that did not hold become mutations."
        ))
    var noCoverage = false

    func validate() throws {
        if let runs, runs <= 0 { throw ValidationError("--runs must be positive") }
        if let jobs, jobs <= 0 { throw ValidationError("--jobs must be positive") }
        if let minimizeRuns, minimizeRuns <= 0 { throw ValidationError("--minimize-runs must be positive") }
        if noMinimize, minimizeRuns != nil || minimizeTime != nil {
            throw ValidationError("--minimize-runs and --minimize-time need minimization: not with --no-minimize")
        }
        if runs != nil, duration != nil { throw ValidationError("give either --runs or --duration, not both") }
        let hasTarget = targetOptions.target != nil
        let generates = targetOptions.formats.generates
        if hasTarget, corpus == nil, !generates {
            throw ValidationError("--target needs --corpus (a folder of seed files), or --schema, --xsd or a --format with a generator (to generate them)")
        }
        if !hasTarget, corpus != nil || targetOptions.formats.description != nil || targetOptions.validator != nil || worker {
            throw ValidationError("--corpus, --schema, --validator and --worker need --target (the loader to test)")
        }
    }

    func run() throws {
        System.returnLargeBlocksAtOnce()
        var configuration = FuzzConfiguration()
        // --duration is the command's wall time: setup, fuzzing, minimization and the report.
        configuration.startedAt = configuration.clock.now
        configuration.seed = seed
        configuration.maxRuns = runs
        configuration.maxSeconds = duration?.value
        configuration.jobs = jobs ?? System.coreCount
        configuration.limits = targetOptions.limits
        configuration.minimize = !noMinimize
        configuration.minimizeMaxTests = minimizeRuns
        if let minimizeTime { configuration.minimizeTotalSeconds = minimizeTime.value }
        configuration.shard = shard
        configuration.coverage = !noCoverage
        let findings: Int
        do throws(CorruptFuzzError) {
            var checks: [Session.Check]
            if let target = targetOptions.target {
                checks = [
                    .campaign(
                        try CampaignCheck.make(
                            target: try TargetCommand(target), worker: worker, corpus: corpus, format: try targetOptions.resolvedFormat(),
                            appValidator: try targetOptions.validator.map { line throws(CorruptFuzzError) in try TargetCommand(line) },
                            configuration: configuration, regressions: nightly.regressions.map(RegressionFolder.init(root:))))
                ]
            } else {
                for line in BundledDemo.skipped { FileHandle.standardError.write(Data("\(line)\n".utf8)) }
                checks = try BundledDemo.checks(configuration: configuration, durationGiven: runs != nil || duration != nil)
            }
            let session = try Session(reports: reports, runID: ReportWriter.makeRunID(seed: seed), known: try nightly.readKnownFindings())
            session.corpusOutput = nightly.corpusOutput
            // In the demo, a check this machine cannot run is skipped with a line saying why.
            session.skipUnrunnableChecks = targetOptions.target == nil
            findings = try session.run(checks)
        } catch {
            throw configurationError(error)
        }
        throw findings > 0 ? ExitCode(1) : ExitCode.success
    }
}
