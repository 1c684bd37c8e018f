import CorruptFuzzCore
import Foundation

/// Builds databases from a ``SQLiteDescription`` with the real SQLite, deterministically from a
/// seed: the same description, seed and SQLite library give the same bytes.
///
/// SQLite's files hold nothing random in rollback mode (the change counter and schema cookie
/// count commits). In WAL mode the log header's salts come from `sqlite3_randomness`: the
/// generator replaces them with salts drawn from the seed and recomputes every checksum
/// (``WALFile/setSalts(_:_:)``), which is what SQLite would have written with those salts.
/// The main file and the log are read while the connection is still open, because closing the
/// last connection checkpoints the log into the main file and deletes it.
public struct SQLiteGenerator: Sendable {
    public let description: SQLiteDescription

    public init(_ description: SQLiteDescription) { self.description = description }

    /// One database's files.
    /// - Throws: ``SQLiteError`` when SQLite fails (a disk problem, or a schema the rows cannot satisfy).
    public func files(using rng: inout FuzzRNG) throws -> SQLiteFiles {
        try ScratchFolder.with(prefix: "corrupt-fuzz-sqlite") { folder in try build(in: folder.path, rng: &rng) }
    }

    /// One database as an input's bytes (a bundle in WAL mode); empty if SQLite failed.
    public func generate(using rng: inout FuzzRNG) -> [UInt8] {
        (try? files(using: &rng).encoded()) ?? []
    }

    private func build(in folder: String, rng: inout FuzzRNG) throws -> SQLiteFiles {
        let path = folder + "/" + SQLiteFiles.databaseMember
        let connection = try SQLiteConnection(path: path, readOnly: false)
        defer { connection.close() }
        let pageSize = description.pageSizes[rng.below(description.pageSizes.count)]
        try connection.execute(
            """
            PRAGMA page_size = \(pageSize); PRAGMA auto_vacuum = \(description.autoVacuum.rawValue); PRAGMA journal_mode = DELETE;
            PRAGMA synchronous = OFF; PRAGMA foreign_keys = ON; PRAGMA user_version = \(description.userVersion);
            """)
        try connection.execute("BEGIN")
        try connection.execute(description.ddl)
        var keys = Keys()
        for table in description.tables {
            let range = description.rows[table.name.lowercased()] ?? SQLiteDescription.defaultRows
            for _ in 0..<(range.lowerBound + rng.below(range.count)) { try insertRow(table, connection, &keys, &rng) }
        }
        try connection.execute("COMMIT")
        let free = description.freePages.lowerBound + rng.below(description.freePages.count)
        if free > 0 {
            // Filler rows dropped with their table: their pages go to the freelist (or, with
            // auto_vacuum = full, are given back to the file system).
            try connection.execute("CREATE TABLE corrupt_fuzz_filler (x BLOB)")
            for _ in 0..<free { try connection.execute("INSERT INTO corrupt_fuzz_filler VALUES (zeroblob(\(max(1, pageSize - 64))))") }
            try connection.execute("DROP TABLE corrupt_fuzz_filler")
        }
        guard description.journalMode == .wal else {
            connection.close()
            return SQLiteFiles(database: try Self.read(path))
        }
        try connection.execute("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0")
        let transactions = description.walTransactions.lowerBound + rng.below(description.walTransactions.count)
        for _ in 0..<transactions {
            try connection.execute("BEGIN")
            for _ in 0..<(1 + rng.below(3)) {
                let table = description.tables[rng.below(description.tables.count)]
                try insertRow(table, connection, &keys, &rng)
            }
            try connection.execute("COMMIT")
        }
        let database = try Self.read(path)
        var wal = WALFile(try Self.read(path + "-wal"))
        wal.setSalts(UInt32(truncatingIfNeeded: rng.next()), UInt32(truncatingIfNeeded: rng.next()))
        return SQLiteFiles(database: database, wal: wal.bytes)
    }

