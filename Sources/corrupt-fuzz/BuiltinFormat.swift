import CorruptFuzzCore
import CorruptFuzzExamples
import CorruptFuzzPlist
import CorruptFuzzXML

/// A format bundled with corrupt-fuzz, by the name `--format` selects it.
struct BuiltinFormat: Sendable {
    let name: String
    let format: any FuzzFormat

    static let all: [BuiltinFormat] =
        [
            BuiltinFormat(name: "habit-tracker", format: HabitTrackerFormat()),
            BuiltinFormat(name: "binary-plist", format: PlistFormat(.propertyList)),
            BuiltinFormat(name: "keyed-archive", format: PlistFormat(.keyedArchive)),
            BuiltinFormat(name: "friend-list", format: FriendListFormat()),
            BuiltinFormat(name: "friend-list-v2", format: FriendListFormat(version: 2)),
            BuiltinFormat(name: "notes", format: NotesFormat()),
            BuiltinFormat(name: "xml", format: XMLFormat()),
        ] + SQLiteBuiltins.formats

    static var names: [String] { all.map(\.name) }

    static func named(_ name: String) -> BuiltinFormat? { all.first { $0.name == name } }
}
