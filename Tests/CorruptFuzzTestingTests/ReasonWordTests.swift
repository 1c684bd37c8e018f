import CorruptFuzzCore
import CorruptFuzzWorker
@testable import CorruptFuzzTesting
import Foundation
import Testing

@Suite("Reason words read from a loader's error")
struct ReasonWordTests {
    struct StringReason: Error { var reason: String }
    struct TypedReason: Error { var reason: Reason }
    enum Word: String {
        case corrupt
        case tooNew = "unsupported-version"
    }
    struct EnumReason: Error { var reason: Word }
    struct NoReason: Error { var message: String }

    @Test("a reason property that is a String, a Reason or a String-backed enum gives the word")
    func reasonProperty() {
        #expect(CorruptFuzzWorker.reasonWord(of: StringReason(reason: "empty")) == "empty")
        #expect(CorruptFuzzWorker.reasonWord(of: TypedReason(reason: .unsupportedVersion)) == "unsupported-version")
        #expect(CorruptFuzzWorker.reasonWord(of: EnumReason(reason: .tooNew)) == "unsupported-version")
        #expect(CorruptFuzzWorker.reasonWord(of: NoReason(message: "x")) == nil)
        #expect(CorruptFuzzWorker.reasonWord(of: CocoaError(.fileReadNoSuchFile)) == "not-found")
    }
}

@Suite("Rejections described once per distinct error")
struct RejectionDescriberTests {
    struct Failure: Error, Hashable {
        var reason: String
        var message: String
    }
    struct Unhashable: Error { var reason: String }

    @Test("each distinct error keeps its own reason and message, however they alternate")
    func distinctErrors() {
        let describer = RejectionDescriber()
        // More errors than the recent ones kept apart, alternating, then again from the table.
        let errors = (0..<12).map { Failure(reason: $0 % 3 == 0 ? "unsupported-version" : "corrupt", message: "bad field \($0)") }
        for _ in 0..<3 {
            for error in errors + errors.reversed() {
                let (reason, message) = describer.describe(error)
                #expect(reason.rawValue == error.reason)
                #expect(message.contains("bad field \(error.message.split(separator: " ").last!)\""), "\(message)")
            }
        }
    }

    @Test("an error that is not Hashable is described every time")
    func unhashable() {
        let describer = RejectionDescriber()
        for word in ["corrupt", "empty", "corrupt", "not-found"] {
            #expect(describer.describe(Unhashable(reason: word)).reason.rawValue == word)
        }
    }
}

@Suite("An error's reason and message from one reflection")
struct StructFieldsTests {
    struct Plain: Error {
        var reason: String
        var message: String
        var offset: Int
        var fatal: Bool
    }
    struct NoReason: Error { var message: String }
    struct Nested: Error { var inner: NoReason }
    struct Described: Error, CustomStringConvertible {
        var reason: String
        var description: String { "described: \(reason)" }
    }
    enum Cases: Error { case corrupt(String) }
    final class Boxed: Error {
        let reason = "corrupt"
    }

    /// What the describer gives, read the standard library's way.
    func standard(_ error: any Error) -> (reason: String, message: String) {
        (CorruptFuzzWorker.reasonWord(of: error) ?? String(describing: type(of: error)), String(describing: error))
    }

    @Test(
        "a struct of Strings, Ints and Bools is written as String(describing:) writes it, quotes and escapes included",
        arguments: [
            "habits[2].name_len 300 exceeds 256", "", "a \"quoted\" word", "back\\slash", "line\nbreak\ttab", "naïve émoji 🎉",
            "\u{7F}\u{1}control", "\r\n",
        ])
    func plainStruct(_ message: String) throws {
        for error in [Plain(reason: "corrupt", message: message, offset: -12, fatal: true), Plain(reason: message, message: "m", offset: 0, fatal: false)] {
            let fields = try #require(StructFields(error, typeName: String(describing: type(of: error))))
            #expect(fields.message == standard(error).message)
            #expect(fields.reason == standard(error).reason)
            let described = RejectionDescriber.reflect(error, typeName: String(describing: type(of: error)))
            #expect(described.message == String(describing: error))
            #expect(described.reason == reasonWord(for: error))
        }
        let noReason = NoReason(message: message)
        let fields = try #require(StructFields(noReason, typeName: "NoReason"))
        #expect(fields.reason == nil)
        #expect(fields.message == String(describing: noReason))
        #expect(RejectionDescriber.reflect(noReason, typeName: "NoReason").reason.rawValue == "NoReason")
    }

    @Test("anything else is left to the standard library, with the same result")
    func otherErrors() {
        let errors: [any Error] = [
            Nested(inner: NoReason(message: "x")), Described(reason: "corrupt"), Cases.corrupt("x"), Boxed(), CocoaError(.fileReadNoSuchFile),
        ]
        for error in errors {
            let name = String(describing: type(of: error))
            #expect(StructFields(error, typeName: name) == nil, "\(error)")
            let described = RejectionDescriber.reflect(error, typeName: name)
            #expect(described.message == String(describing: error))
            #expect(described.reason == reasonWord(for: error))
        }
    }
}
