import CorruptFuzzCore
import CorruptFuzzExamples
import CorruptFuzzPlist

#if XML
    import CorruptFuzzXML
#endif

/// A format bundled with corrupt-fuzz, by the name `--format` selects it.
struct BuiltinFormat: Sendable {
    let name: String
    let format: any FuzzFormat

    static let all: [BuiltinFormat] = {
        var all = [
            BuiltinFormat(name: "habit-tracker", format: HabitTrackerFormat()),
            BuiltinFormat(name: "binary-plist", format: PlistFormat(.propertyList)),
            BuiltinFormat(name: "keyed-archive", format: PlistFormat(.keyedArchive)),
            BuiltinFormat(name: "friend-list", format: FriendListFormat()),
            BuiltinFormat(name: "friend-list-v2", format: FriendListFormat(version: 2)),
        ]
        #if XML
            all += [
                BuiltinFormat(name: "notes", format: NotesFormat()),
                BuiltinFormat(name: "xml", format: XMLFormat()),
            ]
        #endif
        return all + SQLiteBuiltins.formats
    }()

    /// Formats this build leaves out, with the trait that brings them.
    static let missingTraits: [String: String] = {
        var missing: [String: String] = [:]
        #if !XML
            missing["notes"] = "XML"
            missing["xml"] = "XML"
        #endif
        #if !SQLite
            for name in SQLiteBuiltins.names { missing[name] = "SQLite" }
        #endif
        return missing
    }()

    static var names: [String] { all.map(\.name) }

    /// Why `--format NAME` names no format here: a typo, or a format of a trait this build left out.
    static func unknown(_ name: String) -> String {
        if let trait = missingTraits[name] {
            return "format '\(name)' needs the \(trait) trait, and this corrupt-fuzz was built without it (build with default traits, or `--traits \(trait)`)"
        }
        return "unknown format '\(name)'; known formats: \(names.joined(separator: ", "))"
    }

    static func named(_ name: String) -> BuiltinFormat? { all.first { $0.name == name } }
}
