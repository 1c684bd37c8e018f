import CorruptFuzzCore
import CorruptFuzzPlist
import CorruptFuzzSchema
import Foundation

#if XML
    import CorruptFuzzXML
#endif
#if SQLite
    import CorruptFuzzSQLite
#endif

extension FormatRegistry {
    /// The formats bundled with corrupt-fuzz in this build, by the names `--format` selects
    /// them, and the description files it reads: a binary layout in Kaitai Struct YAML
    /// (`.ksy`), an XML Schema (`.xsd`, with the XML trait) and a SQL description (`.sql`, with
    /// the SQLite trait; `sqlite` or `sqlite-wal`).
    public static let bundled: FormatRegistry = {
        var entries = [
            Entry(name: "habit-tracker", format: HabitTrackerFormat()),
            Entry(name: "binary-plist", format: PlistFormat(.propertyList)),
            Entry(name: "keyed-archive", format: PlistFormat(.keyedArchive)),
            Entry(name: "friend-list", format: FriendListFormat()),
            Entry(name: "friend-list-v2", format: FriendListFormat(version: 2)),
        ]
        var readers = [DescriptionReader(extensions: ["ksy"], read: { path, _ throws(CorruptFuzzError) in try readKSY(path) })]
        var missing: [String: String] = [:]
        #if XML
            entries += [Entry(name: "notes", format: NotesFormat()), Entry(name: "xml", format: XMLFormat())]
            readers.append(DescriptionReader(extensions: ["xsd"], formatNames: ["xml"], read: { path, _ throws(CorruptFuzzError) in try readXSD(path) }))
        #else
            missing["notes"] = "XML"
            missing["xml"] = "XML"
        #endif
        #if SQLite
            for (name, mode) in zip(sqliteNames, [SQLiteDescription.JournalMode.rollback, .wal]) {
                if let format = NoteStoreFormat.format(journalMode: mode) { entries.append(Entry(name: name, format: format)) }
            }
            readers.append(
                DescriptionReader(extensions: ["sql"], formatNames: sqliteNames, read: { path, name throws(CorruptFuzzError) in try readSQL(path, name) }))
        #else
            for name in sqliteNames { missing[name] = "SQLite" }
        #endif
        return FormatRegistry(entries: entries, readers: readers, missingTraits: missing)
    }()

    /// The names of the SQLite formats: a database with a rollback journal, and one in WAL mode
    /// (a bundle of the database and its log).
    static let sqliteNames = ["sqlite", "sqlite-wal"]

    /// The absolute path, for replay commands run from elsewhere.
    private static func absolute(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }

    /// A Kaitai Struct schema: its validator, structure-aware mutations and generator.
    static func readKSY(_ path: String) throws(CorruptFuzzError) -> ResolvedFormat {
        do {
            return ResolvedFormat(format: try SchemaFormat(ksyPath: path), replayArguments: [["--schema", absolute(path)]], source: path)
        } catch {
            throw CorruptFuzzError(.invalidArgument, "broken schema: \(error.message)")
        }
    }

    #if XML
        /// An XML Schema: libxml2 validates against it, and documents are generated from it when
        /// the generator knows every construct it uses (else a warning says why not).
        static func readXSD(_ path: String) throws(CorruptFuzzError) -> ResolvedFormat {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CorruptFuzzError(.invalidArgument, "cannot read the XML Schema \(path)")
            }
            let replay = [["--format", "xml"], ["--xsd", absolute(path)]]
            do {
                return ResolvedFormat(format: try XMLFormat(xsd: [UInt8](data), name: path), replayArguments: replay, source: path)
            } catch let generatorProblem {
                do {
                    let schema = try XMLSchemaValidator(xsd: [UInt8](data), name: path)
                    return ResolvedFormat(
                        format: XMLFormat(schema: schema), replayArguments: replay,
                        warnings: ["no documents are generated from \(path): \(generatorProblem)"], source: path)
                } catch {
                    throw CorruptFuzzError(.invalidArgument, "broken XML Schema \(path): \(error)")
                }
            }
        }
    #endif

    #if SQLite
        /// A SQL description (DDL and `-- corrupt-fuzz:` lines), in WAL mode for `sqlite-wal`.
        static func readSQL(_ path: String, _ name: String?) throws(CorruptFuzzError) -> ResolvedFormat {
            var description: SQLiteDescription
            do {
                description = try SQLiteDescription(contentsOf: path)
            } catch {
                throw CorruptFuzzError(.invalidArgument, "broken SQL description \(path): \(error.message)")
            }
            if name == "sqlite-wal" { description.journalMode = .wal }
            return ResolvedFormat(
                format: SQLiteFormat(description: description), replayArguments: [["--format", name ?? "sqlite"], ["--schema", absolute(path)]],
                source: path)
        }
    #endif
}
