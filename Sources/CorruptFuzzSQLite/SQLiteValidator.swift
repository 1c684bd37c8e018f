import CorruptFuzzCore
import Foundation

/// The sqlite format's reference validator: what SQLite itself finds wrong with a database,
/// and what breaks the description's schema and the app's rules.
///
/// Checks, in order, each with the reason a loader should give: no bytes → `empty`; a bundle
/// (database + WAL) that cannot be unpacked, or a WAL that silently drops committed
/// transactions (``WALFile/silentLossProblem``) → `corrupt`; a header SQLite refuses (magic,
/// page size, payload fractions) → `corrupt`, a read version above 2 (a newer SQLite file
/// format) → `unsupported-version` (the header of page 1 as SQLite reads it: the log's newest
/// committed copy when there is one, which replaces the main file's whole); then, on a read-only copy in a private
/// temporary folder, with a budget of virtual-machine steps: `PRAGMA integrity_check` (every
/// problem it lists), `user_version` above the description's → `unsupported-version`, below →
/// `corrupt`, the schema's entries (type, name and SQL) against the description's, `PRAGMA foreign_key_check`,
/// each column's storage class against its declared type, the app's rules (queries that must
/// return no rows), and every row read to the end → `corrupt`. A database that needs more steps
/// than the budget is undecided, never a hang.
public struct SQLiteValidator: Validator {
    public let description: SQLiteDescription
    public var name: String { "sqlite reference validator (\(description.name))" }
    /// Thousands of virtual-machine steps all checks of one input may take.
    public var stepBudget = 20_000
    /// Inputs larger than this are undecided.
    public var maxInputLength = 64 << 20

    /// The schema's entries as SQLite writes them, to compare a file's against.
    let referenceSchema: Set<[SQLiteValue]>

    public init(_ description: SQLiteDescription) {
        self.description = description
        referenceSchema = Self.schemaEntries(description.ddl)
    }

    public func validate(_ bytes: [UInt8]?) -> Verdict {
        switch violations(in: bytes, limit: 1) {
        case .success(let found): found.first.map(Verdict.invalid) ?? .valid
        case .failure(let undecided): .undecided(undecided.message)
        }
    }

    /// Why the validator could not decide.
    public struct Undecided: Error, Sendable {
        public var message: String
    }

    /// Every violation found, up to `limit` (the checks stop at the first stage that finds any).
    public func violations(in bytes: [UInt8]?, limit: Int = 50) -> Result<[Violation], Undecided> {
        if let intrinsic = Violation.intrinsic(for: bytes) { return .success([intrinsic]) }
        let bytes = bytes ?? []
        if bytes.count > maxInputLength { return .failure(Undecided(message: "\(bytes.count) bytes is more than the validator reads")) }
        let files: SQLiteFiles
        do throws(SQLiteFiles.BundleProblem) {
            files = try SQLiteFiles.decode(bytes)
        } catch {
            return .success([Violation(.corrupt, error.message, at: "bundle")])
        }
        let log = files.wal.map { WALFile($0, databasePageSize: SQLiteLayout.pageSize(of: files.database)) }
        if let loss = log?.silentLossProblem { return .success([Violation(.corrupt, loss, at: "wal")]) }
        // SQLite reads page 1 from the log when the log holds a committed copy of it.
        if let problem = Self.headerProblem(log?.latestCopy(ofPage: 1) ?? files.database) { return .success([problem]) }
        do {
            return try ScratchFolder.with(prefix: "corrupt-fuzz-sqlite") { folder in
                let path = try files.write(into: folder.path)
                return check(path: path, limit: limit)
            }
        } catch {
            return .failure(Undecided(message: "cannot write a temporary copy: \(error.localizedDescription)"))
        }
    }

    /// What SQLite refuses in the 100-byte header before reading any page.
    public static func headerProblem(_ database: [UInt8]) -> Violation? {
        if database.isEmpty { return Violation(.corrupt, "the database file is empty", at: "header") }
        guard database.count >= 100 else { return Violation(.corrupt, "\(database.count) bytes is shorter than the 100-byte header", at: "header") }
        guard database[0..<16].elementsEqual(SQLiteLayout.magic) else { return Violation(.corrupt, "not a SQLite database (magic)", at: "header.magic") }
        let raw = Int(database[16]) << 8 | Int(database[17])
        let pageSize = raw == 1 ? 65536 : raw
        guard pageSize >= 512, pageSize & (pageSize - 1) == 0 else {
            return Violation(.corrupt, "page size \(raw) is not a power of two from 512 to 65536", at: "header.page-size")
        }
        if database[19] > 2 { return Violation(.unsupportedVersion, "read version \(database[19]): a newer SQLite file format", at: "header.read-version") }
        guard database[21] == 64, database[22] == 32, database[23] == 32 else {
            return Violation(.corrupt, "payload fractions \(database[21]), \(database[22]), \(database[23]) are not 64, 32, 32", at: "header.payload-fractions")
        }
        if pageSize - Int(database[20]) < 480 { return Violation(.corrupt, "\(database[20]) reserved bytes leave less than 480 usable", at: "header.reserved") }
        return nil
    }

    // MARK: - SQLite's checks

