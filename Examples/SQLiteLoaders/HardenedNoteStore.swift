import CCorruptFuzzSQLite
import Foundation

/// The note store written to survive corrupt databases: every result code checked, SQLite's
/// corruption errors (`SQLITE_CORRUPT` 11, `SQLITE_NOTADB` 26) reported as `corrupt` with
/// SQLite's message, every statement finalized and the connection closed on every path.
///
/// On open, in order: a missing file is `not-found`, an empty one `empty`; the 100-byte header
/// is read by hand (magic, page size, payload fractions → `corrupt`; a read version above 2, a
/// newer SQLite file format → `unsupported-version`); a `-wal` file beside the database is
/// checked frame by frame (``WALCheck``: SQLite silently drops every commit after a frame that
/// fails its checksum, so a failing frame followed by later commits is `corrupt`); then the
/// database is opened read-only with a budget of virtual-machine steps (a hostile file cannot
/// hang the app) and checked: `PRAGMA integrity_check` (the first version ran `quick_check`,
/// which misses an index that lost a row: fuzzing found it), `user_version` (above 2 →
/// `unsupported-version`), the schema entries the app created, `PRAGMA foreign_key_check`;
/// then rows are read with every column's type checked and the app's rules (a non-empty
/// title, created no later than updated).
public enum HardenedNoteStore {
    /// Why a database was refused, with the reason word corrupt-fuzz reads.
    public struct StoreError: Error, Hashable, CustomStringConvertible {
        public var reason: String
        public var message: String
        public var description: String { "\(reason): \(message)" }

        static func corrupt(_ message: String) -> Self { Self(reason: "corrupt", message: message) }
    }

    /// No note library is larger.
    public static let maxFileSize = 64 << 20
    /// Thousands of SQLite virtual-machine steps one load may take.
    public static let stepBudget = 50_000

