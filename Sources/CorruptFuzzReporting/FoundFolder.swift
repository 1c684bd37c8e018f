import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation

/// The `found/` folder of a run's report folder: each finding's input, saved the moment the
/// campaign first has the finding (as AFL++ and libFuzzer write a crash at once), with a record
/// of it, so that a run killed before its report (SIGKILL, a CI job's timeout) leaves every
/// finding found so far, replayable, and `corrupt-fuzz merge` reads them.
///
/// ```
/// Reports/20261122-143000-seed42/found/habit-loader-naive/
///   campaign.json                  the campaign (target, configuration, replay), no findings
///   crash-8c1f0e2d9a3b4c5d/        KIND-HASH (a hash of the signature)
///     input.habits  finding.json  replay
/// ```
///
/// Each file is written atomically (``AtomicFile``), the input first and `finding.json` last:
/// a finding folder with a `finding.json` is whole. The full report (junit.xml, report.json,
/// `findings/` with the minimized reproducers) is written as before; `found/` stays beside it.
public final class FoundFolder: @unchecked Sendable {
    /// The folder's name inside a report folder.
    public static let name = "found"
    /// A campaign's file in its target's folder.
    public static let campaignFile = "campaign.json"
    /// A finding's record in its folder.
    public static let recordFile = "finding.json"

    /// One finding as saved: what it is, where its input is, how to replay it, and its record
    /// (its input's bytes left out: they are the input file).
    public struct Record: Sendable, Codable {
        public var kind: FindingKind
        public var signature: String
        public var target: String
        /// The input file's name in the finding's folder; nil for a finding without an input
        /// file (the missing file).
        public var input: String?
        /// The command that replays the finding from the folder the run started in.
        public var replayCommand: String
        public var record: FindingRecord
    }

    private let writer: ReportWriter
    private let lock = NSLock()
    private var campaignsWritten: Set<String> = []
    private var firstError: CorruptFuzzError?

    /// The `found/` folder of `writer`'s report folder.
    public init(writer: ReportWriter) { self.writer = writer }

    /// The first failure to save a finding, if any (a campaign's thread cannot stop for it).
    public var error: CorruptFuzzError? { lock.withLock { firstError } }

    /// Saves `record`, a finding of the campaign `suite` (whose own findings are not saved):
    /// its input, its record and its replay script, and the campaign's file with the first
    /// finding of its target. Safe to call from any thread; a failure is kept in ``error``.
    public func save(_ record: FindingRecord, of suite: RunReport.Suite) {
        lock.withLock {
            do throws(CorruptFuzzError) {
                try saveLocked(record, of: suite)
            } catch {
                firstError = firstError ?? error
            }
        }
    }

