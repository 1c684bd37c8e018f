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
