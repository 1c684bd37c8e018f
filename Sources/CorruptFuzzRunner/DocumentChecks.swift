import CorruptFuzzCore
import Foundation

/// A loader as the document checks use it: an executor (a command, a worker, a closure) and
/// the name reports give it.
public struct DocumentLoader: Sendable {
    public var name: String
    /// The command line, `@@` included, for replay commands (the name for a closure).
    public var command: String
    public var executor: any Executor

    public init(name: String, command: String, executor: any Executor) {
        self.name = name
        self.command = command
        self.executor = executor
    }

    func load(_ bytes: [UInt8], as seedName: String, counter: inout Int) throws(CorruptFuzzError) -> Execution {
        counter += 1
        return try executor.executeConfirmingHang(TestInput(bytes: bytes, seedName: seedName), slot: 0)
    }
}

/// How two loads of what should be the same data differ, as a bug's signature and a detail.
///
/// A digest is what a loader prints when it accepts (the target protocol's stdout), a line per
/// record with tab-separated fields in the bundled loaders (a worker's digest is one line: the
/// protocol writes newlines as spaces). The signature names the shape of the difference, never
/// the data or how much of it, so one dropped field is one finding however many documents and
/// records show it: `lines lost`, `fields of a line lost`, `field 3 of a line differs`.
public enum DigestDifference {
    /// Nil when the digests are equal.
    public static func between(_ expected: String, _ got: String) -> (signature: String, detail: String)? {
        guard expected != got else { return nil }
        let a = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let b = got.split(separator: "\n", omittingEmptySubsequences: false)
        let index = (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
        let detail = "line \(index + 1): " + excerpt(index < a.count ? a[index] : nil, index < b.count ? b[index] : nil)
        if a.count != b.count { return (a.count > b.count ? "lines lost" : "lines added", detail) }
        let fieldsA = a[index].split(separator: "\t", omittingEmptySubsequences: false)
        let fieldsB = b[index].split(separator: "\t", omittingEmptySubsequences: false)
        if fieldsA.count != fieldsB.count {
            return ("fields of a line \(fieldsA.count > fieldsB.count ? "lost" : "added")", detail)
        }
        if fieldsA.count > 1, let field = fieldsA.indices.first(where: { fieldsA[$0] != fieldsB[$0] }) {
            return ("field \(field + 1) of a line differs", detail)
        }
        return ("a line differs", detail)
    }

    /// `expected "…Alice\t123\tAl…", got "…Alice\t123…"`: each side from a little before where
    /// they part.
    static func excerpt(_ expected: Substring?, _ got: Substring?) -> String {
        let x = Array((expected ?? "").unicodeScalars)
        let y = Array((got ?? "").unicodeScalars)
        let split = (0..<min(x.count, y.count)).first { x[$0] != y[$0] } ?? min(x.count, y.count)
        let start = max(0, split - 40)
        func shown(_ line: Substring?, _ scalars: [Unicode.Scalar]) -> String {
            guard line != nil else { return "(no line)" }
            var text = String(String.UnicodeScalarView(scalars[start..<min(scalars.count, split + 60)]))
            text = text.replacing("\t", with: "\\t")
            return "\"" + (start > 0 ? "…" : "") + text + (split + 60 < scalars.count ? "…" : "") + "\""
        }
        return "expected \(shown(expected, x)), got \(shown(got, y))"
    }
}

/// Collects the findings of a document check: one record per kind and signature, hits added
/// up, in the order first seen.
struct FindingCollector {
    private(set) var records: [FindingRecord] = []
    private var index: [FindingKey: Int] = [:]
    private var variantKeys: [[UInt64: Int]] = []
    let started = ContinuousClock.now

    mutating func add(_ finding: Finding, execution number: Int) {
        if let known = index[finding.key] {
            records[known].count(finding, keys: &variantKeys[known])
            return
        }
        index[finding.key] = records.count
        variantKeys.append([:])
        let elapsed = ContinuousClock.now - started
        records.append(
            FindingRecord(
                finding: finding, hits: 1, firstExecution: number,
                firstSeconds: elapsed.seconds))
    }

    var seconds: Double {
        let elapsed = ContinuousClock.now - started
        return elapsed.seconds
    }

