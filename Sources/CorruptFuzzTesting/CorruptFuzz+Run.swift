import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation

/// How to start this test binary again so that it runs only the current test.
struct Rerun: Sendable {
    var arguments: [String]
}

/// The engine behind every check: regressions first, then seeds, the format's catalogue and
/// havoc, judged by the oracle, minimized, saved to the regression store.
func runCheck<Value>(
    id: String, format: any FuzzFormat, seeds: [Data], options: CorruptFuzzOptions, filePath: String,
    rerun: Rerun?, replayHint: String,
    load: @escaping @Sendable (Data) throws -> Value, validate: (@Sendable (Value) -> String?)?
) -> (CorruptFuzzReport, warnings: [String]) {
    if let served = WorkerMode.servedCheck {
        if served == id { WorkerMode.serve(load, validate: validate, digest: format.usesOutsideTraps) }
        // A worker for another check: this one does not run here.
        return (CorruptFuzzReport(id: id, findings: [], executions: 0, seconds: 0, seed: 0, inputSequenceHash: 0), [])
    }
    var warnings: [String] = []
    let seed = options.seed ?? ProcessInfo.processInfo.environment["CORRUPT_FUZZ_SEED"].flatMap(UInt64.init) ?? 0
    var configuration = FuzzConfiguration()
    configuration.seed = seed
    configuration.maxRuns = options.runs
    configuration.jobs = options.isolation == .process ? options.jobs : 1
    configuration.limits = ProcessExecutor.Limits(
        timeoutMilliseconds: Int(options.timeout.components.seconds * 1000 + options.timeout.components.attoseconds / 1_000_000_000_000_000),
        memoryLimit: options.memoryLimit)
    configuration.minimizeMaxSeconds = 5
    // A test run stays quick: the 100 MB entries of the hostile catalogue are for the CLI.
    configuration.maxCatalogueInputLength = 16 << 20

    var seedFiles = seeds.enumerated().map { Seed(name: "seed-\($0.offset)", bytes: [UInt8]($0.element)) }
    if seedFiles.isEmpty {
        var rng = FuzzRNG(seed: seed)
        seedFiles = (0..<8).map { Seed(name: "generated-\($0)", bytes: format.generate(using: &rng)) }
    }
    let store = RegressionStore(directory: options.regressions ?? RegressionStore.defaultDirectory(for: id, filePath: filePath))
    let regressions = store.load()

    let executor: any Executor
    if options.isolation == .process, let rerun {
        do {
            executor = try WorkerExecutor(
                path: RegressionStore.executablePath, arguments: rerun.arguments,
                // Symbolicating a backtrace of a whole test binary takes most of a second; the
                // runtime's "Fatal error" line identifies the crash. Set SWIFT_BACKTRACE to get frames.
                environment: [
                    WorkerMode.variable: id,
                    "SWIFT_BACKTRACE": ProcessInfo.processInfo.environment["SWIFT_BACKTRACE"] ?? "enable=no",
                ],
                limits: configuration.limits, slots: configuration.jobs)
        } catch {
            warnings.append("process isolation unavailable (\(error)); running in-process")
            executor = InProcessExecutor { runLoader(load, validate: validate, bytes: $0, digest: format.usesOutsideTraps) }
        }
    } else {
        if options.isolation == .process {
            warnings.append("process isolation needs a Swift Testing or XCTest test to re-run; running in-process")
        }
        executor = InProcessExecutor { runLoader(load, validate: validate, bytes: $0, digest: format.usesOutsideTraps) }
    }
    let campaign = Campaign(
        executor: executor, targetName: id, targetCommand: id, takesPath: false, validator: format.validator,
        seeds: seedFiles, configuration: configuration, structure: format, regressions: regressions)
    let result: CampaignResult
    do {
        result = try campaign.run()
    } catch {
        warnings.append("the check could not run: \(error)")
        return (CorruptFuzzReport(id: id, findings: [], executions: 0, seconds: 0, seed: seed, inputSequenceHash: 0), warnings)
    }
    var findings: [CorruptFuzzFinding] = []
    for record in result.findings {
        var path: String?
        if let bytes = record.minimized ?? record.finding.input.bytes {
            path = store.save(bytes, kind: record.finding.kind, fileExtension: format.fileExtension)
        }
        findings.append(CorruptFuzzFinding(
            kind: record.finding.kind, signature: record.finding.signature, detail: record.finding.detail, hits: record.hits,
            reproducer: path, replay: replayHint + " (seed \(seed); the regression store replays the reproducer first)",
            input: record.finding.input.origin))
    }
    return (CorruptFuzzReport(
        id: id, findings: findings, executions: result.executions, seconds: result.fuzzSeconds, seed: seed,
        inputSequenceHash: result.inputSequenceHash), warnings)
}
