import ArgumentParser
import CCorruptFuzzSpawn
import CorruptFuzzCore
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

    @Option(name: .long, help: ArgumentHelp("Stop after this long, e.g. 60s, 5m (default 60s without --runs).", valueName: "duration"))
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

    func validate() throws {
        if let runs, runs <= 0 { throw ValidationError("--runs must be positive") }
        if let jobs, jobs <= 0 { throw ValidationError("--jobs must be positive") }
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
        var configuration = FuzzConfiguration()
        configuration.seed = seed
        configuration.maxRuns = runs
        configuration.maxSeconds = duration?.value
        configuration.jobs = jobs ?? System.coreCount
        configuration.limits = targetOptions.limits
        configuration.minimize = !noMinimize
        configuration.shard = shard
        let plans: [CampaignPlan]
        var checks: [DocumentCheckPlan] = []
        let known: KnownFindings?
        do {
            known = try nightly.readKnownFindings()
            if let target = targetOptions.target {
                plans = [
                    try CampaignPlan.make(
                        target: target, worker: worker, corpus: corpus, options: targetOptions, configuration: configuration,
                        regressions: nightly.regressions.map(RegressionFolder.init(root:)))
                ]
            } else {
                for line in Demo.skipped { FileHandle.standardError.write(Data("\(line)\n".utf8)) }
                plans = try Demo.plans(configuration: configuration, durationGiven: runs != nil || duration != nil)
                checks = try Demo.documentChecks(configuration: configuration)
            }
        } catch let error as CorruptFuzzError {
            throw configurationError(error)
        }
        let writer: ReportWriter
        do {
            writer = try ReportWriter(root: reports, runID: ReportWriter.makeRunID(seed: seed))
        } catch {
            throw configurationError(error)
        }
        let findings = try execute(plans, checks: checks, writer: writer, known: known, skipUnrunnableChecks: targetOptions.target == nil)
        throw findings > 0 ? ExitCode(1) : ExitCode.success
    }

    /// Runs the campaigns, writes the report, prints the summary; returns the count of new
    /// findings (those `known` does not list and the regression store did not reproduce).
    ///
    /// The report is written after each campaign's fuzzing phase (findings not minimized yet)
    /// and again after each campaign, so a failure in a later phase or campaign loses nothing
    /// already found. A failure of the tool itself is written into the report and ends in
    /// exit status 2; in the demo (`skipUnrunnableChecks`), a check that cannot run here is
    /// skipped with a line saying why, and the rest of the report stands.
    private func execute(
        _ plans: [CampaignPlan], checks: [DocumentCheckPlan], writer: ReportWriter, known: KnownFindings?, skipUnrunnableChecks: Bool = false
    ) throws -> Int {
        cf_install_interrupt_handler()
        // Descendants of a target that escape its process group (even into a new session)
        // are re-parented to us and killed, instead of outliving the campaign.
        _ = cf_become_subreaper()
        let display = ProgressDisplay()
        var suites: [RunReport.Suite] = []
        var toolErrors: [String] = []
        for plan in plans where cf_interrupted() == 0 {
            for warning in plan.warnings { display.note("warning: \(warning)") }
            display.note("fuzzing \(plan.campaign.targetName): \(plan.campaign.targetCommand)")
            let earlier = suites
            do {
                let result = try plan.campaign.run(
                    progress: display.update, shouldStop: { cf_interrupted() != 0 },
                    fuzzed: { partial in
                        guard !partial.findings.isEmpty else { return }
                        var provisional = earlier + [plan.suite(of: partial, known: known)]
                        try? Self.write(&provisional, writer: writer)
                    })
                display.finish(result)
                if let error = result.toolError {
                    display.note("error: \(plan.campaign.targetName): \(error) (the findings made before it are in the report)")
                    toolErrors.append(error)
                }
                suites.append(plan.suite(of: result, known: known))
                try? Self.write(&suites, writer: writer)
            } catch {
                display.clear()
                // Keep what earlier campaigns found, then report the error.
                if !suites.isEmpty { try? Self.write(&suites, writer: writer) }
                throw configurationError(error)
            }
            if let output = nightly.corpusOutput {
                do throws(CorruptFuzzError) {
                    try plan.saveInterestingInputs(to: output)
                } catch {
                    throw configurationError(error)
                }
            }
        }
        for check in checks where cf_interrupted() == 0 {
            display.note("checking \(check.name)")
            do {
                suites += try check.run()
            } catch  where skipUnrunnableChecks && error.code == .unusableTarget {
                display.note("skipped \(check.name): \(error)")
                continue
            } catch {
                if !suites.isEmpty { try? Self.write(&suites, writer: writer) }
                throw configurationError(error)
            }
            try? Self.write(&suites, writer: writer)
        }
        if cf_interrupted() != 0 { display.note("interrupted: writing the report of what was found so far") }
        do {
            try Self.write(&suites, writer: writer)
        } catch let error as CorruptFuzzError {
            throw configurationError(error)
        }
        let report = suites.reduce(0) { $0 + $1.newFindings.count }
        Self.printSummary(suites, writer: writer)
        if let first = toolErrors.first {
            throw configurationError(CorruptFuzzError(.unusableTarget, first))
        }
        return report
    }

    static func write(_ suites: inout [RunReport.Suite], writer: ReportWriter) throws {
        try writer.saveReproducers(&suites)
        let report = RunReport(
            runID: writer.runID, folder: writer.folder.path, suites: suites,
            timestamp: Self.isoTimestamp(), hostname: ProcessInfo.processInfo.hostName)
        try writer.writeReport(report)
    }

    static func printSummary(_ suites: [RunReport.Suite], writer: ReportWriter) {
        var out = "\n"
        for suite in suites {
            let r = suite.result
            out += "\(r.targetName): \(r.executions) executions, "
            if r.checks == nil { out += "\(Int(r.executionsPerSecond.rounded()))/s, " }
            out += r.findings.isEmpty ? "no findings\n" : "\(r.findings.count) finding\(r.findings.count == 1 ? "" : "s")\n"
            var shown: [FindingKind: Int] = [:]
            for (index, record) in r.findings.enumerated() {
                shown[record.finding.kind, default: 0] += 1
                guard shown[record.finding.kind]! <= Self.findingsShownPerKind else { continue }
                out += "  \(record.finding.kind.rawValue): \(record.finding.signature) (\(record.hits)x)\n"
                if let because = suite.expectation(for: record.finding.key) { out += "    expected: \(because)\n" }
                if index < suite.reproducers.count, let path = suite.reproducers[index].minimized {
                    out += "    reproducer: \(path)\n"
                }
            }
            for (kind, count) in shown.sorted(by: { $0.key < $1.key }) where count > Self.findingsShownPerKind {
                out += "  … and \(count - Self.findingsShownPerKind) more \(kind.rawValue) findings (junit.xml and summary.json list them all)\n"
            }
            let undecided = r.undecided.values.reduce(0, +)
            if undecided > 0, let top = r.undecided.max(by: { $0.value < $1.value }) {
                out +=
                    "  note: the validator could not decide \(undecided) input\(undecided == 1 ? "" : "s") (most often: \(top.key)); only crashes, hangs and memory were checked on them\n"
            }
        }
        let expected = suites.reduce(0) { $0 + $1.result.findings.count - $1.newFindings.count }
        if expected > 0 {
            let new = suites.reduce(0) { $0 + $1.newFindings.count }
            out += "\n\(new) new finding\(new == 1 ? "" : "s"), \(expected) expected (known findings and the regression store)\n"
        }
        out += "\nReport: \(writer.folder.path)/junit.xml (summary.json and findings/ beside it)\n"
        FileHandle.standardOutput.write(Data(out.utf8))
    }

    /// How many findings of one kind the summary prints in full.
    static let findingsShownPerKind = 10

    static func isoTimestamp() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return formatter.string(from: Date())
    }
}

