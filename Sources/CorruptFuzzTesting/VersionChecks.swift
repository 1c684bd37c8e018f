import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation
import Testing
import XCTest

/// One version of an app, as the version-skew and round-trip checks see it: how it loads a
/// file, what it shows of the loaded data, and how it saves.
///
/// ```swift
/// let v2 = AppVersion("v2", load: { try FriendListV2Store.load($0) }, digest: \.digest,
///                     save: { try FriendListV2Store.save($0) })
/// ```
public struct AppVersion<Document>: Sendable {
    public let name: String
    let load: @Sendable (Data) throws -> Document
    let digest: @Sendable (Document) -> String
    let save: (@Sendable (Document) throws -> Data)?

    /// - Parameters:
    ///   - name: The version's name in findings (`v1`, `2.3`).
    ///   - load: The version's loader; an error with a `reason` property gives the reason word
    ///     (`unsupported-version` for a file from a newer version).
    ///   - digest: What the loaded document holds, as text: equal documents give equal digests,
    ///     and a field the version does not know is missing from it (a line per record, fields
    ///     separated by tabs, reads best in findings).
    ///   - save: The version's writer, when the check should save (a migration, a round trip).
    public init(
        _ name: String, load: @escaping @Sendable (Data) throws -> Document, digest: @escaping @Sendable (Document) -> String,
        save: (@Sendable (Document) throws -> Data)? = nil
    ) {
        self.name = name
        self.load = load
        self.digest = digest
        self.save = save
    }

    var loader: DocumentLoader {
        let load = load
        let digest = digest
        return DocumentLoader(
            name: name, command: name,
            executor: InProcessExecutor { bytes in
                do {
                    return .accepted(digest: digest(try load(Data(bytes))))
                } catch {
                    let (reason, message) = RejectionDescriber.shared.describe(error)
                    return .rejected(reason: reason, exitCode: 1, message: message)
                }
            })
    }

    var writer: ClosureWriter? {
        guard let save else { return nil }
        let load = load
        return ClosureWriter(name: "\(name) save") { bytes in [UInt8](try save(try load(Data(bytes)))) }
    }
}

/// Files of a newer app version on an older one, and the other way round, in this process (a
/// loader that traps ends the test run: check such loaders with `corrupt-fuzz skew --worker`).
///
/// The older version must refuse each newer file as `unsupported-version`, or read it whole (its
/// digest equal to the newer version's): another reason is `wrong-reason`, a partial read
/// `lost-on-downgrade`. The newer version must load each older file (else `false-rejection`)
/// and, when it saves, save what it loaded (valid under `format`, loading again to the same
/// digest, twice; else `writer-corruption`); what it saved from older files joins the newer
/// files. Newer files come from `newerFiles` and, with `generate`, from `format`'s generator.
/// Files that showed a finding are kept under `Corpus/regressions/<id>/older|newer` and checked
/// first on the next run.
public func verifyVersionSkew<Older, Newer>(
    _ id: String, older: AppVersion<Older>, newer: AppVersion<Newer>, olderFiles: [Data], newerFiles: [Data] = [],
    format: (any FuzzFormat)? = nil, generate: Int = 0, seed: UInt64? = nil, regressions: URL? = nil, filePath: StaticString = #filePath
) -> CorruptFuzzReport {
    let seed = seed ?? ProcessInfo.processInfo.environment["CORRUPT_FUZZ_SEED"].flatMap(UInt64.init) ?? 0
    let base = regressions ?? RegressionStore.defaultDirectory(for: id, filePath: "\(filePath)")
    let olderStore = RegressionStore(directory: base.appendingPathComponent("older"))
    let newerStore = RegressionStore(directory: base.appendingPathComponent("newer"))
    func seeds(_ stored: [TestInput], _ given: [Data], _ role: String) -> [Seed] {
        stored.map { Seed(name: "regression \($0.seedName)", bytes: $0.bytes ?? []) }
            + given.enumerated().map { Seed(name: "\(role)-\($0.offset)", bytes: [UInt8]($0.element)) }
    }
    var newerSeeds = seeds(newerStore.load(), newerFiles, "newer")
    if let mutator = format?.mutator, generate > 0 {
        var rng = FuzzRNG(seed: seed)
        newerSeeds += (0..<generate).map { Seed(name: "generated-\($0)", bytes: mutator.generate(using: &rng)) }
    }
    let check = VersionSkewCheck(
        older: older.loader, newer: newer.loader, newerWriter: newer.writer, validator: format?.validator,
        olderFiles: seeds(olderStore.load(), olderFiles, "older"), newerFiles: newerSeeds, fileExtension: format?.fileExtension ?? "")
    do {
        let result = try check.run()
        let findings =
            documentFindings(result.upgrade, store: olderStore, fileExtension: format?.fileExtension ?? "", seed: seed)
            + documentFindings(result.downgrade, store: newerStore, fileExtension: format?.fileExtension ?? "", seed: seed)
        return CorruptFuzzReport(
            id: id, findings: findings, executions: result.upgrade.executions + result.downgrade.executions,
            seconds: result.upgrade.totalSeconds + result.downgrade.totalSeconds, seed: seed, inputSequenceHash: 0)
    } catch {
        // In-process loaders and writers cannot fail to start; kept for the executor's signature.
        return CorruptFuzzReport(id: id, findings: [], executions: 0, seconds: 0, seed: seed, inputSequenceHash: 0)
    }
}

