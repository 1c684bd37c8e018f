import CorruptFuzzCore
import CorruptFuzzExamples
import CorruptFuzzSQLite
import Foundation

/// The sqlite formats of `--format`: `sqlite` (a database file, rollback journal) and
/// `sqlite-wal` (a bundle of a database and its write-ahead log). Without `--schema FILE.sql`
/// they are the bundled note-store app's database; with it, the user's description.
enum SQLiteBuiltins {
    static let names = ["sqlite", "sqlite-wal"]

    static var formats: [BuiltinFormat] {
        zip(names, [SQLiteDescription.JournalMode.rollback, .wal]).compactMap { name, mode in
            NoteStoreFormat.format(journalMode: mode).map { BuiltinFormat(name: name, format: $0) }
        }
    }

    /// Whether `path` names a SQL description (`.sql`).
    static func isDescription(_ path: String?) -> Bool { path?.lowercased().hasSuffix(".sql") == true }

    /// The format of a `.sql` description, in WAL mode for `sqlite-wal` (else as the file says).
    static func format(path: String, formatName: String?) throws -> ResolvedFormat {
        var description: SQLiteDescription
        do {
            description = try SQLiteDescription(contentsOf: path)
        } catch {
            throw CorruptFuzzError(.invalidArgument, "broken SQL description \(path): \(error.message)")
        }
        if formatName == "sqlite-wal" { description.journalMode = .wal }
        return ResolvedFormat(
            format: SQLiteFormat(description: description),
            replayArguments: [["--format", formatName ?? "sqlite"], ["--schema", URL(fileURLWithPath: path).standardizedFileURL.path]])
    }
}
