import ArgumentParser
import CorruptFuzzCore
import CorruptFuzzReporting
import CorruptFuzzRunner
import Foundation

/// `corrupt-fuzz merge`: combines the report folders of shards (or of any runs of the same
/// targets) into one report, or corpus folders into one corpus without duplicates.
struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Combine report folders (from --shard runs) into one report, or corpus folders into one deduplicated corpus.",
        discussion: """
            Report folders (each holds report.json, or, left by a run killed before its report,
            the findings it saved in found/ as it found them) become one report folder under --reports: one
            junit.xml and summary.json, findings with the same kind and signature merged and
            their hits added up, reproducers saved again; a finding one report marked as
            expected stays expected, and --known-findings marks more. Corpus folders (with
            --corpus-output) become one folder holding each distinct file once; with --target too,
            the smallest set of files that keeps every distinct behaviour of the target (files
            that are findings left out), like afl-cmin. Exit status: 0 no new findings, 1 new
            findings, 2 an unusable folder.
            """)

    @Argument(help: ArgumentHelp("Report folders, or corpus folders with --corpus-output.", valueName: "dir"))
    var folders: [String]

    @Option(name: .long, help: ArgumentHelp("Parent folder of the merged report.", valueName: "dir"))
    var reports: String = "Reports"

    @Option(name: .long, help: ArgumentHelp("Merge corpus folders into this folder instead.", valueName: "dir"))
    var corpusOutput: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A known-findings file: findings it lists are reported as expected and do not make the exit status 1.", valueName: "file"))
    var knownFindings: String?

    /// With --corpus-output: the target whose behaviours the minimized corpus keeps.
    @OptionGroup(title: "Minimizing a corpus (with --corpus-output)") var targetOptions: TargetOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Write the new findings as known-findings lines to this file (what to add to the known-findings file to accept them).",
            valueName: "file"))
    var newFindingsFile: String?

    func validate() throws {
        if folders.isEmpty { throw ValidationError("give at least one folder to merge") }
        if corpusOutput != nil, knownFindings != nil || newFindingsFile != nil {
            throw ValidationError("--known-findings and --new-findings-file apply to reports, not to --corpus-output")
        }
        if corpusOutput == nil, targetOptions.target != nil || targetOptions.validator != nil {
            throw ValidationError("--target and --validator minimize a corpus: they need --corpus-output")
        }
    }

    func run() throws {
        if let corpusOutput, let target = targetOptions.target {
            let minimized = try orExit { () throws(CorruptFuzzError) in
                let command = try TargetCommand(target)
                let files = folders.flatMap { folder in
                    ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).map { (folder as NSString).appendingPathComponent($0) }
                }
                let replay = try Replay(
                    target: command, format: try targetOptions.resolvedFormat()?.format,
                    validator: try targetOptions.validator.map { command throws(CorruptFuzzError) in try TargetCommand(command) }, limits: targetOptions.limits,
                    files: files, coverage: true)
                return try CorpusMerge.minimize(folders, into: corpusOutput, replay: replay)
            }
            let edges = minimized.edges.map { " and \($0) edges" } ?? ""
            print(
                "\(corpusOutput): \(minimized.kept) files keep the \(minimized.behaviours) behaviours\(edges) of \(minimized.inputs) distinct files"
                    + " (\(minimized.duplicates) duplicates and \(minimized.findings) findings left out)")
            return
        }
        if let corpusOutput {
            let (kept, duplicates) = try orExit { () throws(CorruptFuzzError) in try CorpusMerge.merge(folders, into: corpusOutput) }
            print("\(corpusOutput): \(kept) files (\(duplicates) duplicates left out)")
            return
        }
        let merged = try orExit { () throws(CorruptFuzzError) in
            try ReportMerge.merge(
                folders, into: reports, known: try knownFindings.map { path throws(CorruptFuzzError) in try KnownFindings(contentsOf: path) },
                newFindingsFile: newFindingsFile, note: { FileHandle.standardError.write(Data("note: \($0)\n".utf8)) })
        }
        for suite in merged.suites {
            let r = suite.result
            let expected = r.findings.count - suite.newFindings.count
            print(
                "\(r.targetName): \(r.executions) executions, \(r.findings.count) finding\(r.findings.count == 1 ? "" : "s")"
                    + (expected > 0 ? " (\(expected) expected)" : ""))
            for record in suite.newFindings { print("  new: \(record.finding.kind.rawValue): \(record.finding.signature) (\(record.hits)x)") }
        }
        print("\nReport: \(merged.folder)/junit.xml (summary.json and findings/ beside it)")
        throw merged.newFindingCount > 0 ? ExitCode(1) : ExitCode.success
    }
}