    /// The check's result, read as a campaign's in every report.
    func result(
        _ name: String, command: String, validator: String?, inputs: [String], checks: [FindingKind], executions: Int, givesReasons: Bool = true
    ) -> CampaignResult {
        var result = CampaignResult(
            targetName: name, targetCommand: command, validatorName: validator, configuration: FuzzConfiguration(), seedNames: inputs)
        result.checks = checks
        result.stopReason = .completed
        result.executions = executions
        result.findings = records
        result.fuzzSeconds = seconds
        result.totalSeconds = seconds
        result.targetGivesReasons = givesReasons
        return result
    }
}

/// Load, save, load again: the app's writer must give back the data it was given, in a file
/// the validator accepts, every time (two cycles by default: a field the writer drops and the
/// reader fills with a default only shows in the second).
///
/// For each document the loader accepts: the writer saves it (`saved-1`), the validator judges
/// what it saved, the loader loads it again, and its digest must equal the first load's; then
/// the same from `saved-1`. What breaks is a `writer-corruption` finding with the document and
/// every file the writer saved; a document the validator calls valid that the loader rejects is
/// a `false-rejection`; a crash, hang or memory blow-up of the loader or the writer is what it is.
public struct RoundTripCheck: Sendable {
    public var loader: DocumentLoader
    public var writer: any DocumentWriter
    /// The format's validator or the app's own, for the documents and for what the writer saves.
    public var validator: (any Validator)?
    public var documents: [Seed]
    public var cycles: Int
    /// The saved files' extension, for attachments.
    public var fileExtension: String
    /// Judges the loads (labelled by ``validator``).
    public var judge: Judge

    public init(
        loader: DocumentLoader, writer: any DocumentWriter, validator: (any Validator)?, documents: [Seed], cycles: Int = 2,
        fileExtension: String = ""
    ) {
        self.loader = loader
        self.writer = writer
        self.validator = validator
        self.judge = Judge(validator: validator)
        self.documents = documents
        self.cycles = max(1, cycles)
        self.fileExtension = fileExtension
    }

    /// The checks a round trip makes.
    public static let checks: [FindingKind] = [.crash, .hang, .oom, .falseRejection, .writerCorruption, .validatorError]

    /// Runs every document; the result reads as a campaign's in every report.
    /// - Throws: ``CorruptFuzzError`` when the loader or the writer cannot be run at all.
    public func run() throws(CorruptFuzzError) -> CampaignResult {
        var collector = FindingCollector()
        var executions = 0
        for document in documents {
            let input = TestInput(bytes: document.bytes, seedName: document.name)
            let first = try loader.load(document.bytes, as: document.name, counter: &executions)
            guard case .accepted(let digest) = first.outcome else {
                // Not a document this loader reads: only a bug when it is valid, or a crash.
                if let finding = judge.judge(input, execution: first).finding {
                    collector.add(finding, execution: executions)
                }
                continue
            }
            if let finding = try cycle(input, digest: digest, counter: &executions).finding {
                collector.add(finding, execution: executions)
            }
        }
        return collector.result(
            "round trip: \(writer.name)", command: loader.command, validator: validator?.name, inputs: documents.map(\.name), checks: Self.checks,
            executions: executions)
    }

