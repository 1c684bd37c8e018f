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

    enum RawLoadError: String, Error {
        case empty, corrupt
        case tooNew = "unsupported-version"
        case sentence = "Something went wrong"
    }
    enum CaseLoadError: Error {
        case notFound
        case unsupportedVersion(found: Int)
        case bad_header
    }
    struct Localized: LocalizedError {
        var failureReason: String? { "corrupt: the header is not ours" }
    }
    struct Described: Error, CustomStringConvertible {
        var description: String { "unsupported-version (found 9, supported 2)" }
    }
    struct DescribedOtherwise: Error, CustomStringConvertible {
        var description: String { "corruption detected" }
    }
    struct ComputedReason: Error {
        var reason: String { "corrupt" }
    }

    @Test("errors as apps write them: a String-backed enum, an enum's case, LocalizedError, a description that starts with the word")
    func appShapes() {
        #expect(CorruptFuzzWorker.reasonWord(of: RawLoadError.empty) == "empty")
        #expect(CorruptFuzzWorker.reasonWord(of: RawLoadError.tooNew) == "unsupported-version")
        // A raw value that is not a word falls to the case name.
        #expect(CorruptFuzzWorker.reasonWord(of: RawLoadError.sentence) == "sentence")
        #expect(CorruptFuzzWorker.reasonWord(of: CaseLoadError.notFound) == "not-found")
        #expect(CorruptFuzzWorker.reasonWord(of: CaseLoadError.unsupportedVersion(found: 3)) == "unsupported-version")
        #expect(CorruptFuzzWorker.reasonWord(of: CaseLoadError.bad_header) == "bad-header")
        #expect(CorruptFuzzWorker.reasonWord(of: Localized()) == "corrupt")
        #expect(CorruptFuzzWorker.reasonWord(of: Described()) == "unsupported-version")
        // Only a whole known word counts at the start of a description.
        #expect(CorruptFuzzWorker.reasonWord(of: DescribedOtherwise()) == nil)
        // A computed property is not stored: reflection cannot see it (documented).
        #expect(CorruptFuzzWorker.reasonWord(of: ComputedReason()) == nil)
    }

    @Test("a loader that throws `enum LoadError: String, Error` gets no wrong-reason finding for an empty file; one whose error has no word does")
    func rawEnumLoader() {
        struct Opaque: Error {}
        func check(_ id: String, empty: any Error & Sendable, corrupt: any Error & Sendable) -> CorruptFuzzReport {
            let regressions = FileManager.default.temporaryDirectory.appendingPathComponent("reason-\(id)-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: regressions) }
            return verifyLoaderSurvivesCorruption(
                id, seeds: [Data("OK notes".utf8)], options: .init(runs: 300, isolation: .inProcess, regressions: regressions)
            ) { (data: Data) throws -> String in
                guard !data.isEmpty else { throw empty }
                guard data.starts(with: Array("OK".utf8)) else { throw corrupt }
                return String(decoding: data, as: UTF8.self)
            }
        }
        let words = check("raw-enum-reasons", empty: RawLoadError.empty, corrupt: RawLoadError.corrupt)
        #expect(!words.kinds.contains(.wrongReason), "\(words.findings.map(\.signature))")
        // The same loader with an error that names no word: the empty file is a wrong reason.
        let opaque = check("opaque-reasons", empty: Opaque(), corrupt: Opaque())
        #expect(opaque.kinds.contains(.wrongReason), "\(opaque.findings.map(\.signature))")
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

    struct Pair: Error {
        var reason: String
        var message: String
    }
    enum Coded: Error, Hashable {
        case corrupt(at: Int)
        case tooNew(String)
    }

    @Test("errors whose fields differ only in where one ends and the next begins, or in an enum's payload, stay apart")
    func boundaries() {
        let describer = RejectionDescriber()
        for _ in 0..<3 {
            for error in [Pair(reason: "ab", message: "c"), Pair(reason: "a", message: "bc"), Pair(reason: "", message: "abc")] {
                #expect(describer.describe(error).message == String(describing: error))
                #expect(describer.describe(error).reason == reasonWord(for: error))
            }
            for error in [Coded.corrupt(at: 1), .corrupt(at: 2), .tooNew("2"), .tooNew("3")] {
                #expect(describer.describe(error).message == String(describing: error))
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

@Suite("An error's reason and message, written from its fields")
struct ErrorLayoutTests {
    struct Plain: Error {
        var reason: String
        var message: String
        var offset: Int
        var fatal: Bool
    }
    struct NoReason: Error { var message: String }
    struct Empty: Error {}
    struct Nested: Error { var inner: NoReason }
    struct Optional: Error { var reason: String? }
    struct Described: Error, CustomStringConvertible {
        var reason: String
        var description: String { "described: \(reason)" }
    }
    struct Mirrored: Error, CustomReflectable {
        var reason: String
        var customMirror: Mirror { Mirror(self, children: ["why": reason]) }
    }
    enum Cases: Error { case corrupt(String) }
    final class Boxed: Error {
        let reason = "corrupt"
    }

    @Test(
        "a struct of Strings, Ints and Bools is written as String(describing:) writes it, quotes and escapes included",
        arguments: [
            "habits[2].name_len 300 exceeds 256", "", "a \"quoted\" word", "back\\slash", "line\nbreak\ttab", "naïve émoji 🎉",
            "\u{7F}\u{1}control", "\r\n", String(repeating: "long message ", count: 40),
        ])
    func plainStruct(_ message: String) {
        let errors: [any Error] = [
            Plain(reason: "corrupt", message: message, offset: -12, fatal: true), Plain(reason: message, message: "m", offset: 0, fatal: false),
            NoReason(message: message), Empty(),
        ]
        for error in errors {
            let layout = ErrorLayout(of: error)
            #expect(layout.fields != nil, "\(error)")
            let described = layout.describe(error)
            #expect(described.message == String(describing: error))
            #expect(described.reason == reasonWord(for: error))
        }
    }

    @Test("anything else is left to the standard library, with the same result")
    func otherErrors() {
        let errors: [any Error] = [
            Nested(inner: NoReason(message: "x")), Optional(reason: "corrupt"), Described(reason: "corrupt"), Mirrored(reason: "corrupt"),
            Cases.corrupt("x"), Boxed(), CocoaError(.fileReadNoSuchFile),
        ]
        for error in errors {
            let layout = ErrorLayout(of: error)
            #expect(layout.fields == nil, "\(error)")
            let described = layout.describe(error)
            #expect(described.message == String(describing: error))
            #expect(described.reason == reasonWord(for: error))
        }
    }

    struct Mixed: Error {
        var fatal: Bool
        var reason: String
        var count: Int
        var flag: Bool
        var message: String
    }

    /// Strings of every shape: empty, small (held in the String itself), exactly at the small
    /// limit and one past it, large native ASCII and non-ASCII, made from an NSString, cut from
    /// a longer one.
    static let shapes: [String] = [
        "", "corrupt", "fifteen bytes!!", "sixteen bytes!!!", String(repeating: "é", count: 40), "🎉 emoji",
        String(NSString(string: "from an NSString, long enough not to be small")), String("a substring of a longer line".dropFirst(2)),
        String(repeating: "long message ", count: 40),
    ]

    @Test("fields read at their checked offsets give what the standard library gives, for every shape of string and field order")
    func fastPathAgreesWithPlainPath() {
        for first in Self.shapes {
            for second in Self.shapes.reversed() {
                let errors: [any Error] = [
                    Mixed(fatal: true, reason: first, count: -3, flag: false, message: second),
                    Plain(reason: first, message: second, offset: Int.max, fatal: false), NoReason(message: first),
                ]
                // The same content in other storage: equal keys.
                let copies: [any Error] = [
                    Mixed(
                        fatal: true, reason: String(decoding: Array(first.utf8), as: UTF8.self), count: -3, flag: false,
                        message: String(decoding: Array(second.utf8), as: UTF8.self)),
                    Plain(
                        reason: String(decoding: Array(first.utf8), as: UTF8.self), message: String(decoding: Array(second.utf8), as: UTF8.self),
                        offset: Int.max, fatal: false),
                    NoReason(message: String(decoding: Array(first.utf8), as: UTF8.self)),
                ]
                for (error, copy) in zip(errors, copies) {
                    let fast = ErrorLayout(of: error, readingFields: true)
                    let plain = ErrorLayout(of: error, readingFields: false)
                    #expect(fast.fields != nil, "\(error)")
                    #expect(plain.fields == nil)
                    let a = fast.describe(error), b = plain.describe(error)
                    #expect(a.reason == b.reason && a.message == b.message, "\(error)")
                    #expect(fast.key(error) == fast.key(copy), "\(error)")
                }
            }
        }
    }

    @Test("errors that differ in one field have different keys")
    func keysDiffer() {
        let layout = ErrorLayout(of: Mixed(fatal: true, reason: "corrupt", count: 1, flag: false, message: "m"), readingFields: true)
        let variants: [any Error] = [
            Mixed(fatal: true, reason: "corrupt", count: 1, flag: false, message: "m"),
            Mixed(fatal: false, reason: "corrupt", count: 1, flag: false, message: "m"),
            Mixed(fatal: true, reason: "empty", count: 1, flag: false, message: "m"),
            Mixed(fatal: true, reason: "corrupt", count: 2, flag: false, message: "m"),
            Mixed(fatal: true, reason: "corrupt", count: 1, flag: true, message: "m"),
            Mixed(fatal: true, reason: "corrupt", count: 1, flag: false, message: "n"),
        ]
        #expect(Set(variants.compactMap { layout.key($0) }).count == variants.count)
    }

    @Test("a layout reads only errors of its own type")
    func otherType() {
        let layout = ErrorLayout(of: Plain(reason: "corrupt", message: "m", offset: 1, fatal: true))
        let other = NoReason(message: "a message")
        #expect(layout.describe(other).message == String(describing: other))
    }
}

@Suite("Rejections described from a table of limited size")
struct RejectionDescriberTableTests {
    struct Failure: Error {
        var reason: String
        var message: String
    }

    @Test("more distinct errors than the table has slots: each is still described as itself")
    func overflow() {
        let describer = RejectionDescriber()
        let errors = (0..<(RejectionDescriber.capacity + 3_000)).map { Failure(reason: $0 % 2 == 0 ? "corrupt" : "empty", message: "field \($0)") }
        for error in errors + errors.prefix(2_000) {
            let (reason, message) = describer.describe(error)
            #expect(reason.rawValue == error.reason)
            #expect(message == String(describing: error))
        }
    }
}
