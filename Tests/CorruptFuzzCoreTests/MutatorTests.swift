import CorruptFuzzCore
import Testing

@Suite("Byte-level mutators")
struct MutatorTests {
    let sample: [UInt8] = Array("HBTS\u{1}\u{0}\u{2}\u{0}\u{0}\u{0}some habit data here".utf8)

    @Test("every byte-level mutator changes its input or says it cannot", arguments: Mutator.byteLevel.map(\.name))
    func mutatorChangesInput(name: String) throws {
        let mutator = try #require(Mutator.byteLevel.first { $0.name == name })
        var rng = FuzzRNG(seed: 1)
        var changed = 0
        for _ in 0..<200 {
            var bytes = sample
            let partner = Array("a different corpus file".utf8)
            if let what = mutator.mutate(&bytes, using: &rng, context: MutationContext(partner: partner)) {
                #expect(!what.isEmpty)
                if bytes != sample { changed += 1 }
            }
        }
        // Some mutations can be no-ops by chance (copying a range onto itself), never most.
        #expect(changed > 150, "\(name) changed the input only \(changed) times out of 200")
    }

    @Test("mutators are deterministic for a given seed")
    func deterministic() {
        func run(seed: UInt64) -> [[UInt8]] {
            var rng = FuzzRNG(seed: seed)
            return (0..<100).map { i in
                var bytes = sample
                Mutator.byteLevel[i % Mutator.byteLevel.count].mutate(&bytes, using: &rng, context: MutationContext(partner: [1, 2, 3]))
                return bytes
            }
        }
        #expect(run(seed: 42) == run(seed: 42))
        #expect(run(seed: 42) != run(seed: 43))
    }

    @Test("mutators that grow input respect the maximum length")
    func maxLength() {
        var rng = FuzzRNG(seed: 9)
        for _ in 0..<500 {
            var bytes = sample
            for mutator in [Mutator.insertBytes, .duplicateRange, .splice] {
                mutator.mutate(&bytes, using: &rng, context: MutationContext(partner: Array(repeating: 7, count: 100), maxLength: 40))
            }
            #expect(bytes.count <= 40)
        }
    }

    @Test("mutators say they cannot apply to empty input instead of trapping")
    func emptyInput() {
        var rng = FuzzRNG(seed: 3)
        for mutator in Mutator.byteLevel where mutator.name != "insert" {
            var bytes: [UInt8] = []
            #expect(mutator.mutate(&bytes, using: &rng) == nil, "\(mutator.name)")
        }
    }

    @Test("interesting integers cover 0, -1, extremes and length ± 1 at every width")
    func interestingValues() {
        for width in [1, 2, 4, 8] {
            let values = Dictionary(IntegerField.interestingValues(width: width, length: 100, offset: 10), uniquingKeysWith: { a, _ in a })
            let mask: UInt64 = width == 8 ? .max : (1 << UInt64(width * 8)) - 1
            #expect(values["0"] == 0)
            #expect(values["-1"] == mask)
            #expect(values["max"] == mask >> 1)
            #expect(values["min"] == (mask >> 1) + 1)
            #expect(values["len+1"] == 101 & mask)
            #expect(values["rest-1"] == UInt64(100 - 10 - width - 1) & mask)
        }
    }

    @Test("integer fields round-trip in both byte orders")
    func integerFields() {
        var bytes = [UInt8](repeating: 0, count: 8)
        IntegerField.write(&bytes, at: 0, width: 4, bigEndian: true, value: 0x0102_0304)
        #expect(bytes.prefix(4) == [1, 2, 3, 4])
        #expect(IntegerField.read(bytes, at: 0, width: 4, bigEndian: true) == 0x0102_0304)
        IntegerField.write(&bytes, at: 0, width: 4, bigEndian: false, value: 0x0102_0304)
        #expect(bytes.prefix(4) == [4, 3, 2, 1])
        #expect(IntegerField.read(bytes, at: 0, width: 4, bigEndian: false) == 0x0102_0304)
    }
}

@Suite("Random choices")
struct FuzzRNGTests {
    @Test("logUniform stays in its range and spreads over its magnitudes")
    func logUniform() {
        var rng = FuzzRNG(seed: 3)
        var small = 0, large = 0
        for _ in 0..<10_000 {
            let value = rng.logUniform(300...70_300)
            #expect((300...70_300).contains(value))
            if value < 1_000 { small += 1 }
            if value > 10_000 { large += 1 }
        }
        // Widths 9 to 17 bits are equally likely: about 2 of the 9 fall under 1,000 (all of
        // 300...511 and most of 512...1,023), about 3.6 over 10,000 (most of 8,192...16,383 and
        // all of widths 15 to 17); a uniform draw would give 1% and 86%.
        #expect(small > 1_700 && small < 2_700, "\(small)")
        #expect(large > 3_500 && large < 4_600, "\(large)")
        for range in [0...0, 0...1, 5...5, 1...1_000_000, 1_023...1_024] {
            for _ in 0..<200 { #expect(range.contains(rng.logUniform(range))) }
        }
    }
}
