import CorruptFuzzCore
import CorruptFuzzExamples
import CorruptFuzzSchema
import Foundation
import Testing

let habitSchemaPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Corpus/schemas/habit-tracker.ksy").path

func habitSchema() throws -> BinarySchema { try KSYLoader.load(contentsOf: habitSchemaPath) }

@Suite("Binary schemas: generate, encode, parse, validate")
struct SchemaRoundTripTests {
    @Test("10,000 seeds: generated values encode, parse back to the same value, and validate")
    func roundTrip() throws {
        let schema = try habitSchema()
        let generator = SchemaGenerator(schema: schema)
        let encoder = SchemaEncoder(schema: schema)
        let parser = SchemaParser(schema: schema)
        for seed in 0..<UInt64(10_000) {
            var rng = FuzzRNG(seed: seed)
            let encoded = encoder.encode(generator.generate(using: &rng))
            let parsed = parser.parse(encoded.bytes)
            #expect(parsed.violations.isEmpty, "seed \(seed): \(parsed.violations)")
            #expect(parsed.value == encoded.value, "seed \(seed)")
            #expect(encoder.bytes(try #require(parsed.value)) == encoded.bytes, "seed \(seed)")
            if !parsed.violations.isEmpty || parsed.value != encoded.value { break }
        }
    }

    @Test("the schema and the hand-written reference validator agree on generated and seed files")
    func agreesWithReference() throws {
        let schema = try habitSchema()
        let generator = SchemaGenerator(schema: schema)
        for seed in 0..<UInt64(2000) {
            var rng = FuzzRNG(seed: seed)
            let bytes = generator.generateFile(using: &rng)
            #expect(HabitTracker.validate(bytes) == nil, "seed \(seed): \(HabitTracker.validate(bytes)!)")
        }
        for document in HabitTracker.sampleDocuments().values {
            #expect(SchemaParser(schema: schema).firstViolation(HabitTracker.encode(document)) == nil)
        }
    }

    @Test("generation is deterministic for a seed and varies across seeds")
    func deterministic() throws {
        let generator = SchemaGenerator(schema: try habitSchema())
        var a = FuzzRNG(seed: 5), b = FuzzRNG(seed: 5), c = FuzzRNG(seed: 6)
        let x = generator.generateFile(using: &a)
        #expect(x == generator.generateFile(using: &b))
        #expect(x != generator.generateFile(using: &c))
    }
}
