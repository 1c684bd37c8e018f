import CorruptFuzzCore
import CorruptFuzzSchema
import Foundation
import Testing

/// Pins what the schema interpreter observably does (violations, value trees, encodings, spans,
/// mutations) over many generated and mutated files of several schemas, so that work on its
/// speed can show it changed nothing: the first-violation fast path must agree with a full
/// parse, and a digest of everything must match the one the straightforward interpreter gave.
@Suite("Binary schemas: the fast paths agree with the reference interpreter")
struct SchemaEquivalenceTests {
    /// Exercises what the corpus schemas do not: repeat-until, size-eos, ASCII, Adler-32, floats,
    /// big-endian and signed integers, `if`, `_io`, `_parent` and `_root`, `eq`, `any-of`, `expr`.
    static let miscYAML = """
        meta: {id: misc, endian: be}
        seq:
          - id: magic
            contents: [0x4d, 0x49]
          - id: count
            type: u1
            valid: {max: 20}
          - id: items
            type: item
            repeat: expr
            repeat-expr: count
          - id: words
            type: u2
            repeat: until
            repeat-until: _ == 0 or _ > 60000
            -order: increasing
          - id: ratio
            type: f4
          - id: note
            type: str
            encoding: ascii
            size: 4
          - id: flag
            type: u1
            valid: {eq: 7}
          - id: rest_len
            type: s2le
            valid: {expr: _ >= 0 and _ < 100}
          - id: rest
            size: rest_len * 2
          - id: sum
            type: u4
            -checksum: {algorithm: adler32, from: count}
        types:
          item:
            seq:
              - id: kind
                type: u1
                valid: {any-of: [1, 2, 3]}
              - id: small
                type: u1
                if: kind == 1
              - id: big
                type: s4
                if: kind != 1
                valid: {min: -1000, max: 1000}
              - id: label
                type: strz
              - id: pad
                size: _io.pos % 2
              - id: root_count
                type: u1
                valid: {expr: _ <= _root.count and _ <= _parent.count}
              - id: blob
                type: blob
                size: 3
          blob:
            seq:
              - id: first
                type: u1
              - id: rest
                size-eos: true
        """

    static func schemas() throws -> [(String, BinarySchema, [[UInt8]])] {
        let wavFolder = corpusFolder.appendingPathComponent("wav")
        let wavFiles = try FileManager.default.contentsOfDirectory(atPath: wavFolder.path).filter { $0.hasSuffix(".wav") }.sorted()
            .map { [UInt8](try Data(contentsOf: wavFolder.appendingPathComponent($0))).prefix(400) }.map { Array($0) }
        let habitFolder = corpusFolder.appendingPathComponent("habits")
        let habitFiles = try FileManager.default.contentsOfDirectory(atPath: habitFolder.path).filter { $0.hasSuffix(".habits") }.sorted()
            .map { [UInt8](try Data(contentsOf: habitFolder.appendingPathComponent($0))) }
        return [
            ("habit", try habitSchema(), habitFiles),
            ("wav", try KSYLoader.load(contentsOf: corpusFolder.appendingPathComponent("schemas/wav.ksy").path), wavFiles),
            ("settings", try KSYLoader.load(yaml: SchemaVersionTests().yaml), []),
            ("offsets", try KSYLoader.load(yaml: SchemaOffsetTests().yaml), [SchemaOffsetTests().file]),
            ("misc", try KSYLoader.load(yaml: miscYAML), []),
        ]
    }