/// Load, save, load again, in this process: for every document the app loads, what it saves
/// must be valid under `format` (when given) and load again to the same digest, twice (a field
/// the writer drops and the reader fills with a default only shows the second time). A
/// difference is a `writer-corruption` finding; a document `format` calls valid that the app
/// rejects is a `false-rejection`. Documents come from `documents` and `format`'s generator.
public func verifyRoundTrip<Document>(
    _ id: String, documents: [Data] = [], format: (any FuzzFormat)? = nil, generate: Int = 0, cycles: Int = 2, seed: UInt64? = nil,
    regressions: URL? = nil, filePath: StaticString = #filePath, load: @escaping @Sendable (Data) throws -> Document,
    digest: @escaping @Sendable (Document) -> String, save: @escaping @Sendable (Document) throws -> Data
) -> CorruptFuzzReport {
    let app = AppVersion(id, load: load, digest: digest, save: save)
    let seed = seed ?? ProcessInfo.processInfo.environment["CORRUPT_FUZZ_SEED"].flatMap(UInt64.init) ?? 0
    let store = RegressionStore(directory: regressions ?? RegressionStore.defaultDirectory(for: id, filePath: "\(filePath)"))
    var seeds = store.load().map { Seed(name: "regression \($0.seedName)", bytes: $0.bytes ?? []) }
    seeds += documents.enumerated().map { Seed(name: "document-\($0.offset)", bytes: [UInt8]($0.element)) }
    if let mutator = format?.mutator, generate > 0 {
        var rng = FuzzRNG(seed: seed)
        seeds += (0..<generate).map { Seed(name: "generated-\($0)", bytes: mutator.generate(using: &rng)) }
    }
    let check = RoundTripCheck(
        loader: app.loader, writer: ClosureWriter(name: "\(id) save") { bytes in [UInt8](try save(try load(Data(bytes)))) }, validator: format?.validator,
        documents: seeds, cycles: cycles,
        fileExtension: format?.fileExtension ?? "")
    guard let result = try? check.run() else {
        return CorruptFuzzReport(id: id, findings: [], executions: 0, seconds: 0, seed: seed, inputSequenceHash: 0)
    }
    return CorruptFuzzReport(
        id: id, findings: documentFindings(result, store: store, fileExtension: format?.fileExtension ?? "", seed: seed),
        executions: result.executions, seconds: result.totalSeconds, seed: seed, inputSequenceHash: 0)
}

