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
            A path that does not exist is replayed as a missing file, which must be rejected as not-found. \
            With --known-findings, findings the file lists are expected: the exit status is 1 only for others \
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

    @Argument(help: ArgumentHelp("Reproducer files.", valueName: "file"))
    var files: [String]

    func validate() throws {
        if targetOptions.target == nil { throw ValidationError("replay needs --target") }
        if files.isEmpty { throw ValidationError("replay needs at least one file") }
    }

    func run() throws {
        var anyFinding = false
        do {
            let command = try TargetCommand(targetOptions.target!)
            let known = try knownFindings.map { path throws(CorruptFuzzError) in try KnownFindings(contentsOf: path) }
            let limits = targetOptions.limits
            let format = try targetOptions.resolvedFormat()
            let fileExtension = format.map(\.format.fileExtension).flatMap { $0.isEmpty ? nil : $0 } ?? (files[0] as NSString).pathExtension
            let executor = try ProcessExecutor(command: command, limits: limits, slots: 1, fileExtension: fileExtension)
            // The app's validator labels when given, else the format's, as in run.
            let validator: (any Validator)? =
                try targetOptions.validator.map {
                    try ExternalValidator(command: try TargetCommand($0), limits: limits, slots: 1, fileExtension: fileExtension)
                } ?? format?.format.validator
            let oracle = Oracle()
            for file in files {
                let bytes = FileManager.default.fileExists(atPath: file) ? try Self.read(file) : nil
                let input = TestInput(bytes: bytes, mutations: ["replay"], seedName: file)
                let execution = try executor.execute(input, slot: 0)
                let verdict = oracle.needsVerdict(for: execution.outcome, input: input) ? validator?.validate(bytes) : nil
                var lines = ["\(file): \(execution.outcome.summary)"]
                if case .invalid? = verdict, let verdict {
                    lines.append("  validator: \(verdict)")
                }
                if let finding = oracle.judge(input, execution: execution, verdict: verdict) {
                    if let entry = known?.entry(for: finding.key, target: name ?? command.name) {
                        lines.append("  expected finding: \(finding.kind.rawValue): \(finding.signature) (listed in \(entry.location))")
                    } else {
                        anyFinding = true
                        lines.append("  finding: \(finding.kind.rawValue): \(finding.signature)")
                    }
                } else {
                    lines.append("  no finding")
                }
                let stderr = String(decoding: execution.stderr.prefix(1200), as: UTF8.self)
                if lines.count > 1, lines[lines.count - 1].hasPrefix("  finding"), !stderr.isEmpty {
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

    static func read(_ path: String) throws(CorruptFuzzError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CorruptFuzzError(.unusableCorpus, "cannot read \(path)")
        }
        return [UInt8](data)
    }
}
