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
            Report folders (each holds report.json) become one report folder under --reports: one
            junit.xml and summary.json, findings with the same kind and signature merged and
            their hits added up, reproducers saved again. Corpus folders (with --corpus-output)
            become one folder holding each distinct file once. Exit status: 0 no findings, 1
            findings, 2 an unusable folder.
            """)

    @Argument(help: ArgumentHelp("Report folders, or corpus folders with --corpus-output.", valueName: "dir"))
    var folders: [String]

    @Option(name: .long, help: ArgumentHelp("Parent folder of the merged report.", valueName: "dir"))
    var reports: String = "Reports"

    @Option(name: .long, help: ArgumentHelp("Merge corpus folders into this folder instead.", valueName: "dir"))
    var corpusOutput: String?

    func validate() throws {
        if folders.isEmpty { throw ValidationError("give at least one folder to merge") }
    }

    func run() throws {
        if let corpusOutput {
            do throws(CorruptFuzzError) {
                let (kept, duplicates) = try CorpusMerge.merge(folders, into: corpusOutput)
                print("\(corpusOutput): \(kept) files (\(duplicates) duplicates left out)")
            } catch {
                throw configurationError(error)
            }
            return
        }
        let merged: RunReport
        let writer: ReportWriter
        do throws(CorruptFuzzError) {
            let inputs = try folders.map { folder throws(CorruptFuzzError) in try ReportWriter.readReport(in: folder) }
            var suites = ReportMerge.suites(of: inputs)
            writer = try ReportWriter(
                root: reports, runID: "merged-" + ReportWriter.makeRunID(seed: inputs.first?.suites.first?.result.configuration.seed ?? 0))
            try writer.saveReproducers(&suites)
            merged = RunReport(
                runID: writer.runID, folder: writer.folder.path, suites: suites, timestamp: RunCommand.isoTimestamp(),
                hostname: ProcessInfo.processInfo.hostName)
            try writer.writeReport(merged)
        } catch {
            throw configurationError(error)
        }
        for suite in merged.suites {
            let r = suite.result
            print("\(r.targetName): \(r.executions) executions, \(r.findings.count) finding\(r.findings.count == 1 ? "" : "s")")
        }
        print("\nReport: \(writer.folder.appendingPathComponent("junit.xml").path) (summary.json and findings/ beside it)")
        throw merged.findingCount > 0 ? ExitCode(1) : ExitCode.success
    }
}