    /// Saves and reloads `input` (which the loader accepted with `digest`) `cycles` times: the
    /// first thing that breaks, as a finding (nil when the writer kept the data), and the first
    /// file the writer saved.
    func cycle(
        _ input: TestInput, digest: String, label: String = "", counter: inout Int
    ) throws(CorruptFuzzError) -> (finding: Finding?, firstSaved: [UInt8]?) {
        var current = input.bytes ?? []
        var attachments: [Attachment] = []
        let suffix = fileExtension.isEmpty ? "" : ".\(fileExtension)"
        for round in 1...cycles {
            func corruption(_ signature: String, _ detail: String, _ execution: Execution, verdict: Verdict? = nil) -> (Finding?, [UInt8]?) {
                let finding = Finding(
                    kind: .writerCorruption, signature: label + signature, detail: "save \(round) of \(cycles): " + detail, input: input,
                    execution: execution, verdict: verdict, attachments: attachments)
                return (finding, attachments.first?.bytes)
            }
            func failure(_ execution: Execution, _ what: String, prefix: String = "") -> (Finding?, [UInt8]?) {
                guard var finding = judge.judge(input, execution: execution, label: nil) else { return (nil, attachments.first?.bytes) }
                finding.signature = prefix + finding.signature
                finding.detail = what + finding.detail
                finding.attachments = attachments
                return (finding, attachments.first?.bytes)
            }
            counter += 1
            let (written, saved) = try writer.resave(current)
            switch written.outcome {
            case .crashed, .hung, .outOfMemory:
                return failure(written, "the writer, saving: ", prefix: "writer: ")
            case .rejected(let reason, _, let message):
                return corruption(
                    "the writer refused a document the loader read (\(reason?.rawValue ?? "no reason"))",
                    "the writer failed to save it" + (message.map { ": \($0)" } ?? ""), written)
            case .accepted, .acceptedInvalid:
                break
            }
            guard let saved else { return corruption("the writer saved no file", "the writer said it saved, but wrote nothing", written) }
            attachments.append(Attachment(name: "saved-\(round)\(suffix)", bytes: saved))
            if let validator {
                let verdict = validator.validate(saved)
                if case .invalid(let violation) = verdict {
                    return corruption(
                        "saved an invalid document: " + Normalize.message(violation.description),
                        "what the writer saved fails the validator: \(violation)", written, verdict: verdict)
                }
            }
            let reloaded = try loader.load(saved, as: "saved-\(round)", counter: &counter)
            switch reloaded.outcome {
            case .accepted(let again):
                if let difference = DigestDifference.between(digest, again) {
                    return corruption(
                        "the saved document loads as other data: " + difference.signature,
                        "loaded from the document and from what the writer saved, the data differ: \(difference.detail)", reloaded)
                }
            case .crashed, .hung, .outOfMemory:
                return failure(reloaded, "loading what the writer saved: ")
            default:
                return corruption(
                    "the saved document does not load: " + Self.rejection(reloaded.outcome),
                    "the loader rejects what the writer saved: \(reloaded.outcome.summary)", reloaded)
            }
            current = saved
        }
        return (nil, attachments.first?.bytes)
    }

    /// `corrupt`, `no reason`, `the loaded value is invalid`.
    static func rejection(_ outcome: Outcome) -> String {
        switch outcome {
        case .rejected(let reason, _, _): reason?.rawValue ?? "no reason"
        case .acceptedInvalid: "the loaded value is invalid"
        default: outcome.word
        }
    }
}

/// Files from two versions of an app, each read by the other: a file saved by the newer
/// version must be refused by the older one as `unsupported-version` (or read whole), and every
/// file of the older version must load in the newer one and survive its writer.
///
/// Downgrade (the older loader reads each newer file): a crash, hang or memory blow-up is what it
/// is; a rejection for another reason than `unsupported-version` is a `wrong-reason` (`corrupt`
/// makes the app offer to delete the file); an acceptance whose digest differs from the newer
/// loader's is `lost-on-downgrade` (the older app shows less than the file holds and would save
/// it back without the rest). An acceptance with the same digest lost nothing.
///
/// Upgrade (the newer loader reads each older file): a rejection is a `false-rejection` (the
/// migration failed); with the newer writer, the migrated file goes through the round trip
/// (valid, loads again to the same data, twice) and then joins the newer files for the
/// downgrade.
public struct VersionSkewCheck: Sendable {
    public var older: DocumentLoader
    public var newer: DocumentLoader
    /// The newer version's writer: what it saves from an older file is a newer file.
    public var newerWriter: (any DocumentWriter)?
    /// The newer format's validator, for what the newer writer saves.
    public var validator: (any Validator)?
    public var olderFiles: [Seed]
    public var newerFiles: [Seed]
    public var fileExtension: String
    /// Judges the loads: a file of the older version is valid; a newer one must be refused as
    /// `unsupported-version` (its expectation).
    public var judge = Judge()

    public init(
        older: DocumentLoader, newer: DocumentLoader, newerWriter: (any DocumentWriter)? = nil, validator: (any Validator)? = nil,
        olderFiles: [Seed], newerFiles: [Seed], fileExtension: String = ""
    ) {
        self.older = older
        self.newer = newer
        self.newerWriter = newerWriter
        self.validator = validator
        self.olderFiles = olderFiles
        self.newerFiles = newerFiles
        self.fileExtension = fileExtension
    }

    public static let downgradeChecks: [FindingKind] = [.crash, .hang, .oom, .wrongReason, .lostOnDowngrade]
    public static let upgradeChecks: [FindingKind] = [.crash, .hang, .oom, .falseRejection, .writerCorruption, .validatorError]

    /// What the check found, as two suites: the older version reading newer files, and the
    /// newer version reading (and saving) older files.
    public struct Result: Sendable {
        public var downgrade: CampaignResult
        public var upgrade: CampaignResult
        /// Newer files the newer loader itself rejected: left out of the downgrade.
        public var unreadableNewerFiles: [String]
    }

