import CorruptFuzzCore
import Foundation

/// What a generated database looks like: the schema as SQL DDL, how rows are drawn, the file's
/// settings (page size, journal mode, auto-vacuum, `user_version`) and the app's rules.
///
/// Written in Swift, or read from a `.sql` file whose `-- corrupt-fuzz:` comments set the rest
/// (see ``init(sql:name:)``):
///
/// ```swift
/// var description = try SQLiteDescription(ddl: """
///     CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, created INTEGER NOT NULL, updated INTEGER NOT NULL);
///     """)
/// description.rules = [SQLiteRule(name: "created-before-updated", query: "SELECT id FROM notes WHERE created > updated")]
/// description.rowGenerators["notes"] = .arbitrary(Note.self, overrides: ["title": .nonEmptyString()])
/// ```
public struct SQLiteDescription: Sendable {
    /// How committed transactions reach the main file.
    public enum JournalMode: String, Sendable, CaseIterable {
        /// A rollback journal (`PRAGMA journal_mode=DELETE`): a database is one file.
        case rollback = "delete"
        /// Write-ahead log: a database is the main file plus its `-wal` file, whose last
        /// transactions are not in the main file yet (an input is a ``SQLiteBundle``).
        case wal
    }

    /// `PRAGMA auto_vacuum`.
    public enum AutoVacuum: String, Sendable, CaseIterable {
        case none, full, incremental
    }

    /// A name for reports and generated files (`app` for `app.sql`).
    public var name: String
    /// The schema: `CREATE TABLE`, `CREATE INDEX`, `CREATE VIEW`, `CREATE TRIGGER` statements.
    public let ddl: String
    /// The tables of the schema as SQLite reads them, in an order parents come before children.
    public let tables: [SQLiteTable]
    /// Page sizes to draw from (powers of two, 512...65536).
    public var pageSizes: [Int] = [4096]
    public var journalMode: JournalMode = .rollback
    public var autoVacuum: AutoVacuum = .none
    /// The schema version the app writes and reads (`PRAGMA user_version`): a file with a higher
    /// one is from a newer app (`unsupported-version`), a lower one is `corrupt`.
    public var userVersion: Int32 = 1
    /// How many rows each table gets (default ``defaultRows``).
    public var rows: [String: ClosedRange<Int>] = [:]
    /// Rows of a table made by a generator of the app's own (e.g. ``SQLiteRowGenerator/arbitrary(_:overrides:)``).
    public var rowGenerators: [String: SQLiteRowGenerator] = [:]
    /// Values of one column, keyed `table.column`, when the default for its type is not right.
    public var columns: [String: SQLiteColumnGenerator] = [:]
    /// The app's rules: queries that must return no rows.
    public var rules: [SQLiteRule] = []
    /// Transactions left in the write-ahead log (WAL mode), after the rows in the main file.
    public var walTransactions: ClosedRange<Int> = 1...3
    /// Free pages left behind (a table of filler rows dropped), so the freelist has pages.
    public var freePages: ClosedRange<Int> = 0...6
    /// Whether a generated database's columns must hold their declared type's storage class
    /// (an INTEGER column integers or NULL, TEXT text…): a record header whose serial types
    /// lie then breaks a rule, as the app's loader would see it.
    public var checksColumnTypes = true

    /// Rows per table when ``rows`` does not say.
    public static let defaultRows: ClosedRange<Int> = 0...12

    /// A description of the schema `ddl`, checked by SQLite itself.
    /// - Throws: ``SQLiteDescriptionError`` when SQLite cannot create the schema.
    public init(ddl: String, name: String = "database") throws(SQLiteDescriptionError) {
        self.ddl = ddl
        self.name = name
        tables = try Self.readTables(ddl)
    }

