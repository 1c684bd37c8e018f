import CCorruptFuzzSQLite
import Foundation

/// The note store as a hurried app developer writes it: open, query, force-unwrap.
///
/// It never checks a result code: a statement SQLite could not prepare is force-unwrapped (a
/// trap on a file that is not a database), `sqlite3_step` returning an error ends the loop as
/// if the table ended (the rest of the notes vanish without a word), a NULL text is
/// force-unwrapped, a note's folder is looked up with `!`. A library without folders is
/// refused as empty, and on that path the statement is never finalized, so the connection
/// stays open.
public enum NaiveNoteStore {
    public struct StoreError: Error, CustomStringConvertible {
        public var reason: String
        public var description: String
    }

    public static func load(path: String) throws -> NoteLibrary {
        var db: OpaquePointer?
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil)

        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "SELECT id, name FROM folders", -1, &statement, nil)
        var folders: [NoteLibrary.Folder] = []
        while sqlite3_step(statement!) == SQLITE_ROW {
            folders.append(.init(id: sqlite3_column_int64(statement, 0), name: String(cString: sqlite3_column_text(statement, 1)!)))
        }
        if folders.isEmpty {
            throw StoreError(reason: "empty", description: "no folders")
        }
        sqlite3_finalize(statement)

        sqlite3_prepare_v2(db, "SELECT id, folder_id, title, body, created, updated FROM notes", -1, &statement, nil)
        var notes: [NoteLibrary.Note] = []
        while sqlite3_step(statement!) == SQLITE_ROW {
            let folderID = sqlite3_column_int64(statement, 1)
            let folder = folders.first { $0.id == folderID }!
            notes.append(
                .init(
                    id: sqlite3_column_int64(statement, 0), folderID: folder.id, title: String(cString: sqlite3_column_text(statement, 2)!),
                    body: String(cString: sqlite3_column_text(statement, 3)!),
                    created: Date(timeIntervalSince1970: Double(sqlite3_column_int64(statement, 4))),
                    updated: Date(timeIntervalSince1970: Double(sqlite3_column_int64(statement, 5)))))
        }
        sqlite3_finalize(statement)

        sqlite3_prepare_v2(db, "SELECT note_id, length(data) FROM attachments", -1, &statement, nil)
        var attachments: [Int64: Int] = [:]
        while sqlite3_step(statement!) == SQLITE_ROW {
            attachments[sqlite3_column_int64(statement, 0), default: 0] += Int(sqlite3_column_int64(statement, 1))
        }
        sqlite3_finalize(statement)
        sqlite3_close(db)
        return NoteLibrary(folders: folders, notes: notes, attachmentBytes: attachments)
    }
}
