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
        let imported: LibFuzzerImport.Imported
        do throws(CorruptFuzzError) {
            imported = try LibFuzzerImport.run(
                artifacts: artifacts, logs: log, name: name, regressions: noRegressions ? nil : regressions, fileExtension: fileExtension, fuzzer: fuzzer,
                reports: reports, known: try knownFindings.map { path throws(CorruptFuzzError) in try KnownFindings(contentsOf: path) })
        } catch {
            throw configurationError(error)
        }
        let report = imported.report
        let suite = report.suites[0]
        print("\(suite.result.targetName): \(suite.result.executions) files, \(suite.result.findings.count) distinct findings")
        for record in suite.result.findings {
            let expected = suite.expectation(for: record.finding.key).map { " (expected: \($0))" } ?? ""
            print("  \(record.finding.kind.rawValue): \(record.finding.signature) (\(record.hits)x)\(expected)")
        }
        for path in imported.stored { print("regression store: \(path)") }
        print("\nReport: \(report.folder)/junit.xml (summary.json and findings/ beside it)")
        throw report.newFindingCount > 0 ? ExitCode(1) : ExitCode.success
    }
}