    @Test("first violations, value trees, encodings and mutations are what they were")
    func equivalence() throws {
        var digest = Digest()
        var checked = 0
        for (name, schema, files) in try Self.schemas() {
            let format = SchemaFormat(schema: schema)
            let parser = SchemaParser(schema: schema)
            let encoder = SchemaEncoder(schema: schema)
            let validator = format.validator
            var inputs = files
            for seed in 0..<UInt64(60) {
                var rng = FuzzRNG(seed: seed)
                inputs.append(format.schemaMutator.generate(using: &rng))
            }
            var rng = FuzzRNG(seed: 99)
            var index = 0
            while index < inputs.count, inputs.count < 3000 {
                let bytes = inputs[index]
                index += 1
                for _ in 0..<12 {
                    if let mutation = format.schemaMutator.mutate(bytes, using: &rng) {
                        digest.add(mutation.name)
                        digest.add(mutation.bytes)
                        digest.add(mutation.expectation.map { "\($0.reason) \($0.because)" } ?? "-")
                        inputs.append(mutation.bytes)
                    }
                }
                if !bytes.isEmpty {
                    var flipped = bytes
                    flipped[rng.below(bytes.count)] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
                    inputs.append(flipped)
                    inputs.append(Array(bytes.prefix(rng.below(bytes.count))))
                }
            }
            for bytes in inputs {
                let parsed = parser.parse(bytes)
                let first = parser.firstViolation(bytes)
                #expect(first == parsed.violations.first, "\(name) \(bytes): \(String(describing: first)) vs \(parsed.violations)")
                #expect(validator.validate(bytes) == first.map(Verdict.invalid) ?? .valid)
                digest.add(parsed.violations.map(\.description).joined(separator: "|"))
                digest.add(parsed.violations.map { $0.reason?.rawValue ?? "-" }.joined(separator: "|"))
                if let value = parsed.value {
                    digest.add(value)
                    let encoded = encoder.encode(value)
                    digest.add(encoded.bytes)
                    digest.add(encoded.value)
                    #expect(encoder.bytes(value) == encoded.bytes)
                    for span in encoded.spans {
                        digest.add(
                            "\(span.path) \(span.start) \(span.end) \(span.location) \(span.isCount) \(span.isLength) \(span.isVersion) "
                                + "\(span.isChecksum) \(span.isString) \(span.isEnum) \(span.isOffset) \(String(describing: span.integerWidth)) "
                                + "\(span.signed) \(span.bigEndian)")
                    }
                }
                checked += 1
            }
            for bytes in inputs.prefix(40) {
                for mutation in format.schemaMutator.catalogue(of: bytes) {
                    digest.add(mutation.name)
                    digest.add(mutation.bytes)
                }
                for candidate in format.schemaMutator.shrinkCandidates(of: bytes) { digest.add(candidate) }
            }
        }
        #expect(checked > 10_000)
        #expect(digest.value == Self.expectedDigest, "digest \(String(digest.value, radix: 16))")
    }

    /// The digest the interpreter gave before its fast paths (0x52d6_b18b_952a_266d), changed
    /// on purpose twice since: long strings and duplicated elements of consistent mutations
    /// took log-uniform sizes (``FuzzRNG/logUniform(_:)``) instead of uniform ones
    /// (0x2367_d115_be79_f412); then sizes at their fields' limits, in the catalogue and in
    /// random mutations (``SchemaMutator/sizeLimits(at:)``), and shrinking by halves first, at
    /// most 64 variants. Parsing and encoding did not change.
    static let expectedDigest: UInt64 = 0x825e_6d4a_e1fc_71dd
}

/// FNV-1a over everything added, so that two runs (or two implementations) can be compared.
struct Digest {
    var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add(_ bytes: [UInt8]) {
        add(UInt64(bytes.count))
        for byte in bytes { mix(byte) }
    }

    mutating func add(_ text: String) { add(Array(text.utf8)) }

    mutating func add(_ number: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: number >> UInt64(shift))) }
    }

    mutating func add(_ value: SchemaValue) {
        switch value {
        case .integer(let v):
            add("i\(v)")
        case .float(let d):
            add("f")
            add(d.bitPattern)
        case .bytes(let b):
            add("b")
            add(b)
        case .array(let elements):
            add("a")
            add(UInt64(elements.count))
            for element in elements { add(element) }
        case .record(let record):
            add("r\(record.typeName) \(record.pinned.sorted())")
            add(UInt64(record.values.count))
            for v in record.values { add(v) }
            add(UInt64(record.instances.count))
            for v in record.instances { add(v) }
            add(record.tail)
        case .absent:
            add("-")
        }
    }

    private mutating func mix(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x100_0000_01b3
    }
}
