import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation
import Testing
import XCTest

/// The child side of a crash-point check: when this test process was started to run a save,
/// it runs it on the folder it was given and exits.
enum SaveMode {
    static let variable = "CORRUPT_FUZZ_SAVE"
    static let folderVariable = "CORRUPT_FUZZ_SAVE_DIR"

    static var servedCheck: String? { ProcessInfo.processInfo.environment[variable] }

    static func run(_ save: (URL) throws -> Void) -> Never {
        guard let folder = ProcessInfo.processInfo.environment[folderVariable] else { exit(2) }
        do {
            try save(URL(fileURLWithPath: folder))
            exit(0)
        } catch {
            let (reason, message) = RejectionDescriber.shared.describe(error)
            FileHandle.standardError.write(Data("reason: \(reason)\n\(message)\n".utf8))
            exit(1)
        }
    }
}

/// Cuts a save short at every file operation, and by the power cuts that can follow it, as
/// `corrupt-fuzz crashpoints` does, for Swift save code in a test: `save` runs in a copy of this
/// test process under the recorder (`RecorderLibrary`, Linux; built on first use), killed before each
/// operation in turn; `check` reads each crash state (what the app shows after a start: a line
/// per record) and must see the data from before or after the save, and `save` run again must
/// finish the job without duplicates or stray files, and hold no lock when it returns.
///
/// - Parameters:
///   - id: A stable name for the check; the test process runs the save when started for it.
///   - data: The folder before the save (every run gets a copy; it is never changed).
///   - maxStates: The most crash states to check (kill points first).
///   - seed: The seed of the sampled power-cut states; nil takes `CORRUPT_FUZZ_SEED`, else 0.
///   - timeout: The deadline of one run of the save.
///   - faults: I/O faults to make each operation fail with as well, one at a time (a full disk,
///     an I/O error, a short write, EINTR): `save` runs on, and must either succeed with its data
///     on disk or throw, leaving the old data or the new (`IOFault.allCases` for all of them).
///   - save: The save or migration, given the folder.
///   - check: The app's load of a folder: a line per record, or throws why it does not load.
/// - Returns: The findings (`torn-state`, `lost-data`, `duplicate-data`, `stray-file`,
///   `held-lock`, `crash`, `hang`; with faults also `unreported-io-error`), and warnings when
///   the check could not run.
public func verifySaveSurvivesCrashes(
    _ id: String, data: URL, maxStates: Int = 200, seed: UInt64? = nil, timeout: Duration = .seconds(10), faults: [IOFault] = [],
    save: (URL) throws -> Void, check: @escaping @Sendable (URL) throws -> [String]
) -> (report: CorruptFuzzReport, warnings: [String]) {
    if let served = SaveMode.servedCheck {
        if served == id { SaveMode.run(save) }
        return (CorruptFuzzReport(id: id, findings: [], executions: 0, seconds: 0, seed: 0, inputSequenceHash: 0), [])
    }
    let seed = seed ?? ProcessInfo.processInfo.environment["CORRUPT_FUZZ_SEED"].flatMap(UInt64.init) ?? 0
    let empty = CorruptFuzzReport(id: id, findings: [], executions: 0, seconds: 0, seed: seed, inputSequenceHash: 0)
    #if os(Linux)
        let recorder: String
        do throws(CorruptFuzzError) {
            recorder = try RecorderLibrary.path()
        } catch {
            return (empty, [error.description])
        }
        guard let rerun = SwiftTestingRerun.current() else {
            return (empty, ["a crash-point check runs the save in a copy of the test process, so it must be called from a Swift Testing test"])
        }
        do throws(CorruptFuzzError) {
            let line = ([RegressionStore.executablePath] + rerun.arguments).map(ShellWords.quote).joined(separator: " ")
            var limits = ProcessExecutor.Limits()
            limits.timeoutMilliseconds = Int(clamping: timeout.milliseconds)
            var crashPoints = CrashPointCheck(
                target: try TargetCommand(line),
                check: .closure(name: id) { folder in
                    do {
                        return .success(try check(folder))
                    } catch {
                        let (reason, message) = RejectionDescriber.shared.describe(error)
                        return .failure(Violation(reason, message))
                    }
                },
                validator: nil, fileExtension: "", data: data, recorder: recorder, limits: limits, maxStates: maxStates, seed: seed)
            crashPoints.environment = [
                SaveMode.variable: id, SaveMode.folderVariable: "@@",
                "SWIFT_BACKTRACE": ProcessInfo.processInfo.environment["SWIFT_BACKTRACE"] ?? "enable=no",
            ]
            crashPoints.faults = faults
            let result = try crashPoints.run().result
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("corrupt-fuzz-crashpoints-\(id)-\(getpid())")
            let findings = result.findings.enumerated().map { index, record in
                let finding = record.finding
                let kept = folder.appendingPathComponent("\(finding.kind.rawValue)-\(index + 1)")
                for attachment in finding.attachments ?? [] {
                    let file = kept.appendingPathComponent(attachment.name)
                    try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try? AtomicFile.write(attachment.bytes, to: file.path)
                }
                return CorruptFuzzFinding(
                    kind: finding.kind, signature: finding.signature, detail: finding.detail, hits: record.hits, reproducer: kept.path,
                    replay: SwiftTestingRerun.replayHint() + " (the crash state is in state/, the operations in trace.txt)",
                    input: finding.input.origin)
            }
            return (
                CorruptFuzzReport(id: id, findings: findings, executions: result.executions, seconds: result.totalSeconds, seed: seed, inputSequenceHash: 0),
                []
            )
        } catch {
            return (empty, ["the crash-point check could not run: \(error)"])
        }
    #else
        return (empty, ["crash-point checks need LD_PRELOAD, which only Linux has here"])
    #endif
}

/// ``verifySaveSurvivesCrashes(_:data:maxStates:seed:timeout:faults:save:check:)`` recording a Swift
/// Testing issue per finding, and one when the check could not run.
///
/// ```swift
/// @Test func migrationSurvivesCrashes() {
///     assertSaveSurvivesCrashes("notes-migration", data: fixtureFolder) { folder in
///         try NotesMigration.migrate(folder.path)
///     } check: { folder in
///         try NotesMigration.load(folder.path)
///     }
/// }
/// ```
@discardableResult
public func assertSaveSurvivesCrashes(
    _ id: String, data: URL, maxStates: Int = 200, seed: UInt64? = nil, timeout: Duration = .seconds(10), faults: [IOFault] = [],
    sourceLocation: SourceLocation = #_sourceLocation, save: (URL) throws -> Void, check: @escaping @Sendable (URL) throws -> [String]
) -> CorruptFuzzReport {
    let (report, warnings) = verifySaveSurvivesCrashes(
        id, data: data, maxStates: maxStates, seed: seed, timeout: timeout, faults: faults, save: save, check: check)
    for warning in warnings {
        Issue.record(Comment(rawValue: "corrupt-fuzz \(id): \(warning)"), sourceLocation: sourceLocation)
    }
    recordFindings(report, sourceLocation: sourceLocation)
    return report
}
