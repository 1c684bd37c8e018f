import CorruptFuzzCore
import CorruptFuzzExamples

/// A format bundled with corrupt-fuzz: a reference validator and the usual file extension.
struct BuiltinFormat: Sendable {
    let name: String
    let fileExtension: String
    let validator: any Validator

    static let all: [BuiltinFormat] = [
        BuiltinFormat(
            name: "habit-tracker", fileExtension: "habits",
            validator: ClosureValidator(name: "habit-tracker reference validator") { bytes in
                guard let bytes else { return .invalid(reason: "not-found", message: "the file does not exist") }
                guard let violation = HabitTracker.validate(bytes) else { return .valid }
                return .invalid(reason: violation.reason, message: violation.message)
            }),
    ]

    static var names: [String] { all.map(\.name) }

    static func named(_ name: String) -> BuiltinFormat? { all.first { $0.name == name } }
}
