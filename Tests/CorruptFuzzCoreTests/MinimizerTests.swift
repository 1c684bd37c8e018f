import CorruptFuzzCore
import Testing

@Suite("Minimizer (ddmin)")
struct MinimizerTests {
    @Test("shrinks to the bytes that matter")
    func shrinksToCore() {
        var rng = FuzzRNG(seed: 5)
        var input = (0..<600).map { _ in UInt8(ascii: "a") + UInt8(rng.below(20)) }
        input.insert(contentsOf: Array("BOOM".utf8), at: 317)
        let result = Minimizer().minimize(input) { candidate in
            candidate.firstRange(of: Array("BOOM".utf8)) != nil
        }
        #expect(result.bytes == Array("BOOM".utf8))
        #expect(!result.exhausted)
    }

    @Test("keeps scattered bytes that are all needed")
    func scattered() {
        let input = Array("x1xxxxxxx2xxxxxxxxxxxxx3xxxx".utf8)
        let result = Minimizer().minimize(input) { c in
            c.contains(UInt8(ascii: "1")) && c.contains(UInt8(ascii: "2")) && c.contains(UInt8(ascii: "3"))
        }
        #expect(result.bytes == Array("123".utf8))
    }

    @Test("stops at its budget and returns a still-failing input")
    func budget() {
        let input = [UInt8](repeating: 1, count: 10_000)
        var calls = 0
        let result = Minimizer(maxTests: 10).minimize(input) { c in
            calls += 1
            return c.count > 5
        }
        #expect(calls == 10)
        #expect(result.exhausted)
        #expect(result.bytes.count > 5)
    }

    @Test("stops when the predicate asks to")
    func predicateStops() {
        let result = Minimizer().minimize(Array(repeating: 2, count: 100)) { _ in nil }
        #expect(result.bytes.count == 100)
        #expect(result.tests == 1)
    }
}
