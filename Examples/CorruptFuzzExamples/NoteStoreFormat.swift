// Needs the SQLite trait (on by default).
#if SQLite
    import CorruptFuzzCore
    import CorruptFuzzSQLite
    import Foundation

    /// The note-store app's SQLite database as a fuzzing format (`--format sqlite` without
    /// `--schema`, and `--format sqlite-wal` for the same database in WAL mode): the description
    /// in `Corpus/schemas/note-store.sql`, whose text this is (a test keeps them equal), judged by
    /// ``SQLiteValidator`` and corrupted by ``SQLiteMutator``.
    public enum NoteStoreFormat {
        /// The description's source, `Corpus/schemas/note-store.sql`.
        public static let sql = """
            -- The bundled note-store app's database (corrupt-fuzz's sqlite example, loaders in
            -- Examples/SQLiteLoaders). The schema is SQL DDL; `-- corrupt-fuzz:` lines describe the rows
            -- and the file (Docs/Formats.md: "SQLite databases").
            -- corrupt-fuzz: page_size 1024 4096
            -- corrupt-fuzz: user_version 2
            -- corrupt-fuzz: rows folders 1..4
            -- corrupt-fuzz: rows notes 0..16
            -- corrupt-fuzz: rows attachments 0..4
            -- corrupt-fuzz: column folders.name text 1..24
            -- corrupt-fuzz: column notes.title text 1..40
            -- corrupt-fuzz: column notes.created int 1600000000..1800000000
            -- corrupt-fuzz: column notes.updated int 1600000000..1800000000
            -- corrupt-fuzz: column attachments.data blob 1..3000
            -- corrupt-fuzz: rule created-before-updated: SELECT id FROM notes WHERE created > updated
            -- corrupt-fuzz: rule title-not-empty: SELECT id FROM notes WHERE length(title) = 0
            CREATE TABLE folders (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE notes (
                id INTEGER PRIMARY KEY,
                folder_id INTEGER NOT NULL REFERENCES folders(id),
                title TEXT NOT NULL,
                body TEXT NOT NULL,
                created INTEGER NOT NULL,
                updated INTEGER NOT NULL
            );
            CREATE INDEX notes_by_folder ON notes(folder_id, updated);
            CREATE TABLE attachments (id INTEGER PRIMARY KEY, note_id INTEGER NOT NULL REFERENCES notes(id), data BLOB NOT NULL);

            """

        /// The description in rollback-journal mode; nil only if SQLite cannot read it.
        public static let description: SQLiteDescription? = try? SQLiteDescription(sql: sql, name: "note-store")

        /// The format (rollback journal, or WAL with bundles of database and log).
        public static func format(journalMode: SQLiteDescription.JournalMode = .rollback) -> SQLiteFormat? {
            guard var description else { return nil }
            description.journalMode = journalMode
            if journalMode == .wal { description.name = "note-store-wal" }
            return SQLiteFormat(description: description)
        }
    }
#endif
