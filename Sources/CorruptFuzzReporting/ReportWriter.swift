import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation

/// Writes a run's report folder: reproducer files first (so nothing found is lost if a later
/// step fails), then junit.xml, results.sarif, summary.json and report.json (everything, for
/// `corrupt-fuzz merge`), each written to a temporary file and renamed (``AtomicFile``). Each
/// finding's input is in `found/` from the moment it was found (``FoundFolder``).
///
/// ```
/// Reports/20261122-143000-seed42/
///   junit.xml  results.sarif  summary.json  report.json
///   findings/habit-loader-naive/crash-1/minimized.habits  original.habits  finding.txt  replay
///   found/habit-loader-naive/campaign.json  crash-8c1f0e2d9a3b4c5d/input.habits  finding.json  replay
/// ```
public struct ReportWriter: Sendable {
    /// The parent folder, e.g. `Reports`.
    public let root: URL
    /// The run's own folder inside it.
    public let folder: URL
    public let runID: String
    /// The folder replay commands are written relative to: where the run started (normally
    /// the repository root). Each finding folder also gets a `replay` script that works from
    /// there wherever the report folder is copied.
    public let workingDirectory: String

    /// Creates the run's folder under `root`, failing early when it cannot be written.
    /// - Throws: ``CorruptFuzzError`` (`reportWriteFailed`).
    public init(root: String, runID: String, workingDirectory: String = FileManager.default.currentDirectoryPath) throws(CorruptFuzzError) {
        self.root = URL(fileURLWithPath: root).standardizedFileURL
        self.runID = runID
        self.workingDirectory = workingDirectory
        folder = self.root.appendingPathComponent(runID)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let probe = folder.appendingPathComponent(".write-test")
            try Data().write(to: probe)
            try FileManager.default.removeItem(at: probe)
        } catch {
            throw CorruptFuzzError(.reportWriteFailed, "cannot write to the reports folder \(root): \(Self.describe(error))")
        }
    }

    /// A run ID from the time and seed: `20261122-143000-seed42`.
    public static func makeRunID(date: Date = Date(), seed: UInt64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return "\(formatter.string(from: date))-seed\(seed)"
    }

    /// Saves every finding's files and fills in `reproducers` for each suite, with the
    /// command that replays each (from the suite's ``ReplayDescription``).
    public func saveReproducers(_ suites: inout [RunReport.Suite]) throws(CorruptFuzzError) {
        for s in suites.indices {
            let suite = suites[s]
            let ext = suite.replay.fileExtension
            let suffix = ext.isEmpty ? "" : ".\(ext)"
            let targetFolder = folder.appendingPathComponent("findings").appendingPathComponent(Self.slug(suite.result.targetName))
            // Replay commands relative to the folder the run started in (see ``workingDirectory``).
            let relative = suite.replay.relative(to: workingDirectory)
            let relate = PathRelativizer(base: workingDirectory)
            var counters: [FindingKind: Int] = [:]
            var saved: [RunReport.SavedReproducer] = []
            // The schema the checks come from, read once, to point each finding at its rule.
            let sourceText = suite.source.flatMap { FileManager.default.contents(atPath: $0) }.map { String(decoding: $0, as: UTF8.self) }
            for record in suite.result.findings {
                let kind = record.finding.kind
                counters[kind, default: 0] += 1
                let dir = targetFolder.appendingPathComponent("\(kind.rawValue)-\(counters[kind]!)")
                var minimizedPath: String?
                var originalPath: String?
                var replayPath = "/nonexistent/corrupt-fuzz-missing-file\(suffix)"
                try create(dir)
                if let original = record.finding.input.bytes {
                    let originalURL = dir.appendingPathComponent("original\(suffix)")
                    let minimizedURL = dir.appendingPathComponent("minimized\(suffix)")
                    try write(Data(original), to: originalURL)
                    try write(Data(record.minimized ?? original), to: minimizedURL)
                    originalPath = originalURL.path
                    minimizedPath = minimizedURL.path
                    replayPath = minimizedURL.path
                }
                var variantInputs: [Int: String] = [:]
                for (index, variant) in (record.variants ?? []).enumerated() where index > 0 {
                    guard let bytes = variant.input else { continue }
                    let url = dir.appendingPathComponent("variant-\(index + 1)\(suffix)")
                    try write(Data(bytes), to: url)
                    variantInputs[index] = url.path
                }
                for attachment in record.finding.attachments ?? [] {
                    // A name may have folders (`state/notes.tsv`): each part made safe.
                    let parts = attachment.name.split(separator: "/").map { Self.slug(String($0)) }
                    var url = dir
                    for part in parts { url.appendPathComponent(part) }
                    if parts.count > 1 { try create(url.deletingLastPathComponent()) }
                    try write(Data(attachment.bytes), to: url)
                }
                let replay: String
                let scriptCommand: String
                if let arguments = record.finding.replayArguments {
                    replay = relative.command(with: arguments)
                    scriptCommand = replay
                } else if minimizedPath == nil {
                    replay = relative.command(replayingMissingFile: replayPath)
                    scriptCommand = replay
                } else {
                    replay = relative.command(replaying: relate.word(replayPath))
                    // The script replays the reproducer beside it, wherever the folder is now.
                    scriptCommand = relative.command(replaying: "@REPRODUCER@").replacingOccurrences(
                        of: "@REPRODUCER@", with: "\"$here/minimized\(suffix)\"")
                }
                try writeReplayScript(in: dir, command: scriptCommand)
                var item = RunReport.SavedReproducer(minimized: minimizedPath, original: originalPath, replayCommand: replay)
                item.variantInputs = variantInputs.isEmpty ? nil : variantInputs
                if let source = suite.source, let sourceText,
                    let line = SourceLocator.line(of: record.finding, file: source, text: sourceText)
                {
                    item.location = "\(source):\(line)"
                }
                let text = JUnitXMLReporter().failureBody(record, saved: item, seed: suite.result.configuration.seed)
                try write(Data((text + "\n").utf8), to: dir.appendingPathComponent("finding.txt"))
                saved.append(item)
            }
            suites[s].reproducers = saved
            try saveSlowInputs(of: suite)
        }
    }

    /// The folder a suite's slow inputs are saved in: `slow/<target>/`.
    public func slowFolder(of suite: RunReport.Suite) -> URL {
        folder.appendingPathComponent("slow").appendingPathComponent(Self.slug(suite.result.targetName))
    }

    /// Saves the inputs that missed the deadline once and finished when run again
    /// (``CampaignResult/slowInputsKept``) as `slow/<target>/slow-N.EXT`, with `slow.txt`
    /// saying how each was made and what its second run did.
    func saveSlowInputs(of suite: RunReport.Suite) throws(CorruptFuzzError) {
        guard let slow = suite.result.slowInputsKept, !slow.isEmpty else { return }
        let ext = suite.replay.fileExtension
        let dir = slowFolder(of: suite)
        try create(dir)
        var lines = [
            "Inputs that missed the \(suite.result.configuration.limits.timeoutMilliseconds) ms deadline once and finished when run again with a longer one: slow, not hangs here (perhaps hangs on a slower machine). Replay one with:",
            "  " + suite.replay.relative(to: workingDirectory).command(replaying: "FILE"), "",
        ]
        for (index, input) in slow.enumerated() {
            let name = "slow-\(index + 1)\(ext.isEmpty ? "" : ".\(ext)")"
            try write(Data(input.bytes), to: dir.appendingPathComponent(name))
            lines.append("\(name): \(input.bytes.count) bytes; input: \(input.origin); when run again: \(input.outcome)")
        }
        try write(Data((lines.joined(separator: "\n") + "\n").utf8), to: dir.appendingPathComponent("slow.txt"))
    }

    /// Writes `replay` into a finding's folder: a script that replays the finding with its own
    /// reproducer, run from the folder the campaign ran in (or `CORRUPT_FUZZ_ROOT`), wherever the
    /// report folder itself now is. `CORRUPT_FUZZ` names another corrupt-fuzz binary.
    func writeReplayScript(in dir: URL, command: String) throws(CorruptFuzzError) {
        var words = command
        // The tool, as the first word, may be replaced by CORRUPT_FUZZ.
        if let space = words.firstIndex(of: " ") {
            words = "\"${CORRUPT_FUZZ:-\(words[..<space].replacingOccurrences(of: "\"", with: "\\\""))}\"" + words[space...]
        }
        let script = """
            #!/bin/sh
            # Replays this finding. Run it from the folder the campaign ran in (the repository root),
            # or set CORRUPT_FUZZ_ROOT to that folder; CORRUPT_FUZZ names another corrupt-fuzz binary.
            here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd) || exit 2
            cd "${CORRUPT_FUZZ_ROOT:-.}" || exit 2
            exec \(words)

            """
        // Executable as it appears (the mode is set before the rename).
        try AtomicFile.write(script, to: dir.appendingPathComponent("replay").path, mode: 0o755)
    }

    /// Writes junit.xml, results.sarif, summary.json and report.json, and points `latest` at
    /// this run.
    public func writeReport(_ report: RunReport) throws(CorruptFuzzError) {
        try write(Data(JUnitXMLReporter().render(report).utf8), to: folder.appendingPathComponent("junit.xml"))
        do {
            try write(try SARIFReporter().render(report), to: folder.appendingPathComponent("results.sarif"))
            try write(try SummaryJSON(report).encoded(), to: folder.appendingPathComponent("summary.json"))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            try write(try encoder.encode(report), to: folder.appendingPathComponent(Self.fullReportName))
        } catch let error as CorruptFuzzError {
            throw error
        } catch {
            throw CorruptFuzzError(.reportWriteFailed, "cannot encode the report: \(error)")
        }
        AtomicFile.link(root.appendingPathComponent("latest").path, to: runID)
    }

    /// The file that holds a whole run, findings' inputs included.
    public static let fullReportName = "report.json"

    /// Reads the run in a report folder, whole or left by a run killed before its report:
    /// its report.json, and the campaigns report.json does not have (it was not written, or
    /// not since they started) from `found/` (``FoundFolder/read(in:)``), each finding as first
    /// found. What could not be read is skipped, with a note in `notes`.
    /// - Throws: ``CorruptFuzzError`` (`invalidArgument`) when the folder has neither a
    ///   readable report.json nor a finding in `found/`.
    public static func readRun(in folder: String) throws(CorruptFuzzError) -> (report: RunReport, notes: [String]) {
        let found = FoundFolder.read(in: folder)
        var notes = found.notes
        var report: RunReport
        do {
            report = try readReport(in: folder)
        } catch {
            guard !found.suites.isEmpty else { throw error }
            if FileManager.default.fileExists(atPath: (folder as NSString).appendingPathComponent(fullReportName)) {
                notes.append("\(error.message): read from \(FoundFolder.name)/ instead")
            }
            let url = URL(fileURLWithPath: folder).standardizedFileURL
            report = RunReport(runID: url.lastPathComponent, folder: url.path, suites: [], timestamp: isoTimestamp(), hostname: "")
        }
        for suite in found.suites where !report.suites.contains(where: { $0.result.targetName == suite.result.targetName }) {
            notes.append(
                "\(folder): the run ended before its report of \(suite.result.targetName): its \(suite.result.findings.count) finding\(suite.result.findings.count == 1 ? "" : "s") read from \(FoundFolder.name)/ (not minimized)"
            )
            report.suites.append(suite)
        }
        return (report, notes)
    }

    /// Reads the run in a report folder's report.json.
    /// - Throws: ``CorruptFuzzError`` (`invalidArgument`) when the folder has none or it is not
    ///   a report.
    public static func readReport(in folder: String) throws(CorruptFuzzError) -> RunReport {
        let url = URL(fileURLWithPath: folder).appendingPathComponent(fullReportName)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw CorruptFuzzError(.invalidArgument, "\(folder) is not a report folder: it has no \(fullReportName) and no finding in \(FoundFolder.name)/")
        }
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        do {
            return try decoder.decode(RunReport.self, from: data)
        } catch {
            throw CorruptFuzzError(.invalidArgument, "\(url.path) is not a corrupt-fuzz report: \(error)")
        }
    }

    // MARK: - Helpers

    /// A folder name for a target: letters, digits, dots and dashes only.
    public static func slug(_ name: String) -> String {
        let mapped = name.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "-" }
        let text = String(mapped).split(separator: "-", omittingEmptySubsequences: true).joined(separator: "-")
        return text.isEmpty ? "target" : String(text.prefix(80))
    }

    private func create(_ dir: URL) throws(CorruptFuzzError) {
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        } catch {
            throw CorruptFuzzError(.reportWriteFailed, "cannot create \(dir.path): \(Self.describe(error))")
        }
    }

    private func write(_ data: Data, to url: URL) throws(CorruptFuzzError) {
        try Self.write(data, to: url.path)
    }

    /// Writes `data` to `path` atomically (``AtomicFile``: a temporary file beside it, flushed,
    /// renamed over it), as every file of a report folder is written.
    /// - Throws: ``CorruptFuzzError`` (`reportWriteFailed`).
    public static func write(_ data: Data, to path: String) throws(CorruptFuzzError) {
        try AtomicFile.write(data, to: path)
    }

    private static func describe(_ error: any Error) -> String {
        (error as NSError).localizedDescription
    }
}
