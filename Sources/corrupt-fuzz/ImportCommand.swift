import ArgumentParser
import CorruptFuzzCore
import CorruptFuzzReporting
import CorruptFuzzRunner
import Foundation

/// `corrupt-fuzz import`: turns the inputs libFuzzer saved (crash-, leak-, timeout-, oom-
/// files) into findings and regression-store entries.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Turn libFuzzer's saved inputs (crash-*, leak-*, timeout-*, oom-*) into findings, a report and regression-store entries.",
        discussion: """
            With --log (libFuzzer's output), each file gets the kind and signature the libFuzzer bridge printed \
            before it aborted (silent-acceptance, wrong-reason, xxe…), or the crash's runtime or sanitizer message; \
            without it, the kind its name gives. Each file is copied into the regression store under \
            <target>/<kind>-<hash>.<ext>, so `run --regressions` and CorruptFuzzTesting replay it first from then on, \
            and a report folder is written as `run` writes one. Exit status: 0 no new findings, 1 new findings \
            (not listed by --known-findings), 2 unusable files.
            """)

    @Argument(help: ArgumentHelp("Files libFuzzer saved (folders: every crash-, leak-, timeout- and oom- file in them).", valueName: "file"))
    var artifacts: [String]

    @Option(
        name: .long,
        help: ArgumentHelp(
            "libFuzzer's output (standard error) that saved them, or the bridge's CORRUPT_FUZZ_FINDINGS_LOG file; may be given more than once.",
            valueName: "file"))
    var log: [String] = []

    @Option(name: .long, help: ArgumentHelp("The target's name (default: the one the bridge printed, else 'libfuzzer').", valueName: "name"))
    var name: String?

    @Option(name: .long, help: ArgumentHelp("The regression store to add them to.", valueName: "dir"))
    var regressions: String = "Corpus/regressions"

    @Flag(name: .long, help: "Do not add them to the regression store.")
    var noRegressions = false

    @Option(name: .long, help: ArgumentHelp("The extension of the saved files, e.g. habits.", valueName: "ext"))
    var fileExtension: String = ""

    @Option(name: .long, help: ArgumentHelp("The fuzzer binary, for replay commands (the fuzzer runs a file given as argument).", valueName: "path"))
    var fuzzer: String?

    @Option(name: .long, help: ArgumentHelp("Parent folder of the report.", valueName: "dir"))
    var reports: String = "Reports"

    @Option(name: .long, help: ArgumentHelp("A known-findings file: findings it lists are expected.", valueName: "file"))
    var knownFindings: String?

    func validate() throws {
        if artifacts.isEmpty { throw ValidationError("give the files libFuzzer saved (or the folders holding them)") }
    }

    func run() throws {
        let report: RunReport
        let stored: [String]
        do throws(CorruptFuzzError) {
            let known = try knownFindings.map { path throws(CorruptFuzzError) in try KnownFindings(contentsOf: path) }
            let parsed =
                log.isEmpty ? nil : LibFuzzerLog(parsing: try log.map { path throws(CorruptFuzzError) in try Self.text(of: path) }.joined(separator: "\n"))
            let files = try Self.expand(artifacts)
            if files.isEmpty { throw CorruptFuzzError(.invalidArgument, "no crash-, leak-, timeout- or oom- files in \(artifacts.joined(separator: ", "))") }
            var records: [FindingRecord] = []
            var paths: [String] = []
            var targetName = name
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { throw CorruptFuzzError(.unusableCorpus, "cannot read \(file)") }
                let base = (file as NSString).lastPathComponent
                let artifact = parsed?.artifact(named: base, bytes: [UInt8](data)) ?? LibFuzzerLog.describe(name: base)
                targetName = targetName ?? artifact.target
                let input = TestInput(bytes: [UInt8](data), mutations: ["libfuzzer"], seedName: file)
                let execution = Execution(outcome: artifact.outcome, stderr: Array(artifact.report.utf8.suffix(8192)))
                let finding = Finding(
                    kind: artifact.kind, signature: artifact.signature, detail: artifact.detail, input: input, execution: execution, verdict: nil)
                paths.append(file)
                if let index = records.firstIndex(where: { $0.finding.key == finding.key }) {
                    records[index].hits += 1
                } else {
                    records.append(FindingRecord(finding: finding, hits: 1, firstExecution: records.count + 1, firstSeconds: 0))
                }
            }
            let target = targetName ?? "libfuzzer"
            var saved: [String] = []
            if !noRegressions {
                let store = RegressionFolder(root: regressions)
                for record in records {
                    if let bytes = record.finding.input.bytes {
                        saved.append(try store.save(bytes, kind: record.finding.kind, fileExtension: fileExtension, for: target))
                    }
                }
            }
            stored = saved
            var result = CampaignResult(
                targetName: target, targetCommand: fuzzer ?? "libFuzzer", validatorName: nil, configuration: FuzzConfiguration(), seedNames: paths)
            result.executions = files.count
            result.findings = records
            result.stopReason = .imported
            var suite = RunReport.Suite(
                result: result,
                replay: ReplayDescription(tool: ExecutablePath.current, targetCommand: fuzzer ?? "libFuzzer", fileExtension: fileExtension))
            suite.replay.directExecutable = fuzzer
            suite.markExpected(by: known)
            let writer = try ReportWriter(root: reports, runID: "imported-" + ReportWriter.makeRunID(seed: 0))
            var suites = [suite]
            try writer.saveReproducers(&suites)
            report = RunReport(
                runID: writer.runID, folder: writer.folder.path, suites: suites, timestamp: ReportWriter.isoTimestamp(),
                hostname: ProcessInfo.processInfo.hostName)
            try writer.writeReport(report)
        } catch {
            throw configurationError(error)
        }
        let suite = report.suites[0]
        print("\(suite.result.targetName): \(suite.result.executions) files, \(suite.result.findings.count) distinct findings")
        for record in suite.result.findings {
            let expected = suite.expectation(for: record.finding.key).map { " (expected: \($0))" } ?? ""
            print("  \(record.finding.kind.rawValue): \(record.finding.signature) (\(record.hits)x)\(expected)")
        }
        for path in stored { print("regression store: \(path)") }
        print("\nReport: \(report.folder)/junit.xml (summary.json and findings/ beside it)")
        throw report.newFindingCount > 0 ? ExitCode(1) : ExitCode.success
    }

    /// The files given, folders replaced by the libFuzzer artifacts in them.
    static func expand(_ paths: [String]) throws(CorruptFuzzError) -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CorruptFuzzError(.invalidArgument, "\(path) does not exist")
            }
            if isDirectory.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                files += names.sorted().filter { LibFuzzerLog.kind(ofArtifact: $0) != nil }.map { (path as NSString).appendingPathComponent($0) }
            } else {
                files.append(path)
            }
        }
        return files
    }

    static func text(of path: String) throws(CorruptFuzzError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { throw CorruptFuzzError(.invalidArgument, "cannot read the log \(path)") }
        return String(decoding: data, as: UTF8.self)
    }
}
