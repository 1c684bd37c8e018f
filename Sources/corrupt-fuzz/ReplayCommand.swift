import ArgumentParser
import CorruptFuzzCore
import CorruptFuzzReporting
import CorruptFuzzRunner
import Foundation

/// `corrupt-fuzz replay`: runs saved inputs once and says whether each is still a finding.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Run reproducer files against a target once; exit 1 if any is a finding.",
        discussion: """
            A file that does not exist or cannot be read is an error (exit status 2), so that a typo in a CI step \
            fails it; --missing-file replays the missing-file input on purpose (the target gets a path that does \
            not exist and must reject it as not-found). With --known-findings, findings the file lists are expected: the exit status is 1 only for others \
            (a regression store replayed on every pull request).
            """)

    @OptionGroup var targetOptions: TargetOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A known-findings file: findings it lists are shown as expected and do not make the exit status 1.", valueName: "file"))
    var knownFindings: String?

    @Option(
        name: .long, help: ArgumentHelp("The target's name, for [TARGET] sections of the known-findings file (default: the command's name).", valueName: "name")
    )
    var name: String?

    @Flag(name: .long, help: "Also replay a missing file (a finding's reproducer that is no file): the target gets a path that does not exist.")
    var missingFile = false

    @Argument(help: ArgumentHelp("Reproducer files.", valueName: "file"))
    var files: [String] = []

    func validate() throws {
        if targetOptions.target == nil { throw ValidationError("replay needs --target") }
        if files.isEmpty, !missingFile { throw ValidationError("replay needs at least one file (or --missing-file)") }
        for file in files { try checkReadableFile(file, role: "reproducer") }
    }

    func run() throws {
        var anyFinding = false
        do {
            let command = try TargetCommand(targetOptions.target!)
            let known = try knownFindings.map { path throws(CorruptFuzzError) in try KnownFindings(contentsOf: path) }
            let replay = try Replay(
                target: command, format: try targetOptions.resolvedFormat()?.format, validator: try targetOptions.validator.map { try TargetCommand($0) },
                limits: targetOptions.limits, files: files)
            for file in (missingFile ? [nil] : []) + files.map(Optional.some) {
                let entry = try file.map { path throws(CorruptFuzzError) in try replay.replay(path) } ?? replay.replayMissingFile()
                let judgement = entry.judgement
                var lines = ["\(entry.path): \(judgement.execution.outcome.summary)"]
                if case .invalid? = judgement.verdict, let verdict = judgement.verdict {
                    lines.append("  validator: \(verdict)")
                }
                var unexpected = false
                if let finding = judgement.finding {
                    if let entry = known?.entry(for: finding.key, target: name ?? command.name) {
                        lines.append("  expected finding: \(finding.kind.rawValue): \(finding.signature) (listed in \(entry.location))")
                    } else {
                        anyFinding = true
                        unexpected = true
                        lines.append("  finding: \(finding.kind.rawValue): \(finding.signature)")
                    }
                } else {
                    lines.append("  no finding")
                }
                let stderr = String(decoding: judgement.execution.stderr.prefix(1200), as: UTF8.self)
                if unexpected, !stderr.isEmpty {
                    lines.append("  stderr:")
                    lines += stderr.split(separator: "\n").prefix(15).map { "    \($0)" }
                }
                print(lines.joined(separator: "\n"))
            }
        } catch let error as CorruptFuzzError {
            throw configurationError(error)
        }
        if anyFinding { throw ExitCode(1) }
    }
}
