import CorruptFuzzCore
import CorruptFuzzExamples
import Foundation

#if SQLite
    import CorruptFuzzSQLite
#endif

/// The sqlite formats of `--format`: `sqlite` (a database file, rollback journal) and
/// `sqlite-wal` (a bundle of a database and its write-ahead log). Without `--schema FILE.sql`
/// they are the bundled note-store app's database; with it, the user's description. A build
/// without the SQLite trait has none of them, and says so when one is asked for.
enum SQLiteBuiltins {
    static let names = ["sqlite", "sqlite-wal"]

    static var formats: [BuiltinFormat] {
        #if SQLite
            zip(names, [SQLiteDescription.JournalMode.rollback, .wal]).compactMap { name, mode in
                NoteStoreFormat.format(journalMode: mode).map { BuiltinFormat(name: name, format: $0) }
            }
        #else
            []
        #endif
    }

    /// Whether `path` names a SQL description (`.sql`).
    static func isDescription(_ path: String?) -> Bool { path?.lowercased().hasSuffix(".sql") == true }

    /// The format of a `.sql` description, in WAL mode for `sqlite-wal` (else as the file says).
    static func format(path: String, formatName: String?) throws -> ResolvedFormat {
        #if SQLite
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
        #else
            throw CorruptFuzzError(.invalidArgument, BuiltinFormat.unknown(formatName ?? "sqlite"))
        #endif
    }

    /// One generated database (with its log, for `sqlite-wal`) of a format from ``format(path:formatName:)``.
    static func generate(_ resolved: ResolvedFormat, using rng: inout FuzzRNG) throws -> [UInt8] {
        #if SQLite
            guard let sqlite = resolved.format as? SQLiteFormat else { return [] }
            return try sqlite.sqliteMutator.generator.files(using: &rng).encoded()
        #else
            return []
        #endif
    }
}