/// ``verifyVersionSkew(_:older:newer:olderFiles:newerFiles:format:generate:seed:regressions:filePath:)``,
/// recording a Swift Testing issue (or an XCTest failure outside Swift Testing) per finding.
@discardableResult
public func assertVersionSkew<Older, Newer>(
    _ id: String, older: AppVersion<Older>, newer: AppVersion<Newer>, olderFiles: [Data], newerFiles: [Data] = [],
    format: (any FuzzFormat)? = nil, generate: Int = 0, seed: UInt64? = nil, regressions: URL? = nil, filePath: StaticString = #filePath,
    sourceLocation: SourceLocation = #_sourceLocation
) -> CorruptFuzzReport {
    let report = verifyVersionSkew(
        id, older: older, newer: newer, olderFiles: olderFiles, newerFiles: newerFiles, format: format, generate: generate, seed: seed,
        regressions: regressions, filePath: filePath)
    recordFindings(report, sourceLocation: sourceLocation)
    return report
}

/// ``verifyRoundTrip(_:documents:format:generate:cycles:seed:regressions:filePath:load:digest:save:)``,
/// recording a Swift Testing issue (or an XCTest failure outside Swift Testing) per finding.
///
/// ```swift
/// @Test func notesSurviveSaving() {
///     assertRoundTrip("notes-writer", format: NotesFormat(), generate: 200) { data in
///         try NotesStore.load(data)
///     } digest: { notes in notes.map(\.digest).joined(separator: "\n")
///     } save: { notes in Data(NotesWriter.xml(notes)) }
/// }
/// ```
@discardableResult
public func assertRoundTrip<Document>(
    _ id: String, documents: [Data] = [], format: (any FuzzFormat)? = nil, generate: Int = 0, cycles: Int = 2, seed: UInt64? = nil,
    regressions: URL? = nil, filePath: StaticString = #filePath, sourceLocation: SourceLocation = #_sourceLocation,
    load: @escaping @Sendable (Data) throws -> Document, digest: @escaping @Sendable (Document) -> String,
    save: @escaping @Sendable (Document) throws -> Data
) -> CorruptFuzzReport {
    let report = verifyRoundTrip(
        id, documents: documents, format: format, generate: generate, cycles: cycles, seed: seed, regressions: regressions,
        filePath: filePath, load: load, digest: digest, save: save)
    recordFindings(report, sourceLocation: sourceLocation)
    return report
}

/// One issue (Swift Testing) or failure (XCTest) per finding.
func recordFindings(_ report: CorruptFuzzReport, sourceLocation: SourceLocation) {
    for finding in report.findings {
        if Test.current != nil {
            Issue.record(Comment(rawValue: "corrupt-fuzz \(report.id): \(finding)"), sourceLocation: sourceLocation)
        } else {
            XCTFail("corrupt-fuzz \(report.id): \(finding)")
        }
    }
}

/// A document check's findings, each input kept in `store` for the next run, the saved files
/// beside it.
func documentFindings(_ result: CampaignResult, store: RegressionStore, fileExtension: String, seed: UInt64) -> [CorruptFuzzFinding] {
    result.findings.map { record in
        let finding = record.finding
        let path = finding.input.bytes.flatMap { store.save($0, kind: finding.kind, fileExtension: fileExtension) }
        var detail = finding.detail
        for attachment in finding.attachments ?? [] {
            // Beside the inputs, in a folder the store does not read back as inputs.
            let saved = store.directory.appendingPathComponent("saved")
            let kept = RegressionStore(directory: saved).save(attachment.bytes, kind: finding.kind, fileExtension: fileExtension)
            detail += "\n  \(attachment.name): \(kept ?? "(could not be kept)")"
        }
        return CorruptFuzzFinding(
            kind: finding.kind, signature: finding.signature, detail: detail, hits: record.hits, reproducer: path,
            replay: "swift test (seed \(seed); the regression store checks the reproducer first)", input: finding.input.origin)
    }
}