/// One campaign, ready to run, plus what the report needs to know about it.
struct CampaignPlan {
    var campaign: Campaign
    /// How the report tells the user to replay a finding.
    var replay: ReplayDescription
    var warnings: [String]
    /// The schema file the checks come from, if any, for the report's source locations.
    var source: String?
    /// The input files' extension.
    var fileExtension = ""

    /// The report's suite for the campaign's result, expected findings marked.
    func suite(of result: CampaignResult, known: KnownFindings?) -> RunReport.Suite {
        var suite = RunReport.Suite(result: result, replay: replay)
        suite.source = source
        suite.markExpected(by: known)
        return suite
    }

    /// Writes the inputs that showed new behaviour into `folder/<target>/`, each under a name
    /// from its content, for the next run's corpus (`--corpus-output`). Only those the
    /// validator calls valid: they become seeds, and a format's catalogue assumes valid seeds
    /// (a future version made of a corrupt file must be called corrupt first, not
    /// unsupported-version).
    func saveInterestingInputs(to folder: String) throws(CorruptFuzzError) {
        let store = RegressionFolder(root: folder)
        for input in campaign.interestingInputs {
            guard let bytes = input.bytes, campaign.validator?.validate(bytes).isValid ?? true else { continue }
            try store.save(bytes, prefix: "input", fileExtension: fileExtension, for: campaign.targetName)
        }
    }

    /// Maps the command line into a ``CampaignSpec`` and assembles it.
    static func make(
        target: String, worker: Bool = false, corpus: String?, options: TargetOptions, configuration: FuzzConfiguration, name: String? = nil,
        regressions: RegressionFolder? = nil
    ) throws -> CampaignPlan {
        try make(
            target: target, worker: worker, corpus: corpus, format: try options.resolvedFormat(), appValidator: options.validator,
            configuration: configuration, name: name, regressions: regressions)
    }

    /// A campaign of `target` on `corpus` (or seeds the format generates), labelled by the app's
    /// validator command when given, else by the format's.
    static func make(
        target: String, worker: Bool = false, corpus: String?, format: ResolvedFormat?, appValidator: String?,
        configuration: FuzzConfiguration, name: String? = nil, regressions: RegressionFolder? = nil
    ) throws -> CampaignPlan {
        let command = try TargetCommand(target)
        let validator = try appValidator.map { line in
            try ExternalValidator(
                command: try TargetCommand(line), limits: configuration.limits, slots: configuration.jobs,
                fileExtension: format?.format.fileExtension ?? "")
        }
        let spec = CampaignSpec(
            target: worker ? .worker(command) : .command(command), name: name, format: format?.format, validator: validator,
            seeds: corpus.map { .corpus($0) } ?? .generated(count: CampaignSpec.generatedSeedCount), configuration: configuration,
            regressions: try regressions?.inputs(for: name ?? command.name) ?? [])
        let assembled = try spec.assemble()
        var selection = appValidator.map { [["--validator", $0]] } ?? []
        selection += format?.replayArguments ?? []
        let replay = ReplayDescription(
            tool: ExecutablePath.current, targetCommand: command.line, selection: selection, limits: configuration.limits,
            fileExtension: assembled.fileExtension)
        return CampaignPlan(
            campaign: assembled.campaign, replay: replay,
            warnings: (format?.warnings ?? []) + assembled.warnings, source: format?.source, fileExtension: assembled.fileExtension)
    }
}
