import CorruptFuzzCore
import Foundation
import Testing

@Suite("Violations written when read")
struct ViolationTests {
    /// Counts how often a deferred violation's text is written.
    final class Writes: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }

    @Test("a deferred violation is written only when read, and then equals the written one in every way")
    func deferred() throws {
        let writes = Writes()
        let deferred = Violation(.corrupt, site: 7) {
            writes.add()
            return ("100001 exceeds max 100000", "habits[2].num_dates")
        }
        let written = Violation(.corrupt, "100001 exceeds max 100000", at: "habits[2].num_dates", site: 7)
        #expect(writes.value == 0)
        #expect(deferred.reason == .corrupt && deferred.site == 7)
        #expect(writes.value == 0)
        #expect(deferred.message == written.message)
        #expect(deferred.path == written.path)
        #expect(deferred.description == "habits[2].num_dates: 100001 exceeds max 100000")
        #expect(deferred == written)
        #expect(deferred.hashValue == written.hashValue)
        #expect(Verdict.invalid(deferred).description == Verdict.invalid(written).description)
        #expect(writes.value > 0)
        let coded = try JSONDecoder().decode(Violation.self, from: JSONEncoder().encode(deferred))
        #expect(coded == written)
        let sorted = JSONEncoder()
        sorted.outputFormatting = .sortedKeys
        #expect(try sorted.encode(deferred) == sorted.encode(written))
        #expect(
            try String(decoding: sorted.encode(deferred), as: UTF8.self)
                == #"{"message":"100001 exceeds max 100000","path":"habits[2].num_dates","reason":"corrupt"}"#)
        #expect(coded.site == nil)
    }

    @Test("setting a deferred violation's message or path keeps the other")
    func setters() {
        var violation = Violation(.unsupportedVersion, site: 1) { ("3 is newer than supported 2", "header.version") }
        violation.message = "from a newer app"
        #expect(violation.message == "from a newer app" && violation.path == "header.version")
        violation.path = "version"
        #expect(violation.message == "from a newer app" && violation.path == "version")
        #expect(violation.reason == .unsupportedVersion && violation.site == 1)
    }
}
