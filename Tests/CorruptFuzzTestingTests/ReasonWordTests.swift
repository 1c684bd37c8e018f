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
