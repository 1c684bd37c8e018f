import CorruptFuzzTesting
import Foundation
import NotesMigration
import Testing

/// Crash points of Swift save code from a test: the notes migrations, run in a copy of the test
/// process under the recorder.
@Suite("Crash points in tests")
struct CrashPointCheckTests {
    static let data = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Corpus/migration/notes-app")

    @Test("the naive migration's torn state, lost and duplicated notes, leftover backup and held lock", .enabled(if: isLinux))
    func naive() {
        let (report, warnings) = verifySaveSurvivesCrashes("naive-migration", data: Self.data, maxStates: 80) { folder in
            try NotesMigration.migrateNaively(folder.path)
        } check: { folder in
            try NotesMigration.load(folder.path)
        }
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(report.kinds.isSuperset(of: [.lostData, .duplicateData, .strayFile, .heldLock]), "\(report.kinds)")
        #expect(report.findings.allSatisfy { $0.reproducer.map { FileManager.default.fileExists(atPath: $0 + "/trace.txt") } == true })
    }

    static let saves = data.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("saves/notes-app")

    @Test(
        "I/O faults: the naive save claims success after a failed write and loses its store after a failed fsync; the hardened save survives every fault",
        .enabled(if: isLinux))
    func faults() {
        let (naive, warnings) = verifySaveSurvivesCrashes("naive-save", data: Self.saves, maxStates: 150, faults: IOFault.allCases) { folder in
            try NotesMigration.saveNaively(folder.path)
        } check: { folder in
            try NotesMigration.load(folder.path)
        }
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(naive.kinds.isSuperset(of: [.unreportedIOError, .tornState, .lostData]), "\(naive.kinds)")
        #expect(
            naive.findings.contains { $0.kind == .lostData && $0.signature.hasPrefix("an error at fsync of notes.tsv") }, "\(naive.findings.map(\.signature))")
        let hardened = assertSaveSurvivesCrashes("hardened-save", data: Self.saves, maxStates: 150, faults: IOFault.allCases) { folder in
            try NotesMigration.save(folder.path)
        } check: { folder in
            try NotesMigration.load(folder.path)
        }
        #expect(hardened.executions > 50)
    }

    @Test("the hardened migration survives every crash point", .enabled(if: isLinux))
    func hardened() {
        let report = assertSaveSurvivesCrashes("hardened-migration", data: Self.data, maxStates: 80) { folder in
            try NotesMigration.migrate(folder.path)
        } check: { folder in
            try NotesMigration.load(folder.path)
        }
        #expect(report.executions > 10)
    }
}

#if os(Linux)
    let isLinux = true
#else
    let isLinux = false
#endif
