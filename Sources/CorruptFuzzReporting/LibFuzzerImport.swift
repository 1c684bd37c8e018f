import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation

/// Turns the inputs libFuzzer saved (`crash-…`, `leak-…`, `timeout-…`, `oom-…` files) into
/// findings, a report folder and regression-store entries: what `corrupt-fuzz import` does.
public enum LibFuzzerImport {
    /// What an import made.
    public struct Imported: Sendable {
        public var report: RunReport
        /// The regression-store files written.
        public var stored: [String]
    }

    /// Imports `artifacts` (files, or folders holding them).
    /// - Parameters:
    ///   - logs: libFuzzer's output (or the bridge's findings log): each file gets the kind and
    ///     signature it printed; without logs, the kind its name gives.
    ///   - name: The target's name (default: the one the bridge printed, else `libfuzzer`).
    ///   - regressions: The regression store to add each distinct finding's input to, if any.
    ///   - fuzzer: The fuzzer binary, for replay commands.
    ///   - reports: The parent folder of the report.
    ///   - known: Findings to mark as expected.
    /// - Throws: ``CorruptFuzzError`` for an unreadable file or log, or a report that cannot be
    ///   written.
    public static func run(
        artifacts: [String], logs log: [String], name: String?, regressions: String?, fileExtension: String, fuzzer: String?, reports: String,
        known: KnownFindings?
    ) throws(CorruptFuzzError) -> Imported {
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
        if let regressions {
            let store = RegressionFolder(root: regressions)
            for record in records {
                if let bytes = record.finding.input.bytes {
                    saved.append(try store.save(bytes, kind: record.finding.kind, fileExtension: fileExtension, for: target))
                }
            }
        }
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
        let report = RunReport(
            runID: writer.runID, folder: writer.folder.path, suites: suites, timestamp: ReportWriter.isoTimestamp(),
            hostname: ProcessInfo.processInfo.hostName)
        try writer.writeReport(report)
        return Imported(report: report, stored: saved)
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
