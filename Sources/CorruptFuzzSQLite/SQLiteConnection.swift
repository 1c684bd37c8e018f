import CCorruptFuzzSQLite
import Foundation

/// An error SQLite returned: its result code and message.
public struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The primary result code (11 `SQLITE_CORRUPT`, 26 `SQLITE_NOTADB`, 9 `SQLITE_INTERRUPT`…).
    public var code: Int32
    public var message: String

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(message) (SQLite error \(code))" }

    /// Whether SQLite stopped because the progress handler ran out of budget.
    public var isInterrupt: Bool { code == SQLITE_INTERRUPT }
}

/// A connection to one database, for corrupt-fuzz's own use (generation and validation): every
/// statement is finalized before a call returns, and `close()` (or deinit) closes the handle.
///
/// With a step budget, a progress handler interrupts any statement that runs too long, so a
/// hostile file cannot hang the caller: the statement fails with `SQLITE_INTERRUPT`.
final class SQLiteConnection {
    private var handle: OpaquePointer?
    /// Virtual-machine steps left before statements are interrupted (nil: no limit).
    private let budget: UnsafeMutablePointer<Int>

    /// Opens `path`.
    /// - Parameters:
    ///   - readOnly: Opens with `SQLITE_OPEN_READONLY` (the validator never writes).
    ///   - stepBudget: How many thousand virtual-machine steps all statements together may take.
    init(path: String, readOnly: Bool, stepBudget: Int? = nil) throws(SQLiteError) {
        budget = .allocate(capacity: 1)
        budget.initialize(to: stepBudget ?? -1)
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_PRIVATECACHE
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let error = SQLiteError(code: status & 0xFF, message: handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(path)")
            sqlite3_close(handle)
            self.handle = nil
            budget.deallocate()
            throw error
        }
        sqlite3_extended_result_codes(handle, 0)
        if stepBudget != nil {
            sqlite3_progress_handler(
                handle, 1000,
                { context in
                    let left = context!.assumingMemoryBound(to: Int.self)
                    if left.pointee <= 0 { return 1 }
                    left.pointee -= 1
                    return 0
                }, UnsafeMutableRawPointer(budget))
        }
    }

    deinit {
        close()
        budget.deallocate()
    }

    /// Closes the handle; later calls fail with `SQLITE_MISUSE`.
    func close() {
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    private func error(_ status: Int32) -> SQLiteError {
        SQLiteError(code: status & 0xFF, message: handle.map { String(cString: sqlite3_errmsg($0)) } ?? "the database is closed")
    }

    /// Runs statements that return no rows.
    func execute(_ sql: String) throws(SQLiteError) {
        guard let handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "the database is closed") }
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        if status != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_free(message)
            throw SQLiteError(code: status & 0xFF, message: text)
        }
    }

    /// Runs one statement with `arguments` bound to its parameters and returns every row; at
    /// most `limit` rows are kept (the rest are still stepped through, so errors surface).
    func query(_ sql: String, _ arguments: [SQLiteValue] = [], limit: Int = .max) throws(SQLiteError) -> [[SQLiteValue]] {
        var rows: [[SQLiteValue]] = []
        try forEachRow(sql, arguments) { row in
            if rows.count < limit { rows.append(row) }
        }
        return rows
    }

    /// Steps through one statement's rows, calling `body` with each.
    func forEachRow(_ sql: String, _ arguments: [SQLiteValue] = [], _ body: ([SQLiteValue]) -> Void) throws(SQLiteError) {
        guard let handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "the database is closed") }
        var statement: OpaquePointer?
        let prepared = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        guard prepared == SQLITE_OK, let statement else {
            throw prepared == SQLITE_OK ? SQLiteError(code: SQLITE_MISUSE, message: "no statement in \(sql)") : error(prepared)
        }
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            let status: Int32
            switch argument {
            case .null: status = sqlite3_bind_null(statement, position)
            case .integer(let value): status = sqlite3_bind_int64(statement, position, value)
            case .real(let value): status = sqlite3_bind_double(statement, position, value)
            case .text(let text): status = sqlite3_bind_text(statement, position, text, -1, cf_sqlite_transient())
            case .blob(let bytes):
                status = bytes.withUnsafeBytes { raw in
                    sqlite3_bind_blob(statement, position, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), cf_sqlite_transient())
                }
            }
            if status != SQLITE_OK { throw error(status) }
        }
        let columns = sqlite3_column_count(statement)
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return }
            guard status == SQLITE_ROW else { throw error(status) }
            var row: [SQLiteValue] = []
            row.reserveCapacity(Int(columns))
            for column in 0..<columns { row.append(Self.value(statement, column)) }
            body(row)
        }
    }

    static func value(_ statement: OpaquePointer, _ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(statement, column) else { return .null }
            let count = Int(sqlite3_column_bytes(statement, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, column))
            guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default: return .null
        }
    }

    /// The first column of the first row, as an integer (0 when there is none).
    func integer(_ sql: String) throws(SQLiteError) -> Int64 {
        if case .integer(let value)? = try query(sql, limit: 1).first?.first { return value }
        return 0
    }

    /// Runs `body` on the raw handle (for file controls).
    func withHandle<T>(_ body: (OpaquePointer) -> T) -> T? { handle.map(body) }
}