    public static func load(path: String) throws(StoreError) -> NoteLibrary {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        guard let attributes else { throw StoreError(reason: "not-found", message: "\(path) does not exist") }
        let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        if size == 0 { throw StoreError(reason: "empty", message: "the database file is empty") }
        if size > maxFileSize { throw .corrupt("\(size) bytes is more than a note library's \(maxFileSize)") }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw StoreError(reason: "not-found", message: "cannot open \(path)") }
        let header = [UInt8]((try? handle.read(upToCount: 100)) ?? Data())
        try? handle.close()
        var pageOne = header
        if let data = FileManager.default.contents(atPath: path + "-wal") {
            let wal = [UInt8](data)
            let stated = header.count >= 18 ? Int(header[16]) << 8 | Int(header[17]) : 0
            if let problem = WALCheck.problem(in: wal, databasePageSize: stated == 1 ? 65536 : stated) { throw .corrupt(problem) }
            // With a log, SQLite reads page 1 from the log's newest committed copy of it.
            if let copy = WALCheck.newestPageOne(in: wal) { pageOne = Array(copy.prefix(100)) }
        }
        try checkHeader(pageOne)
        let connection = try Connection(path: path)
        defer { connection.close() }
        return try read(connection)
    }

    /// Checks what SQLite refuses in page 1's header, so a newer file format is told apart.
    private static func checkHeader(_ header: [UInt8]) throws(StoreError) {
        guard header.count == 100 else { throw .corrupt("\(header.count) bytes is shorter than SQLite's 100-byte header") }
        guard header[0..<16].elementsEqual("SQLite format 3\0".utf8) else { throw .corrupt("not a SQLite database") }
        let raw = Int(header[16]) << 8 | Int(header[17])
        let pageSize = raw == 1 ? 65536 : raw
        guard pageSize >= 512, pageSize & (pageSize - 1) == 0 else { throw .corrupt("page size \(raw) is not a power of two") }
        if header[19] > 2 { throw StoreError(reason: "unsupported-version", message: "read version \(header[19]) is a newer SQLite file format") }
        guard header[21] == 64, header[22] == 32, header[23] == 32 else { throw .corrupt("the payload fractions are not 64, 32, 32") }
        if pageSize - Int(header[20]) < 480 { throw .corrupt("too many reserved bytes per page") }
    }

    private static func read(_ db: Connection) throws(StoreError) -> NoteLibrary {
        // integrity_check, not quick_check: quick_check does not compare indexes with their
        // tables, and fuzzing found databases whose index had lost a row read without a word.
        let check = try db.rows("PRAGMA integrity_check(1)")
        if let first = check.first?.first, case .text(let text) = first, text != "ok" { throw .corrupt("integrity_check: \(text)") }
        guard case .integer(let version)? = try db.rows("PRAGMA user_version").first?.first else { throw .corrupt("no user_version") }
        if version > NoteLibrary.schemaVersion {
            throw StoreError(reason: "unsupported-version", message: "schema version \(version) is newer than \(NoteLibrary.schemaVersion)")
        }
        if version < NoteLibrary.schemaVersion { throw .corrupt("schema version \(version) was never written by this app") }
        let entries = try db.rows("SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name")
        let found = Set(entries.map { $0.map(\.textValue) })
        let expected = Set(NoteLibrary.schema.map { [$0.type, $0.name, $0.sql] })
        if found != expected { throw .corrupt("the schema is not the app's: \(found.subtracting(expected).map { $0[1] ?? "?" }.sorted())") }
        if let dangling = try db.rows("PRAGMA foreign_key_check").first {
            throw .corrupt("\(dangling[0].textValue ?? "?") row \(dangling[1]) refers to a missing row")
        }

        var folders: [NoteLibrary.Folder] = []
        for row in try db.rows("SELECT id, name FROM folders") {
            guard case .integer(let id) = row[0], case .text(let name) = row[1] else { throw .corrupt("folder \(row[0]): a column has the wrong type") }
            folders.append(.init(id: id, name: name))
        }
        let folderIDs = Set(folders.map(\.id))
        var notes: [NoteLibrary.Note] = []
        for row in try db.rows("SELECT id, folder_id, title, body, created, updated FROM notes") {
            guard case .integer(let id) = row[0], case .integer(let folder) = row[1], case .text(let title) = row[2], case .text(let body) = row[3],
                case .integer(let created) = row[4], case .integer(let updated) = row[5]
            else { throw .corrupt("note \(row[0]): a column has the wrong type") }
            guard folderIDs.contains(folder) else { throw .corrupt("note \(id): folder \(folder) does not exist") }
            guard !title.isEmpty else { throw .corrupt("note \(id): empty title") }
            guard created <= updated else { throw .corrupt("note \(id): created after updated") }
            notes.append(
                .init(
                    id: id, folderID: folder, title: title, body: body, created: Date(timeIntervalSince1970: Double(created)),
                    updated: Date(timeIntervalSince1970: Double(updated))))
        }
        let noteIDs = Set(notes.map(\.id))
        var attachments: [Int64: Int] = [:]
        for row in try db.rows("SELECT id, note_id, data FROM attachments") {
            guard case .integer(let id) = row[0], case .integer(let note) = row[1], case .blob(let count) = row[2] else {
                throw .corrupt("attachment \(row[0]): a column has the wrong type")
            }
            guard noteIDs.contains(note) else { throw .corrupt("attachment \(id): note \(note) does not exist") }
            attachments[note, default: 0] += count
        }
        return NoteLibrary(folders: folders, notes: notes, attachmentBytes: attachments)
    }

    // MARK: - SQLite, every result checked

    enum Value: CustomStringConvertible {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
        case blob(Int)
        var textValue: String? { if case .text(let text) = self { text } else { nil } }
        var description: String {
            switch self {
            case .null: "NULL"
            case .integer(let value): String(value)
            case .real(let value): String(value)
            case .text(let text): "'\(text.prefix(40))'"
            case .blob(let count): "\(count)-byte blob"
            }
        }
    }

    /// One read-only connection, closed by ``close()`` on every path.
    final class Connection {
        private var db: OpaquePointer?
        private let budget = UnsafeMutablePointer<Int>.allocate(capacity: 1)

        init(path: String) throws(StoreError) {
            budget.initialize(to: HardenedNoteStore.stepBudget)
            let status = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil)
            guard status == SQLITE_OK else {
                let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
                close()
                throw Connection.error(status, message)
            }
            sqlite3_progress_handler(
                db, 1000,
                { context in
                    let left = context!.assumingMemoryBound(to: Int.self)
                    left.pointee -= 1
                    return left.pointee < 0 ? 1 : 0
                }, budget)
        }

        deinit { budget.deallocate() }

        func close() {
            if let db, sqlite3_close(db) != SQLITE_OK {
                // A statement left unfinalized: a bug of this store, never expected.
                sqlite3_close_v2(db)
            }
            db = nil
        }

        static func error(_ status: Int32, _ message: String) -> StoreError {
            switch status & 0xFF {
            case SQLITE_CORRUPT: .corrupt("SQLite: \(message) (error 11, SQLITE_CORRUPT)")
            case SQLITE_NOTADB: .corrupt("SQLite: \(message) (error 26, SQLITE_NOTADB)")
            case SQLITE_INTERRUPT: .corrupt("reading the database took more than \(HardenedNoteStore.stepBudget)k steps")
            default: .corrupt("SQLite: \(message) (error \(status & 0xFF))")
            }
        }

        /// Every row of one statement; the statement is finalized before it returns.
        func rows(_ sql: String) throws(StoreError) -> [[Value]] {
            var statement: OpaquePointer?
            let prepared = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
            defer { sqlite3_finalize(statement) }
            guard prepared == SQLITE_OK, let statement else { throw Connection.error(prepared, String(cString: sqlite3_errmsg(db))) }
            var rows: [[Value]] = []
            while true {
                let status = sqlite3_step(statement)
                if status == SQLITE_DONE { return rows }
                guard status == SQLITE_ROW else { throw Connection.error(status, String(cString: sqlite3_errmsg(db))) }
                rows.append(
                    (0..<sqlite3_column_count(statement)).map { column in
                        switch sqlite3_column_type(statement, column) {
                        case SQLITE_INTEGER: .integer(sqlite3_column_int64(statement, column))
                        case SQLITE_FLOAT: .real(sqlite3_column_double(statement, column))
                        case SQLITE_TEXT:
                            .text(
                                String(
                                    decoding: UnsafeBufferPointer(
                                        start: sqlite3_column_text(statement, column), count: Int(sqlite3_column_bytes(statement, column))),
                                    as: UTF8.self))
                        case SQLITE_BLOB: .blob(Int(sqlite3_column_bytes(statement, column)))
                        default: .null
                        }
                    })
            }
        }
    }
}