    private func saveLocked(_ record: FindingRecord, of suite: RunReport.Suite) throws(CorruptFuzzError) {
        let targetName = suite.result.targetName
        let targetFolder = writer.folder.appendingPathComponent(Self.name).appendingPathComponent(ReportWriter.slug(targetName))
        var hash = FNV1a()
        hash.add(record.finding.signature.utf8)
        let kind = record.finding.kind
        let dir = targetFolder.appendingPathComponent("\(kind.rawValue)-\(String(hash.value, radix: 16))")
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        } catch {
            throw CorruptFuzzError(.reportWriteFailed, "cannot create \(dir.path): \(error.localizedDescription)")
        }
        if !campaignsWritten.contains(targetName) {
            var campaign = suite
            campaign.result.findings = []
            campaign.reproducers = []
            try AtomicFile.write(Self.encode(campaign), to: targetFolder.appendingPathComponent(Self.campaignFile).path)
            campaignsWritten.insert(targetName)
            // `latest` names a run that has found something, before its report is written.
            AtomicFile.link(writer.root.appendingPathComponent("latest").path, to: writer.runID)
        }
        let ext = suite.replay.fileExtension
        let relative = suite.replay.relative(to: writer.workingDirectory)
        var saved = record
        saved.finding.input.bytes = nil
        var inputName: String?
        let replay: String
        let scriptCommand: String
        if let bytes = record.finding.input.bytes {
            let name = "input" + (ext.isEmpty ? "" : ".\(ext)")
            let url = dir.appendingPathComponent(name)
            try AtomicFile.write(bytes, to: url.path)
            inputName = name
            replay = relative.command(replaying: PathRelativizer(base: writer.workingDirectory).word(url.path))
            scriptCommand = relative.command(replaying: "@INPUT@").replacingOccurrences(of: "@INPUT@", with: "\"$here/\(name)\"")
        } else if let arguments = record.finding.replayArguments {
            replay = relative.command(with: arguments)
            scriptCommand = replay
        } else {
            replay = relative.command(replaying: "/nonexistent/corrupt-fuzz-missing-file" + (ext.isEmpty ? "" : ".\(ext)"))
            scriptCommand = replay
        }
        try writer.writeReplayScript(in: dir, command: scriptCommand)
        let entry = Record(
            kind: kind, signature: record.finding.signature, target: targetName, input: inputName, replayCommand: replay, record: saved)
        // Last: a folder with its record is whole.
        try AtomicFile.write(Self.encode(entry), to: dir.appendingPathComponent(Self.recordFile).path)
    }

    /// What a report folder's `found/` holds: per target with a readable `campaign.json`, the
    /// campaign with the findings whose record and input are readable, as a report's suite
    /// (not minimized, stopped before its report). Unreadable files are skipped, each with a
    /// note; temporary files of writes that did not finish are ignored.
    public static func read(in folder: String) -> (suites: [RunReport.Suite], notes: [String]) {
        let root = (folder as NSString).appendingPathComponent(name)
        let files = FileManager.default
        guard let targets = try? files.contentsOfDirectory(atPath: root) else { return ([], []) }
        var suites: [RunReport.Suite] = []
        var notes: [String] = []
        for target in targets.sorted() where !target.hasPrefix(".") {
            let targetFolder = (root as NSString).appendingPathComponent(target)
            let campaignPath = (targetFolder as NSString).appendingPathComponent(campaignFile)
            guard let data = files.contents(atPath: campaignPath), var suite = try? decode(RunReport.Suite.self, from: data) else {
                notes.append("\(campaignPath) is missing or unreadable: the findings beside it are skipped")
                continue
            }
            var records: [FindingRecord] = []
            for entry in ((try? files.contentsOfDirectory(atPath: targetFolder)) ?? []).sorted() where !entry.hasPrefix(".") {
                let dir = (targetFolder as NSString).appendingPathComponent(entry)
                var isDirectory: ObjCBool = false
                guard files.fileExists(atPath: dir, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
                let recordPath = (dir as NSString).appendingPathComponent(recordFile)
                guard let data = files.contents(atPath: recordPath), let saved = try? decode(Record.self, from: data) else {
                    notes.append("\(dir): no readable \(recordFile) (the run ended while saving it): skipped")
                    continue
                }
                var record = saved.record
                if let input = saved.input {
                    guard !input.contains("/"), let bytes = files.contents(atPath: (dir as NSString).appendingPathComponent(input)) else {
                        notes.append("\(dir): its input \(input) is missing: skipped")
                        continue
                    }
                    record.finding.input.bytes = [UInt8](bytes)
                }
                records.append(record)
            }
            guard !records.isEmpty else { continue }
            records.sort { ($0.firstExecution, $0.finding.kind, $0.finding.signature) < ($1.firstExecution, $1.finding.kind, $1.finding.signature) }
            suite.result.findings = records
            suite.result.executions = records.map(\.firstExecution).max() ?? 0
            suite.result.fuzzSeconds = records.map(\.firstSeconds).max() ?? 0
            suite.result.totalSeconds = suite.result.fuzzSeconds
            suite.result.stopReason = .interrupted
            suite.result.toolError =
                "the run ended before its report was written (killed?): \(records.count) finding\(records.count == 1 ? "" : "s") read from \(name)/ as first found, not minimized"
            suite.markExpected(by: nil)
            suites.append(suite)
        }
        return (suites, notes)
    }

    private static func encode(_ value: some Encodable) throws(CorruptFuzzError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        do {
            return try encoder.encode(value)
        } catch {
            throw CorruptFuzzError(.reportWriteFailed, "cannot encode a finding's record: \(error)")
        }
    }

    private static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return try decoder.decode(type, from: data)
    }
}
