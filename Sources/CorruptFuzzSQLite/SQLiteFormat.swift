import CorruptFuzzCore

/// SQLite databases as a user-data format: generated from a ``SQLiteDescription`` with the real
/// SQLite, corrupted page by page (``SQLiteMutator``), judged by ``SQLiteValidator``.
///
/// ```swift
/// let format = try SQLiteFormat(description: SQLiteDescription(contentsOf: "app.sql"))
/// assertLoaderSurvivesCorruption("store", format: format) { data in
///     try SQLiteFiles.withTemporaryDatabase(data) { path in try NoteStore(path: path).allNotes() }
/// }
/// ```
///
/// An input is the database file itself, or, in WAL mode, a bundle of the database and its
/// `-wal` file (``SQLiteFiles``), extension `sqlite.tar`.
public struct SQLiteFormat: FuzzFormat {
    public let description: SQLiteDescription
    public let sqliteMutator: SQLiteMutator
    public let sqliteValidator: SQLiteValidator

    public init(description: SQLiteDescription) {
        self.description = description
        sqliteMutator = SQLiteMutator(description)
        sqliteValidator = SQLiteValidator(description)
    }

    public var fileExtension: String { description.journalMode == .wal ? "sqlite.tar" : "sqlite" }
    public var validator: any Validator { sqliteValidator }
    public var mutator: (any StructureAwareMutator)? { sqliteMutator }
}