    /// The schema of a `.sql` file and the settings in its `-- corrupt-fuzz:` comments, one per line:
    ///
    /// ```
    /// -- corrupt-fuzz: page_size 1024 4096          (drawn per database)
    /// -- corrupt-fuzz: journal_mode wal             (or delete)
    /// -- corrupt-fuzz: auto_vacuum incremental      (none, full)
    /// -- corrupt-fuzz: user_version 3
    /// -- corrupt-fuzz: rows notes 0..40
    /// -- corrupt-fuzz: column notes.created int 1600000000..1800000000
    /// -- corrupt-fuzz: column notes.title text 1..60          (also: real A..B, blob A..B, oneof a|b|c, null)
    /// -- corrupt-fuzz: rule created-before-updated: SELECT id FROM notes WHERE created > updated
    /// -- corrupt-fuzz: wal_transactions 1..4
    /// -- corrupt-fuzz: free_pages 0..8
    /// ```
    public init(sql text: String, name: String = "database") throws(SQLiteDescriptionError) {
        try self.init(ddl: text, name: name)
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("--") else { continue }
            let comment = trimmed.dropFirst(2).trimmingCharacters(in: .whitespaces)
            guard comment.hasPrefix("corrupt-fuzz:") else { continue }
            let directive = comment.dropFirst("corrupt-fuzz:".count).trimmingCharacters(in: .whitespaces)
            do throws(SQLiteDescriptionError) {
                try apply(directive)
            } catch {
                throw SQLiteDescriptionError("line \(number + 1): \(error.message)")
            }
        }
    }

    /// Reads a `.sql` file (``init(sql:name:)``); the name is the file's, without extension.
    public init(contentsOf path: String) throws(SQLiteDescriptionError) {
        guard let data = FileManager.default.contents(atPath: path) else { throw SQLiteDescriptionError("cannot read \(path)") }
        try self.init(sql: String(decoding: data, as: UTF8.self), name: URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent)
    }

    /// The table named `name` (case-insensitive, as SQLite compares names).
    public func table(_ name: String) -> SQLiteTable? {
        tables.first { $0.name.lowercased() == name.lowercased() }
    }
}

/// A description SQLite or corrupt-fuzz cannot use, with what is wrong.
public struct SQLiteDescriptionError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// One rule of the app: a query that must return no rows (`SELECT id FROM notes WHERE created > updated`).
public struct SQLiteRule: Sendable, Hashable {
    /// A short name, used in messages as `[rule: NAME]`.
    public var name: String
    public var query: String

    public init(name: String, query: String) {
        self.name = name
        self.query = query
    }
}

/// A table as SQLite reads it from the schema: its columns and foreign keys.
public struct SQLiteTable: Sendable, Hashable {
    public struct Column: Sendable, Hashable {
        public var name: String
        /// The declared type (`INTEGER`, `TEXT`, `varchar(20)`…), empty when none.
        public var declaredType: String
        public var notNull: Bool
        /// The column's position in the primary key (1-based), 0 when not part of it.
        public var primaryKey: Int

        /// SQLite's affinity of the declared type (section 3.1 of "Datatypes In SQLite").
        public var affinity: Affinity {
            let type = declaredType.uppercased()
            if type.contains("INT") { return .integer }
            if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return .text }
            if type.isEmpty || type.contains("BLOB") { return .blob }
            if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { return .real }
            return .numeric
        }
    }

    public enum Affinity: String, Sendable, Hashable {
        case integer, text, blob, real, numeric
    }

    public struct ForeignKey: Sendable, Hashable {
        public var column: String
        public var parentTable: String
        /// The parent column; nil for the parent's primary key.
        public var parentColumn: String?
    }

    public var name: String
    public var columns: [Column]
    public var foreignKeys: [ForeignKey]
    /// Whether the table has a rowid (not `WITHOUT ROWID`).
    public var hasRowid: Bool
    /// Whether the only primary key column is an `INTEGER PRIMARY KEY` (an alias of the rowid).
    public var rowidAlias: String? {
        let keys = columns.filter { $0.primaryKey > 0 }
        guard hasRowid, keys.count == 1, keys[0].declaredType.uppercased() == "INTEGER" else { return nil }
        return keys[0].name
    }
}

// MARK: - Reading the schema and the directives

extension SQLiteDescription {
    static func readTables(_ ddl: String) throws(SQLiteDescriptionError) -> [SQLiteTable] {
        let connection: SQLiteConnection
        do throws(SQLiteError) {
            connection = try SQLiteConnection(path: ":memory:", readOnly: false)
            try connection.execute(ddl)
        } catch {
            throw SQLiteDescriptionError("SQLite cannot create the schema: \(error.message)")
        }
        let tables: [SQLiteTable]
        do throws(SQLiteError) {
            tables = try readTables(connection)
        } catch {
            throw SQLiteDescriptionError("SQLite failed reading the schema: \(error.message)")
        }
        if tables.isEmpty { throw SQLiteDescriptionError("the schema creates no table") }
        return orderedByDependency(tables)
    }