    /// Runs both directions.
    /// - Throws: ``CorruptFuzzError`` when a loader or the writer cannot be run at all.
    public func run() throws(CorruptFuzzError) -> Result {
        let upgrade = try runUpgrade()
        let downgrade = try runDowngrade(newerFiles + upgrade.migrated)
        return Result(downgrade: downgrade.result, upgrade: upgrade.result, unreadableNewerFiles: downgrade.unreadable)
    }

    private func runUpgrade() throws(CorruptFuzzError) -> (result: CampaignResult, migrated: [Seed]) {
        var collector = FindingCollector()
        var executions = 0
        var migrated: [Seed] = []
        let roundTrip = newerWriter.map {
            RoundTripCheck(loader: newer, writer: $0, validator: validator, documents: [], fileExtension: fileExtension)
        }
        for file in olderFiles {
            let input = TestInput(bytes: file.bytes, mutations: ["written by \(older.name)"], seedName: file.name)
            let loaded = try newer.load(file.bytes, as: file.name, counter: &executions)
            guard case .accepted(let digest) = loaded.outcome else {
                if let finding = judge.judge(input, execution: loaded, label: .valid) {
                    var finding = finding
                    if finding.kind == .falseRejection {
                        finding.signature = "rejects a file of the older version as " + RoundTripCheck.rejection(loaded.outcome)
                        finding.detail = "the newer version cannot read a file of the older one (the migration fails): \(loaded.outcome.summary)"
                    }
                    collector.add(finding, execution: executions)
                }
                continue
            }
            guard let roundTrip else { continue }
            let (finding, saved) = try roundTrip.cycle(input, digest: digest, label: "migrating: ", counter: &executions)
            if let finding {
                collector.add(finding, execution: executions)
            } else if let saved {
                // The migration worked: what it saved is a newer file, for the downgrade.
                migrated.append(Seed(name: "\(file.name) saved by \(roundTrip.writer.name)", bytes: saved))
            }
        }
        let result = collector.result(
            "\(newer.name) reads \(older.name)", command: newer.command, validator: validator?.name, inputs: olderFiles.map(\.name),
            checks: Self.upgradeChecks, executions: executions)
        return (result, migrated)
    }

    private func runDowngrade(_ files: [Seed]) throws(CorruptFuzzError) -> (result: CampaignResult, unreadable: [String]) {
        var collector = FindingCollector()
        var executions = 0
        var unreadable: [String] = []
        var givesReasons = false
        let expectation = Expectation(reason: .unsupportedVersion, because: "the file was saved by \(newer.name), a newer version")
        for file in files {
            let reference = try newer.load(file.bytes, as: file.name, counter: &executions)
            guard case .accepted(let newerDigest) = reference.outcome else {
                unreadable.append(file.name)
                continue
            }
            let input = TestInput(bytes: file.bytes, mutations: ["written by \(newer.name)"], seedName: file.name, expectation: expectation)
            let loaded = try older.load(file.bytes, as: file.name, counter: &executions)
            if case .rejected(let reason?, _, _) = loaded.outcome, !reason.rawValue.isEmpty { givesReasons = true }
            if case .acceptedInvalid(let message) = loaded.outcome {
                collector.add(
                    Finding(
                        kind: .wrongReason, signature: "expected unsupported-version, got an invalid value",
                        detail: "\(older.name) accepts a file of \(newer.name), then its own check of the value fails: \(message)", input: input,
                        execution: loaded, verdict: nil), execution: executions)
                continue
            }
            if case .accepted(let olderDigest) = loaded.outcome {
                guard let difference = DigestDifference.between(newerDigest, olderDigest) else { continue }
                collector.add(
                    Finding(
                        kind: .lostOnDowngrade, signature: difference.signature,
                        detail: "\(older.name) accepts a file of \(newer.name) and reads other data than \(newer.name) does: \(difference.detail)",
                        input: input, execution: loaded, verdict: nil), execution: executions)
                continue
            }
            if let finding = judge.judge(input, execution: loaded, label: nil) { collector.add(finding, execution: executions) }
        }
        let result = collector.result(
            "\(older.name) reads \(newer.name)", command: older.command, validator: nil, inputs: files.map(\.name), checks: Self.downgradeChecks,
            executions: executions, givesReasons: givesReasons)
        return (result, unreadable)
    }
}