    private func check(path: String, limit: Int) -> Result<[Violation], Undecided> {
        var found: [Violation] = []
        func corrupt(_ error: SQLiteError, _ at: String) -> Result<[Violation], Undecided> {
            if error.isInterrupt { return .failure(Undecided(message: "checking needs more than \(stepBudget)k SQLite steps")) }
            if error.code == 7 { return .failure(Undecided(message: "SQLite ran out of memory")) }
            return .success([Violation(.corrupt, error.message + " (SQLite error \(error.code))", at: at)])
        }
        let connection: SQLiteConnection
        do throws(SQLiteError) {
            connection = try SQLiteConnection(path: path, readOnly: true, stepBudget: stepBudget)
        } catch {
            return corrupt(error, "open")
        }
        defer { connection.close() }
        var stage = "integrity_check"
        do throws(SQLiteError) {
            try connection.execute("PRAGMA cell_size_check = ON")
            for row in try connection.query("PRAGMA integrity_check(\(max(1, limit)))") {
                guard case .text(let text) = row.first, text != "ok" else { continue }
                found.append(Violation(.corrupt, text, at: "integrity_check"))
            }
            if !found.isEmpty { return .success(found) }
            stage = "user_version"
            let version = try connection.integer("PRAGMA user_version")
            if version > description.userVersion {
                return .success([Violation(.unsupportedVersion, "\(version) is newer than \(description.userVersion)", at: "user_version")])
            }
            if version < description.userVersion {
                return .success([Violation(.corrupt, "\(version) is older than \(description.userVersion), which the description writes", at: "user_version")])
            }
            stage = "sqlite_schema"
            let entries = try connection.query("SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'")
            let present = Set(entries)
            for entry in referenceSchema.subtracting(present).sorted(by: { $0.description < $1.description }) {
                found.append(Violation(.corrupt, "\(entry[0]) \(entry[1]) is missing or changed", at: "sqlite_schema"))
            }
            for entry in present.subtracting(referenceSchema).sorted(by: { $0.description < $1.description }) {
                found.append(Violation(.corrupt, "\(entry[0]) \(entry[1]) is not in the description", at: "sqlite_schema"))
            }
            if !found.isEmpty { return .success(Array(found.prefix(limit))) }
            stage = "foreign_key_check"
            for row in try connection.query("PRAGMA foreign_key_check", limit: limit) {
                found.append(Violation(.corrupt, "row \(row[1]) refers to a missing row of \(row[2]) [rule: foreign key]", at: "\(row[0])"))
            }
            if !found.isEmpty { return .success(found) }
            stage = "column types"
            if description.checksColumnTypes { found += try columnTypeViolations(connection, limit: limit) }
            if !found.isEmpty { return .success(found) }
            for rule in description.rules {
                stage = "rule \(rule.name)"
                for row in try connection.query(rule.query, limit: limit - found.count) {
                    found.append(
                        Violation(.corrupt, "(\(row.map(\.description).joined(separator: ", "))) breaks it [rule: \(rule.name)]", at: "rule \(rule.name)"))
                }
                if found.count >= limit { break }
            }
            if !found.isEmpty { return .success(found) }
            stage = "reading rows"
            for table in description.tables {
                stage = "reading \(table.name)"
                try connection.forEachRow("SELECT * FROM \"\(table.name.replacing("\"", with: "\"\""))\"") { _ in }
            }
        } catch {
            return corrupt(error, stage)
        }
        return .success(found)
    }

    /// Columns whose storage class is not their declared type's: an INTEGER column holds
    /// integers, REAL reals or integers, TEXT text; BLOB and NUMERIC columns anything; NULL
    /// only where the column allows it (SQLite checks that part itself).
    private func columnTypeViolations(_ connection: SQLiteConnection, limit: Int) throws(SQLiteError) -> [Violation] {
        var found: [Violation] = []
        for table in description.tables {
            for column in table.columns where column.name != table.rowidAlias {
                let allowed: [String]
                switch column.affinity {
                case .integer: allowed = ["integer"]
                case .real: allowed = ["real", "integer"]
                case .text: allowed = ["text"]
                case .blob, .numeric: continue
                }
                let quotedColumn = "\"" + column.name.replacing("\"", with: "\"\"") + "\""
                let quotedTable = "\"" + table.name.replacing("\"", with: "\"\"") + "\""
                let list = (allowed + ["null"]).map { "'\($0)'" }.joined(separator: ", ")
                let key = table.hasRowid ? "rowid" : quotedColumn
                for row in try connection.query(
                    "SELECT \(key), typeof(\(quotedColumn)) FROM \(quotedTable) WHERE typeof(\(quotedColumn)) NOT IN (\(list))", limit: 1)
                {
                    found.append(
                        Violation(
                            .corrupt, "row \(row[0]): \(row[1]) in a \(column.declaredType) column [rule: column type]",
                            at: "\(table.name).\(column.name)"))
                }
                if found.count >= limit { return found }
            }
        }
        return found
    }

    static func schemaEntries(_ ddl: String) -> Set<[SQLiteValue]> {
        guard let connection = try? SQLiteConnection(path: ":memory:", readOnly: false) else { return [] }
        guard (try? connection.execute(ddl)) != nil else { return [] }
        return Set((try? connection.query("SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'")) ?? [])
    }
}
