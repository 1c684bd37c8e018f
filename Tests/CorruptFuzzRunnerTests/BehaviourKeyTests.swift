import CorruptFuzzCore
@testable import CorruptFuzzRunner
import Testing

@Suite("Behaviour keys and remembered verdicts")
struct BehaviourKeyTests {
    /// The key as the general path would make it: FNV-1a over Normalize.message of the text
    /// up to its first quote, 100 bytes at most.
    static func reference(_ message: String) -> Int {
        let utf8 = Array(message.utf8)
        let end = utf8.firstIndex { $0 == UInt8(ascii: "'") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "<") } ?? utf8.count
        let normalized = Normalize.message(String(decoding: utf8[..<end].prefix(100), as: UTF8.self))
        var hash = NormalizedMessages.FNV.offset
        for byte in normalized.utf8 { hash = NormalizedMessages.FNV.add(byte, to: hash) }
        return Int(truncatingIfNeeded: hash)
    }

    static func streaming(_ message: String) -> Int? {
        var message = message
        return message.withUTF8 { NormalizedMessages.streamingKey($0) }
    }

    @Test("the one-pass key hashes exactly what Normalize.message gives")
    func streamingMatchesNormalize() {
        let messages = [
            "", "x", "7", "habits[2].num_dates: 100001 is over the maximum 100000",
            "checksum mismatch: stored 1f0eea31, computed e5d3d09a", "stored efaadfce", "a deface", "offset 0x1F past the end", "0x", "0xZZ",
            "version 2 is newer than 1", "name \"Run 5\" is too long", "tag 'b7' unknown", "a <b> c", "deadbeef cafe face 12ab",
            "abc123def4 5x 6", String(repeating: "field 12, ", count: 20), "é 3 ünïcode 4", "trailing digits 123",
        ]
        for message in messages {
            #expect(Self.streaming(message) == Self.reference(message), "\(message)")
        }
    }

    @Test("messages that differ only in their numbers share a key; others do not")
    func numbersDoNotCount() {
        #expect(Self.streaming("habits[2].dates[7]: 5 is not after 9") == Self.streaming("habits[0].dates[12]: 70 is not after 80"))
        #expect(Self.streaming("stored 1f0eea31") == Self.streaming("stored 00ff12"))
        #expect(Self.streaming("stored 1f0eea31") == Self.streaming("stored efaadfce"))
        #expect(Self.streaming("habits[2].name: too long") != Self.streaming("habits[2].dates: too long"))
        #expect(Self.streaming("not a habit-tracker file") != Self.streaming("not a habit-tracker fil"))
    }

    @Test("messages are keyed by their text, whether a string is met again or made anew")
    func identityCache() {
        var normalized = NormalizedMessages()
        func fresh(_ n: Int) -> String { String(decoding: Array("habit \(n): the name is longer than its file".utf8), as: UTF8.self) }
        let first = normalized.key(fresh(2))
        let same = fresh(2)
        #expect(normalized.key(same) == first)
        #expect(normalized.key(same) == first)
        #expect(normalized.key(fresh(9)) == first)
        #expect(normalized.key("the name is longer than its file") != first)
        // Many other messages take the slots; the first still gets its own key, not theirs.
        for n in 0..<500 { _ = normalized.key("message \(n) of kind \(n % 7 == 0 ? "a" : "b")x") }
        #expect(normalized.key(same) == first)
        #expect(normalized.key("message 3 of kind bx") != first)
    }

    @Test("a message that names its rule takes the general path")
    func ruleMessages() {
        #expect(Self.streaming("line 3: Premature end of data in tag time [rule: libxml2 error 77]") == nil)
        var normalized = NormalizedMessages()
        let a = normalized.key("line 3: Premature end of data in tag time [rule: libxml2 error 77]")
        let b = normalized.key("line 9: Premature end of data in tag date [rule: libxml2 error 77]")
        let c = normalized.key("line 9: Premature end of data in tag date [rule: libxml2 error 76]")
        #expect(a == b)
        #expect(a != c)
    }

    @Test("remembered verdicts are found by the exact bytes, whatever their length")
    func verdictMemory() {
        let memory = VerdictMemory()
        var validations = 0
        func verdict(_ bytes: [UInt8]) -> Verdict {
            memory.verdict(of: bytes) { input in
                validations += 1
                return input!.count % 2 == 0 ? .valid : .invalid(Violation(.corrupt, "odd length \(input!.count)"))
            }
        }
        // Inputs that differ only in trailing zeros, in one byte of the last word, or in length.
        let inputs: [[UInt8]] = [[], [0], [0, 0], [0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, 0], [1], Array(0..<17), Array(0..<16) + [17]]
        for input in inputs { #expect(verdict(input) == (input.count % 2 == 0 ? .valid : .invalid(Violation(.corrupt, "odd length \(input.count)")))) }
        #expect(validations == inputs.count)
        for input in inputs { _ = verdict(input) }
        #expect(validations == inputs.count, "every verdict was remembered")
        let keys = Set(inputs.map { VerdictMemory.hash($0) })
        #expect(keys.count == inputs.count, "distinct inputs hash apart")
        // Longer inputs are validated every time; they are rare, and seldom repeat.
        let long = [UInt8](repeating: 7, count: VerdictMemory.maxLength + 1)
        _ = verdict(long)
        _ = verdict(long)
        #expect(validations == inputs.count + 2)
    }

    @Test("word hashes tell texts, nil and numbers apart, and are the same for the same parts")
    func behaviourHash() {
        func hash(_ parts: [Any?]) -> Int {
            var hash = WordHash()
            for part in parts {
                switch part {
                case let number as Int: hash.add(number)
                case let text as String: hash.add(text)
                default: hash.add(nil as String?)
                }
            }
            return Int(truncatingIfNeeded: hash.value)
        }
        let cases: [[Any?]] = [
            [2, "corrupt"], [2, "corrupt\u{0}"], [2, "corrupt", 1], [2, "unsupported-version"], [2, nil], [2, ""], [2, "corrupt.."],
            [2, "12345678"], [2, "123456789"], [3], [2, "abcdefgh", "i"], [2, "abcdefghi", ""],
        ]
        #expect(Set(cases.map(hash)).count == cases.count)
        #expect(cases.map(hash) == cases.map(hash))
    }

    @Test("an input whose slot another input took is validated again, and its verdict is right")
    func verdictMemorySlots() {
        let memory = VerdictMemory()
        var validations = 0
        // Inputs sharing a slot: the same low bits of their hash.
        var bySlot: [UInt64: [[UInt8]]] = [:]
        var n: UInt32 = 0
        while bySlot.values.allSatisfy({ $0.count < 2 }) {
            let input = withUnsafeBytes(of: n) { Array($0) }
            bySlot[VerdictMemory.hash(input) & UInt64(VerdictMemory.slots - 1), default: []].append(input)
            n += 1
        }
        let pair = bySlot.values.first { $0.count == 2 }!
        for input in pair + pair {
            let verdict = memory.verdict(of: input) { bytes in
                validations += 1
                return bytes == pair[0] ? .valid : .invalid(Violation(.corrupt, "second"))
            }
            #expect(verdict == (input == pair[0] ? .valid : .invalid(Violation(.corrupt, "second"))))
        }
        #expect(validations == 4, "each replaced the other")
    }
}
