import CorruptFuzzCore
import CorruptFuzzExamples
@testable import CorruptFuzzSQLite
import Foundation
import Testing

@Suite("sqlite: generation from a description")
struct SQLiteGenerationTests {
    static let small = """
        -- corrupt-fuzz: page_size 512 1024
        -- corrupt-fuzz: rows tags 0..3
        -- corrupt-fuzz: rows items 0..4
        -- corrupt-fuzz: free_pages 0..2
        -- corrupt-fuzz: rule positive-count: SELECT id FROM items WHERE count < 0
        CREATE TABLE tags (id INTEGER PRIMARY KEY, label TEXT NOT NULL UNIQUE);
        CREATE TABLE items (id INTEGER PRIMARY KEY, tag INTEGER REFERENCES tags(id), count INTEGER NOT NULL, weight REAL, data BLOB);
        """

    @Test("equal seeds give byte-identical databases, in rollback and WAL mode", arguments: [SQLiteDescription.JournalMode.rollback, .wal])
    func deterministic(mode: SQLiteDescription.JournalMode) throws {
        let format = try #require(NoteStoreFormat.format(journalMode: mode))
        for seed: UInt64 in [0, 1, 99] {
            var a = FuzzRNG(seed: seed)
            var b = FuzzRNG(seed: seed)
            let first = try format.sqliteMutator.generator.files(using: &a)
            let second = try format.sqliteMutator.generator.files(using: &b)
            #expect(first == second)
            #expect(first.database.count > 0)
            #expect((first.wal != nil) == (mode == .wal))
        }
        var a = FuzzRNG(seed: 1)
        var b = FuzzRNG(seed: 2)
        #expect(format.sqliteMutator.generate(using: &a) != format.sqliteMutator.generate(using: &b))
    }

    @Test("the log's salts come from the seed and its checksums are resealed, so SQLite reads every transaction")
    func walSalts() throws {
        let format = try #require(NoteStoreFormat.format(journalMode: .wal))
        var rng = FuzzRNG(seed: 5)
        let files = try format.sqliteMutator.generator.files(using: &rng)
        let wal = WALFile(try #require(files.wal))
        #expect(wal.headerChecksumMatches)
        let reading = wal.reading()
        #expect(reading.firstFailure == nil)
        #expect(reading.usedCommits >= 1)
        #expect(reading.usedFrames == wal.frameCount)
    }

    @Test("every generated database passes integrity_check, the schema, foreign keys, column types and the app's rules")
    func property() throws {
        let description = try SQLiteDescription(sql: Self.small, name: "small")
        let validator = SQLiteValidator(description)
        let generator = SQLiteGenerator(description)
        var rng = FuzzRNG(seed: 11)
        for index in 0..<1000 {
            let bytes = generator.generate(using: &rng)
            let verdict = validator.validate(bytes)
            #expect(verdict.isValid, "database \(index): \(verdict)")
            if !verdict.isValid { break }
        }
        for mode in [SQLiteDescription.JournalMode.rollback, .wal] {
            let format = try #require(NoteStoreFormat.format(journalMode: mode))
            var rng = FuzzRNG(seed: 3)
            for index in 0..<60 {
                let verdict = format.validator.validate(format.sqliteMutator.generate(using: &rng))
                #expect(verdict.isValid, "\(mode) database \(index): \(verdict)")
                if !verdict.isValid { break }
            }
        }
    }

    @Test("the note-store description in the corpus is the one the examples embed")
    func corpusSchema() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Corpus/schemas/note-store.sql")
        #expect(try String(contentsOf: url, encoding: .utf8) == NoteStoreFormat.sql)
        let description = try #require(NoteStoreFormat.description)
        #expect(description.userVersion == 2)
        #expect(description.pageSizes == [1024, 4096])
        #expect(description.tables.map(\.name) == ["folders", "notes", "attachments"])
        #expect(description.rules.map(\.name) == ["created-before-updated", "title-not-empty"])
    }

    @Test("rows from a Codable model drawn by Arbitrary, with overrides")
    func codableRows() throws {
        struct Item: Codable, Sendable {
            var count: Int
            var weight: Double
            var data: Data
        }
        var description = try SQLiteDescription(sql: Self.small)
        description.rows["items"] = 5...5
        description.rowGenerators["items"] = .arbitrary(Item.self, overrides: ["count": .range(7...9)])
        var rng = FuzzRNG(seed: 1)
        let bytes = SQLiteGenerator(description).generate(using: &rng)
        #expect(SQLiteValidator(description).validate(bytes).isValid)
        let counts = try SQLiteFiles.withTemporaryDatabase(bytes) { path in try sqliteRows(path, "SELECT count, typeof(weight), typeof(data) FROM items") }
        #expect(counts.count == 5)
        #expect(counts.allSatisfy { ["7", "8", "9"].contains($0[0]) && $0[1] == "real" && $0[2] == "blob" }, "\(counts)")
    }

    @Test(
        "a broken description says what is wrong",
        arguments: [
            ("CREATE TABLE t (x", "SQLite cannot create the schema"),
            ("-- corrupt-fuzz: page_size 1000\nCREATE TABLE t (x);", "line 1: page_size takes powers of two"),
            ("-- corrupt-fuzz: rows nope 1..2\nCREATE TABLE t (x);", "rows takes a table of the schema"),
            ("-- corrupt-fuzz: rule SELECT y FROM t\nCREATE TABLE t (x);", "does not run on the schema"),
            ("-- corrupt-fuzz: colour blue\nCREATE TABLE t (x);", "unknown directive 'colour'"),
            ("CREATE INDEX i ON nothing(x);", "SQLite cannot create the schema"),
        ])
    func brokenDescription(sql: String, message: String) {
        #expect {
            _ = try SQLiteDescription(sql: sql)
        } throws: { error in
            "\(error)".contains(message)
        }
    }
}

/// The rows of a query, each value as text, read by SQLite.
func sqliteRows(_ path: String, _ sql: String) throws -> [[String]] {
    let connection = try SQLiteConnection(path: path, readOnly: true)
    return try connection.query(sql).map { row in
        row.map { value in
            switch value {
            case .integer(let number): String(number)
            case .text(let text): text
            default: value.description
            }
        }
    }
}
