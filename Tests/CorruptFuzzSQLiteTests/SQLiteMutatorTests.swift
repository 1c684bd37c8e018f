import CorruptFuzzCore
import CorruptFuzzExamples
import Foundation
import Testing

@testable import CorruptFuzzSQLite

@Suite("sqlite: page-level corruption and the validator")
struct SQLiteMutatorTests {
    static func seed(_ mode: SQLiteDescription.JournalMode, _ seed: UInt64) throws -> (SQLiteFormat, [UInt8]) {
        let format = try #require(NoteStoreFormat.format(journalMode: mode))
        var rng = FuzzRNG(seed: seed)
        return (format, format.sqliteMutator.generate(using: &rng))
    }

    @Test("every catalogue entry that states a reason gets that reason from the validator", arguments: [SQLiteDescription.JournalMode.rollback, .wal])
    func expectationsAgree(mode: SQLiteDescription.JournalMode) throws {
        var stated = 0
        for index: UInt64 in 0..<3 {
            let (format, bytes) = try Self.seed(mode, index)
            for mutation in format.sqliteMutator.catalogue(of: bytes) {
                guard let expected = mutation.expectation else { continue }
                stated += 1
                let verdict = format.validator.validate(mutation.bytes)
                guard case .invalid(let violation) = verdict else {
                    Issue.record("\(mode) seed \(index) \(mutation.name): expected \(expected.reason), validator says \(verdict)")
                    continue
                }
                #expect(violation.reason == expected.reason, "\(mode) seed \(index) \(mutation.name): \(violation)")
            }
        }
        #expect(stated > 50)
    }

