import CorruptFuzzExamples
import CorruptFuzzSQLiteTesting
import CorruptFuzzTesting
import Foundation
import SQLiteLoaders
import Testing

/// The SQLite example, as a user would test a store that opens a database path: the format
/// generates databases with the real SQLite and corrupts them page by page.
@Suite("CorruptFuzzTesting: the SQLite note store")
struct NoteStoreExampleTests {
    @Test("the hardened note store survives corrupt databases and logs", arguments: [SQLiteDescription.JournalMode.rollback, .wal])
    func hardened(mode: SQLiteDescription.JournalMode) throws {
        let format = try #require(NoteStoreFormat.format(journalMode: mode))
        var rng = FuzzRNG(seed: 1)
        let seeds = (0..<2).map { _ in Data(format.sqliteMutator.generate(using: &rng)) }
        let report = assertLoaderSurvivesCorruption(
            "hardened-note-store-\(mode)", format: format, seeds: seeds,
            options: .init(runs: 200, isolation: .inProcess, regressions: scratchRegressions("hardened-note-store-\(mode)"))
        ) { data in
            try SQLiteFiles.withTemporaryDatabase(data) { path in try HardenedNoteStore.load(path: path) }
        }
        #expect(report.executions >= 200)
    }

    @Test("the naive note store crashes and silently accepts corrupt databases and a log that drops commits")
    func naive() throws {
        let format = try #require(NoteStoreFormat.format(journalMode: .wal))
        // One seed whose log holds later commits, so the catalogue's log entries lose them.
        var rng = FuzzRNG(seed: 0)
        let seed = try #require(
            (0..<30).lazy.map { _ in format.sqliteMutator.generate(using: &rng) }.first { bytes in
                format.sqliteMutator.catalogue(of: bytes).contains { $0.name == "wal.frame[0].page-bit-flip" && $0.expectation != nil }
            })
        let report = verifyLoaderSurvivesCorruption(
            "naive-note-store", format: format, seeds: [Data(seed)],
            options: .init(runs: 50, regressions: scratchRegressions("naive-note-store"), jobs: 2)
        ) { data in
            try SQLiteFiles.withTemporaryDatabase(data) { path in try NaiveNoteStore.load(path: path) }
        }
        #expect(report.kinds.isSuperset(of: [.crash, .silentAcceptance]), "\(report.kinds)")
        let signatures = report.findings.map(\.signature)
        #expect(signatures.contains { $0.contains("Unexpectedly found nil") }, "\(signatures)")
        #expect(signatures.contains { $0.contains("the log drops committed transactions") }, "\(signatures)")
    }

    @Test("the hardened store finalizes its statements and closes the database on every path; the naive one leaks on its empty-library path")
    func closesDatabase() throws {
        let format = try #require(NoteStoreFormat.format())
        let leaks = assertSQLiteLoaderClosesDatabase(format: format, count: 1) { path in _ = try HardenedNoteStore.load(path: path) }
        #expect(leaks.isEmpty)
        // A library whose folders' page says it has no cells: the naive store refuses it as
        // empty and returns without finalizing its statement, so sqlite3_close never runs.
        var rng = FuzzRNG(seed: 0)
        let seed = format.sqliteMutator.generate(using: &rng)
        let emptied = try #require(format.sqliteMutator.catalogue(of: seed).first { $0.name.contains("(folders).cell-count=0") })
        let naive = format.leaks(databases: [(emptied.name, emptied.bytes)]) { path in _ = try NaiveNoteStore.load(path: path) }
        #expect(naive.count == 1)
        #expect(naive.first?.openFiles.contains { $0.hasSuffix("/main.db") } == true, "\(naive)")
    }
}

func scratchRegressions(_ id: String) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("corrupt-fuzz-sqlite-tests-\(getpid())/\(id)")
}