    private static func readTables(_ connection: SQLiteConnection) throws(SQLiteError) -> [SQLiteTable] {
        var tables: [SQLiteTable] = []
        let names = try connection.query("SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid")
        for row in names {
            guard case .text(let name) = row[0] else { continue }
            let sql = if case .text(let text) = row[1] { text } else { "" }
            var columns: [SQLiteTable.Column] = []
            for info in try connection.query("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)", [.text(name)]) {
                guard case .text(let column) = info[0] else { continue }
                let type = if case .text(let text) = info[1] { text } else { "" }
                let notNull = if case .integer(let flag) = info[2] { flag != 0 } else { false }
                let key = if case .integer(let position) = info[3] { Int(position) } else { 0 }
                columns.append(.init(name: column, declaredType: type, notNull: notNull, primaryKey: key))
            }
            var keys: [SQLiteTable.ForeignKey] = []
            for info in try connection.query("SELECT \"from\", \"table\", \"to\" FROM pragma_foreign_key_list(?)", [.text(name)]) {
                guard case .text(let from) = info[0], case .text(let parent) = info[1] else { continue }
                let to: String? = if case .text(let column) = info[2] { column } else { nil }
                keys.append(.init(column: from, parentTable: parent, parentColumn: to))
            }
            let withoutRowid = sql.uppercased().replacing(" ", with: "").contains("WITHOUTROWID")
            tables.append(SQLiteTable(name: name, columns: columns, foreignKeys: keys, hasRowid: !withoutRowid))
        }
        return tables
    }

    /// Parents before children (a foreign key's table first), otherwise in schema order.
    static func orderedByDependency(_ tables: [SQLiteTable]) -> [SQLiteTable] {
        var ordered: [SQLiteTable] = []
        var placed: Set<String> = []
        var left = tables
        while !left.isEmpty {
            let ready = left.firstIndex { table in
                table.foreignKeys.allSatisfy { placed.contains($0.parentTable.lowercased()) || $0.parentTable.lowercased() == table.name.lowercased() }
            }
            let next = left.remove(at: ready ?? 0)  // a cycle: take the first, its keys may stay NULL
            placed.insert(next.name.lowercased())
            ordered.append(next)
        }
        return ordered
    }