    static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw SQLiteError(code: 14, message: "cannot read back \(path)") }
        return [UInt8](data)
    }

    // MARK: - Rows

    /// Keys inserted so far, per table and column, for foreign keys to refer to.
    struct Keys {
        var values: [String: [SQLiteValue]] = [:]
        func key(_ table: String, _ column: String) -> String { table.lowercased() + "." + column.lowercased() }
    }

    /// Inserts one row that satisfies the schema's constraints and the app's rules, trying a
    /// few draws; a table whose rows all fail gets fewer rows.
    private func insertRow(_ table: SQLiteTable, _ connection: SQLiteConnection, _ keys: inout Keys, _ rng: inout FuzzRNG) throws {
        for _ in 0..<8 {
            let row = drawRow(table, keys, &rng)
            try connection.execute("SAVEPOINT row")
            let names = row.map { "\"" + $0.name.replacing("\"", with: "\"\"") + "\"" }.joined(separator: ", ")
            let marks = Array(repeating: "?", count: row.count).joined(separator: ", ")
            let quoted = "\"" + table.name.replacing("\"", with: "\"\"") + "\""
            let sql = row.isEmpty ? "INSERT INTO \(quoted) DEFAULT VALUES" : "INSERT INTO \(quoted) (\(names)) VALUES (\(marks))"
            var fine = (try? connection.query(sql, row.map(\.value))) != nil
            if fine { fine = try description.rules.allSatisfy { rule in try connection.query(rule.query, limit: 1).isEmpty } }
            if !fine {
                try connection.execute("ROLLBACK TO row; RELEASE row")
                continue
            }
            try connection.execute("RELEASE row")
            // Remember the keys other tables may refer to.
            let rowid = try connection.integer("SELECT last_insert_rowid()")
            for column in table.columns {
                let value = row.first { $0.name == column.name }?.value ?? (column.name == table.rowidAlias ? .integer(rowid) : nil)
                if let value { keys.values[keys.key(table.name, column.name), default: []].append(value) }
            }
            keys.values[keys.key(table.name, "rowid"), default: []].append(.integer(rowid))
            return
        }
    }

    private func drawRow(_ table: SQLiteTable, _ keys: Keys, _ rng: inout FuzzRNG) -> [(name: String, value: SQLiteValue)] {
        let custom = description.rowGenerators[table.name.lowercased()]?.draw(&rng)
        var row: [(name: String, value: SQLiteValue)] = []
        for column in table.columns {
            if column.name == table.rowidAlias, custom?[column.name] == nil { continue }  // SQLite numbers it
            if let foreign = table.foreignKeys.first(where: { $0.column.lowercased() == column.name.lowercased() }) {
                let parent = keys.key(foreign.parentTable, foreign.parentColumn ?? "rowid")
                if let candidates = keys.values[parent], !candidates.isEmpty, !(!column.notNull && rng.oneIn(6)) {
                    row.append((column.name, candidates[rng.below(candidates.count)]))
                } else {
                    row.append((column.name, .null))
                }
                continue
            }
            if let value = custom?[column.name] {
                row.append((column.name, value))
            } else if let generator = description.columns[table.name.lowercased() + "." + column.name.lowercased()] {
                row.append((column.name, generator.draw(&rng)))
            } else {
                row.append((column.name, defaultValue(column, &rng)))
            }
        }
        return row
    }

    private func defaultValue(_ column: SQLiteTable.Column, _ rng: inout FuzzRNG) -> SQLiteValue {
        if !column.notNull, column.primaryKey == 0, rng.oneIn(6) { return .null }
        switch column.affinity {
        case .integer, .numeric:
            return rng.oneIn(8)
                ? [.integer(0), .integer(-1), .integer(Int64.max), .integer(Int64.min)][rng.below(4)] : .integer(Int64(rng.below(2_000_000)) - 1000)
        case .real: return .real(Double(rng.below(2_000_001) - 1_000_000) / 64)
        case .text:
            // Now and then long enough to need overflow pages.
            let length = rng.oneIn(5) ? 500 + rng.below(5000) : rng.below(40)
            return .text(SQLiteRowGenerator.text(length: length, rng: &rng))
        case .blob:
            let length = rng.oneIn(5) ? 500 + rng.below(5000) : rng.below(40)
            return .blob((0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        }
    }
}
