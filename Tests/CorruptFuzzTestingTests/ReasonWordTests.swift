import CorruptFuzzCore
import CorruptFuzzWorker
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