    mutating func apply(_ directive: String) throws(SQLiteDescriptionError) {
        let words = directive.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let key = words.first else { throw SQLiteDescriptionError("an empty corrupt-fuzz directive") }
        let rest = Array(words.dropFirst())
        switch key {
        case "page_size":
            let sizes = rest.compactMap { Int($0) }
            guard !sizes.isEmpty, sizes.count == rest.count, sizes.allSatisfy({ $0 >= 512 && $0 <= 65536 && $0 & ($0 - 1) == 0 }) else {
                throw SQLiteDescriptionError("page_size takes powers of two from 512 to 65536")
            }
            pageSizes = sizes
        case "journal_mode":
            guard rest.count == 1, let mode = JournalMode(rawValue: rest[0].lowercased() == "rollback" ? "delete" : rest[0].lowercased()) else {
                throw SQLiteDescriptionError("journal_mode is delete or wal")
            }
            journalMode = mode
        case "auto_vacuum":
            guard rest.count == 1, let mode = AutoVacuum(rawValue: rest[0].lowercased()) else {
                throw SQLiteDescriptionError("auto_vacuum is none, full or incremental")
            }
            autoVacuum = mode
        case "user_version":
            guard rest.count == 1, let version = Int32(rest[0]) else { throw SQLiteDescriptionError("user_version takes a 32-bit integer") }
            userVersion = version
        case "rows":
            guard rest.count == 2, table(rest[0]) != nil, let range = Self.range(rest[1]), range.lowerBound >= 0 else {
                throw SQLiteDescriptionError("rows takes a table of the schema and a range MIN..MAX")
            }
            rows[rest[0].lowercased()] = range
        case "wal_transactions", "free_pages":
            guard rest.count == 1, let range = Self.range(rest[0]), range.lowerBound >= 0, range.upperBound <= 10_000 else {
                throw SQLiteDescriptionError("\(key) takes a range MIN..MAX")
            }
            if key == "free_pages" { freePages = range } else { walTransactions = range }
        case "column":
            try applyColumn(rest)
        case "rule":
            let body = directive.dropFirst("rule".count).trimmingCharacters(in: .whitespaces)
            var name = "rule \(rules.count + 1)"
            var query = body
            if let colon = body.firstIndex(of: ":"), !body[..<colon].contains(" ") {
                name = String(body[..<colon])
                query = body[body.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            guard !query.isEmpty else { throw SQLiteDescriptionError("rule needs a query") }
            try checkRule(query)
            rules.append(SQLiteRule(name: name, query: query))
        case "column_types":
            guard rest.count == 1, ["on", "off"].contains(rest[0]) else { throw SQLiteDescriptionError("column_types is on or off") }
            checksColumnTypes = rest[0] == "on"
        default:
            throw SQLiteDescriptionError(
                "unknown directive '\(key)' (known: page_size, journal_mode, auto_vacuum, user_version, rows, column, rule, wal_transactions, free_pages, column_types)"
            )
        }
    }

    private mutating func applyColumn(_ words: [String]) throws(SQLiteDescriptionError) {
        guard words.count >= 2 else { throw SQLiteDescriptionError("column takes TABLE.COLUMN and a generator") }
        let parts = words[0].split(separator: ".").map(String.init)
        guard parts.count == 2, let table = table(parts[0]), table.columns.contains(where: { $0.name.lowercased() == parts[1].lowercased() }) else {
            throw SQLiteDescriptionError("column \(words[0]) is not a column of the schema")
        }
        let argument = words.count > 2 ? words[2...].joined(separator: " ") : ""
        let generator: SQLiteColumnGenerator
        switch words[1] {
        case "int", "integer":
            guard let range = Self.range(argument) else { throw SQLiteDescriptionError("int takes MIN..MAX") }
            generator = .integer(Int64(range.lowerBound)...Int64(range.upperBound))
        case "real":
            let bounds = argument.components(separatedBy: "..").compactMap { Double($0) }
            guard bounds.count == 2, bounds[0] <= bounds[1], bounds.allSatisfy(\.isFinite) else { throw SQLiteDescriptionError("real takes MIN..MAX") }
            generator = .real(bounds[0]...bounds[1])
        case "text":
            guard let range = Self.range(argument), range.lowerBound >= 0 else { throw SQLiteDescriptionError("text takes a length range MIN..MAX") }
            generator = .text(length: range)
        case "blob":
            guard let range = Self.range(argument), range.lowerBound >= 0 else { throw SQLiteDescriptionError("blob takes a length range MIN..MAX") }
            generator = .blob(length: range)
        case "oneof":
            let choices = argument.split(separator: "|").map { SQLiteValue.text(String($0)) }
            guard !choices.isEmpty else { throw SQLiteDescriptionError("oneof takes values a|b|c") }
            generator = .oneOf(choices)
        case "null":
            generator = .constant(.null)
        default:
            throw SQLiteDescriptionError("unknown column generator '\(words[1])' (int, real, text, blob, oneof, null)")
        }
        columns["\(table.name.lowercased()).\(parts[1].lowercased())"] = generator
    }

    /// `3..40` (or `5` for exactly 5).
    static func range(_ text: String) -> ClosedRange<Int>? {
        let bounds = text.components(separatedBy: "..")
        if bounds.count == 1, let value = Int(bounds[0]) { return value...value }
        guard bounds.count == 2, let low = Int(bounds[0]), let high = Int(bounds[1]), low <= high else { return nil }
        return low...high
    }

    /// A rule must be a query SQLite can prepare against the schema.
    private func checkRule(_ query: String) throws(SQLiteDescriptionError) {
        do throws(SQLiteError) {
            let connection = try SQLiteConnection(path: ":memory:", readOnly: false)
            try connection.execute(ddl)
            _ = try connection.query(query)
        } catch {
            throw SQLiteDescriptionError("the rule '\(query)' does not run on the schema: \(error.message)")
        }
    }
}
