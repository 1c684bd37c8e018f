@_exported import CorruptFuzzSQLite
import CorruptFuzzTesting
import Foundation
import Testing
import XCTest

/// Fails the current test (Swift Testing) once for each load after which the database was
/// still open: a statement not finalized (so `sqlite3_close` failed with `SQLITE_BUSY`) or a
/// connection not closed. Statements left busy hold the database's locks, so the app's next
/// write waits or fails.
///
/// ```swift
/// @Test func storeClosesItsDatabase() throws {
///     let format = SQLiteFormat(description: try SQLiteDescription(contentsOf: "app.sql"))
///     assertSQLiteLoaderClosesDatabase(format: format) { path in _ = try NoteStore.load(path: path) }
/// }
/// ```
///
/// The inputs are generated databases and the first entries of their catalogues (see
/// ``SQLiteFormat/leaks(databases:count:cataloguePerDatabase:seed:load:)``); the loader runs in
/// the test process, so pair this with `assertLoaderSurvivesCorruption` (crash isolated)
/// for loaders that may trap.
@discardableResult
public func assertSQLiteLoaderClosesDatabase(
    format: SQLiteFormat, databases: [(name: String, bytes: [UInt8])]? = nil, count: Int = 3, seed: UInt64 = 0,
    sourceLocation: SourceLocation = #_sourceLocation, load: (String) throws -> Void
) -> [SQLiteLeak] {
    let leaks = format.leaks(databases: databases, count: count, seed: seed, load: load)
    for leak in leaks { Issue.record(Comment(rawValue: "corrupt-fuzz: \(leak)"), sourceLocation: sourceLocation) }
    return leaks
}

extension XCTestCase {
    /// ``assertSQLiteLoaderClosesDatabase(format:databases:count:seed:sourceLocation:load:)``
    /// for XCTest: one `XCTFail` per load that left the database open.
    @discardableResult
    public func assertSQLiteLoaderClosesDatabase(
        format: SQLiteFormat, databases: [(name: String, bytes: [UInt8])]? = nil, count: Int = 3, seed: UInt64 = 0,
        file: StaticString = #filePath, line: UInt = #line, load: (String) throws -> Void
    ) -> [SQLiteLeak] {
        let leaks = format.leaks(databases: databases, count: count, seed: seed, load: load)
        for leak in leaks { XCTFail("corrupt-fuzz: \(leak)", file: file, line: line) }
        return leaks
    }
}
