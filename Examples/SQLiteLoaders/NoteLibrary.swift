import Foundation

/// What the note-store app keeps in its SQLite database: folders, notes in folders, and
/// attachments of notes (corrupt-fuzz's sqlite example; `Corpus/schemas/note-store.sql`).
public struct NoteLibrary: Sendable, Hashable {
    public struct Folder: Sendable, Hashable {
        public var id: Int64
        public var name: String
    }

    public struct Note: Sendable, Hashable {
        public var id: Int64
        public var folderID: Int64
        public var title: String
        public var body: String
        public var created: Date
        public var updated: Date
    }

    public var folders: [Folder]
    public var notes: [Note]
    /// Attachment bytes per note id.
    public var attachmentBytes: [Int64: Int]

    /// One line per folder and note, for a loader's digest.
    public var digest: String {
        (folders.map { "folder \($0.id) \($0.name)" }
            + notes.map { "note \($0.id) in \($0.folderID): \($0.title) (\($0.body.count) chars, \(attachmentBytes[$0.id] ?? 0) attachment bytes)" })
            .joined(separator: "\n")
    }

    /// The schema version this app writes (`PRAGMA user_version`).
    public static let schemaVersion: Int64 = 2

    /// The schema, as the app created it: each entry's type, name and SQL.
    public static let schema: [(type: String, name: String, sql: String)] = [
        ("table", "folders", "CREATE TABLE folders (id INTEGER PRIMARY KEY, name TEXT NOT NULL)"),
        (
            "table", "notes",
            """
            CREATE TABLE notes (
                id INTEGER PRIMARY KEY,
                folder_id INTEGER NOT NULL REFERENCES folders(id),
                title TEXT NOT NULL,
                body TEXT NOT NULL,
                created INTEGER NOT NULL,
                updated INTEGER NOT NULL
            )
            """
        ),
        ("index", "notes_by_folder", "CREATE INDEX notes_by_folder ON notes(folder_id, updated)"),
        ("table", "attachments", "CREATE TABLE attachments (id INTEGER PRIMARY KEY, note_id INTEGER NOT NULL REFERENCES notes(id), data BLOB NOT NULL)"),
    ]
}
