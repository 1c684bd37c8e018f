import CorruptFuzzCore
import CorruptFuzzExamples
import CorruptFuzzPlist
import CorruptFuzzXML

/// A format bundled with corrupt-fuzz: a reference validator, the usual file extension and,
/// where the format has them, structure-aware mutations.
struct BuiltinFormat: Sendable {
    let name: String
    let fileExtension: String
    let validator: any Validator
    let structure: (any StructureAwareMutator)?

    static let all: [BuiltinFormat] = [
        BuiltinFormat(
            name: "habit-tracker", fileExtension: "habits",
            validator: ClosureValidator(name: "habit-tracker reference validator") { bytes in
                guard let bytes else { return .invalid(reason: "not-found", message: "the file does not exist") }
                guard let violation = HabitTracker.validate(bytes) else { return .valid }
                return .invalid(reason: violation.reason, message: violation.message)
            },
            structure: nil),
        BuiltinFormat(name: "binary-plist", fileExtension: "plist", validator: PlistFormat(.propertyList).validator, structure: PlistFormat(.propertyList)),
        BuiltinFormat(name: "keyed-archive", fileExtension: "plist", validator: PlistFormat(.keyedArchive).validator, structure: PlistFormat(.keyedArchive)),
        BuiltinFormat(name: "friend-list", fileExtension: "friends", validator: FriendListFormat().validator, structure: FriendListFormat()),
        BuiltinFormat(name: "notes", fileExtension: "xml", validator: NotesFormat().validator, structure: NotesFormat()),
        BuiltinFormat(name: "xml", fileExtension: "xml", validator: XMLFormat().validator, structure: XMLFormat()),
    ]

    static var names: [String] { all.map(\.name) }

    static func named(_ name: String) -> BuiltinFormat? { all.first { $0.name == name } }
}