    @Test("named mutations change what their names say")
    func namesSayWhatTheyDo() throws {
        let (format, bytes) = try Self.seed(.rollback, 2)
        let layout = try #require(SQLiteLayout(bytes))
        let catalogue = format.sqliteMutator.catalogue(of: bytes)
        func entry(_ name: String) throws -> [UInt8] { try #require(catalogue.first { $0.name == name }, "\(name)").bytes }

        #expect(try entry("header.read-version=3")[19] == 3)
        #expect(try entry("header.page-size=1000")[16...17].elementsEqual([0x03, 0xE8]))
        #expect(try entry("header.user-version=future")[60..<64].elementsEqual([0, 0, 0, 3]))
        let schemaRoot = try #require(layout.btreePages.first { $0.number == 1 })
        #expect(try entry("page[1](sqlite_schema).type=0")[schemaRoot.headerOffset] == 0)
        #expect(try entry("page[1](sqlite_schema).cell-count=max")[(schemaRoot.headerOffset + 3)...].prefix(2).elementsEqual([0xFF, 0xFF]))
        let truncated = try #require(catalogue.first { $0.name.hasPrefix("truncate@page-") })
        #expect(truncated.bytes.count % layout.pageSize == 0 && truncated.bytes.count < bytes.count)
        let zeroed = try #require(catalogue.first { $0.name.hasPrefix("page[2] zeroed") })
        #expect(zeroed.bytes[(layout.pageSize)..<(2 * layout.pageSize)].allSatisfy { $0 == 0 })
        // SQL that no longer parses: SQLite says so.
        let broken = try #require(catalogue.first { $0.name.hasSuffix(".sql=syntax-error") })
        guard case .invalid(let violation) = format.validator.validate(broken.bytes) else {
            Issue.record("a schema that does not parse was called valid")
            return
        }
        #expect(violation.message.contains("malformed database schema"), "\(violation)")
        // A consistent lie about a column's type: SQLite reads the row, the column-type rule does not.
        let lie = try #require(catalogue.first { $0.name.contains("(notes).cell[0].column[4].serial-type=int-as-text") })
        guard case .invalid(let typeViolation) = format.validator.validate(lie.bytes) else {
            Issue.record("an integer read as text was called valid")
            return
        }
        #expect(typeViolation.message.contains("[rule: column type]"), "\(typeViolation)")
    }

    @Test("a flipped bit in an early log frame makes SQLite drop later commits silently; the validator says so")
    func walSilentLoss() throws {
        // The first seed whose log holds two transactions or more.
        var found: (SQLiteFormat, [UInt8], WALFile)?
        for index: UInt64 in 0..<30 where found == nil {
            let (format, bytes) = try Self.seed(.wal, index)
            let files = try SQLiteFiles.decode(bytes)
            let wal = WALFile(try #require(files.wal), databasePageSize: SQLiteLayout.pageSize(of: files.database))
            if (0..<wal.frameCount).filter({ wal.commitSize(ofFrame: $0) != 0 }).count >= 2 { found = (format, bytes, wal) }
        }
        let (format, bytes, wal) = try #require(found)
        let intact = try SQLiteFiles.withTemporaryDatabase(bytes) {
            try sqliteRows($0, "SELECT (SELECT count(*) FROM folders) + (SELECT count(*) FROM notes) + (SELECT count(*) FROM attachments)")
        }
        let mutation = try #require(format.sqliteMutator.catalogue(of: bytes).first { $0.name == "wal.frame[0].page-bit-flip" })
        #expect(mutation.expectation?.reason == .corrupt)
        // SQLite opens it without an error, passes integrity_check, and has fewer rows.
        let damaged = try SQLiteFiles.withTemporaryDatabase(mutation.bytes) { path in
            (
                try sqliteRows(path, "PRAGMA integrity_check"),
                try sqliteRows(path, "SELECT (SELECT count(*) FROM folders) + (SELECT count(*) FROM notes) + (SELECT count(*) FROM attachments)")
            )
        }
        #expect(damaged.0 == [["ok"]])
        #expect(Int(damaged.1[0][0])! < Int(intact[0][0])!, "rows: \(damaged.1) of \(intact)")
        guard case .invalid(let violation) = format.validator.validate(mutation.bytes) else {
            Issue.record("the silent loss was called valid")
            return
        }
        #expect(violation.message.contains("[rule: the log drops committed transactions]"))
        // The same flip in the last transaction is a torn write SQLite rolls back: valid.
        let torn = try #require(
            format.sqliteMutator.catalogue(of: bytes).first {
                $0.name == "wal.frame[\(wal.frameCount - 1)].page-bit-flip (last transaction: SQLite drops it as a torn write)"
            })
        #expect(torn.expectation == nil)
        #expect(format.validator.validate(torn.bytes).isValid)
    }

    @Test("bundles: encode and decode, readable by tar, a broken one is corrupt")
    func bundles() throws {
        let files = SQLiteFiles(database: Array(repeating: 7, count: 1500), wal: [1, 2, 3])
        let bytes = files.encoded()
        #expect(SQLiteFiles.isBundle(bytes))
        #expect(try SQLiteFiles.decode(bytes) == files)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cf-bundle-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(bytes).write(to: folder.appendingPathComponent("b.tar"))
        let tar = Process()
        tar.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        tar.arguments = ["tar", "-xf", folder.appendingPathComponent("b.tar").path, "-C", folder.path]
        try tar.run()
        tar.waitUntilExit()
        #expect(tar.terminationStatus == 0)
        #expect(FileManager.default.contents(atPath: folder.appendingPathComponent("main.db-wal").path) == Data([1, 2, 3]))
        var broken = bytes
        broken[10] ^= 1
        #expect(throws: SQLiteFiles.BundleProblem.self) { try SQLiteFiles.decode(broken) }
        let description = try #require(NoteStoreFormat.description)
        guard case .invalid(let violation) = SQLiteValidator(description).validate(broken) else {
            Issue.record("a broken bundle was called valid")
            return
        }
        #expect(violation.reason == .corrupt && violation.path == "bundle")
    }

    @Test("the validator never hangs or traps on random mutations, and says what is wrong")
    func randomMutations() throws {
        for mode in [SQLiteDescription.JournalMode.rollback, .wal] {
            let (format, bytes) = try Self.seed(mode, 8)
            var rng = FuzzRNG(seed: 17)
            var invalid = 0
            for _ in 0..<120 {
                guard let mutation = format.sqliteMutator.mutate(bytes, using: &rng) else { continue }
                if case .invalid(let violation) = format.validator.validate(mutation.bytes) {
                    invalid += 1
                    #expect(!violation.message.isEmpty)
                }
            }
            #expect(invalid > 20, "\(mode): \(invalid)")
        }
    }
}
