import CorruptFuzzCore
import CorruptFuzzExamples
import CorruptFuzzLibFuzzer
import CorruptFuzzReporting
import CorruptFuzzSchema
import Foundation
import HabitLoaders
import Testing

/// The habit-tracker schema of the package.
func habitSchema() throws -> SchemaFormat {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return try SchemaFormat(ksyPath: root.appendingPathComponent("Corpus/schemas/habit-tracker.ksy").path)
}

func naiveBridge(known: KnownFindings = KnownFindings()) throws -> LibFuzzerBridge {
    LibFuzzerBridge(name: "habit-loader-naive", format: try habitSchema(), known: known) { bytes in
        try NaiveHabitLoader.load(bytes).map(\.digest)
    }
}

/// A header, no habits and no CRC: the naive loader accepts it.
let headerOnly: [UInt8] = Array("HBTS".utf8) + [1, 0, 0, 0, 0, 0]

@Suite("libFuzzer bridge")
struct LibFuzzerBridgeTests {
    @Test("a silent acceptance is a finding the bridge traps, with its kind and signature printed first")
    func silentAcceptance() throws {
        let bridge = try naiveBridge()
        let finding = try #require(bridge.check(headerOnly))
        #expect(finding.kind == .silentAcceptance)
        #expect(bridge.traps(finding))
        let report = bridge.report(finding)
        #expect(report.contains("==corrupt-fuzz== finding: silent-acceptance\n"))
        #expect(report.contains("==corrupt-fuzz== signature: \(finding.signature)\n"))
        #expect(report.contains("==corrupt-fuzz== target: habit-loader-naive\n"))
    }

    @Test("a valid file is no finding; an empty one must be rejected as empty, not corrupt")
    func reasons() throws {
        let bridge = try naiveBridge()
        let valid = HabitTracker.encode(HabitDocument(habits: [Habit(name: "Run", days: [1, 2, 5])]))
        #expect(bridge.check(valid) == nil)
        let empty = try #require(bridge.check([]))
        #expect(empty.kind == .wrongReason)
        #expect(empty.signature == "expected empty, got corrupt")
        let hardened = LibFuzzerBridge(name: "hardened", format: try habitSchema()) { try HardenedHabitLoader.load($0).map(\.digest) }
        #expect(hardened.check(headerOnly) == nil)
        #expect(hardened.check([]) == nil)
    }

    @Test("findings a known-findings file lists, and kinds not trapped, do not abort")
    func known() throws {
        let known = try KnownFindings(parsing: "[habit-loader-*]\nsilent-acceptance: corrupt: *\n", file: "known.txt")
        let bridge = try naiveBridge(known: known)
        let finding = try #require(bridge.check(headerOnly))
        #expect(!bridge.traps(finding))
        let crashesOnly = LibFuzzerBridge(name: "n", format: try habitSchema(), traps: []) { try NaiveHabitLoader.load($0).map(\.digest) }
        #expect(!crashesOnly.traps(try #require(crashesOnly.check(headerOnly))))
    }

    @Test("the custom mutator stays within the size libFuzzer allows and makes valid files as well as broken ones")
    func mutator() throws {
        let bridge = try naiveBridge()
        let format = try habitSchema()
        let seed = HabitTracker.encode(HabitDocument(habits: [Habit(name: "Read", days: [10, 11, 12, 40])]))
        var valid = 0, changed = 0
        for s in 0..<400 {
            var buffer = seed + Array(repeating: 0, count: 64)
            let maxSize = seed.count + 64
            let size = buffer.withUnsafeMutableBufferPointer { bridge.mutate($0.baseAddress, seed.count, maxSize, UInt32(s)) }
            #expect(size <= maxSize)
            let out = Array(buffer.prefix(size))
            if out != seed { changed += 1 }
            if format.validator.validate(out).isValid { valid += 1 }
        }
        // Byte flips almost never keep the CRC right: valid outputs come from the structure.
        #expect(valid > 10)
        #expect(changed > 300)
        var rng = FuzzRNG(seed: 1)
        for _ in 0..<200 {
            #expect(bridge.crossOver(seed, headerOnly, maxSize: 20, using: &rng).count <= 20)
        }
    }
}
