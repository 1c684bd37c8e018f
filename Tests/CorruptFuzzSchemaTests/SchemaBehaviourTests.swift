import CorruptFuzzCore
@testable import CorruptFuzzSchema
import Foundation
import Synchronization
import Testing

let corpusFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Corpus")

@Suite("Binary schemas: validation messages, mutations, broken schemas")
struct SchemaBehaviourTests {
    func habitFile(dates: [Int32] = [20_000, 20_001], name: String = "Run") throws -> [UInt8] {
        let schema = try habitSchema()
        let value = SchemaValue.record(
            .init(
                typeName: "habit_tracker",
                values: [
                    .bytes([]), .integer(1), .integer(0),
                    .array([
                        .record(
                            .init(typeName: "habit", values: [.integer(0), .bytes(Array(name.utf8)), .integer(0), .array(dates.map { .integer(Int128($0)) })]))
                    ]),
                    .integer(0),
                ]))
        return SchemaEncoder(schema: schema).bytes(value)
    }

    @Test("a value built in Swift encodes with counts, lengths and the CRC filled in")
    func encoderFillsDerivedFields() throws {
        let bytes = try habitFile()
        #expect(SchemaParser(schema: try habitSchema()).firstViolation(bytes) == nil)
        #expect(bytes.count == 4 + 2 + 4 + (2 + 3 + 4 + 8) + 4)
    }

    @Test("violations name the field path, the rule and the reason; all of them are listed")
    func violationMessages() throws {
        var bytes = try habitFile(dates: [20_000, 19_999])
        let parser = SchemaParser(schema: try habitSchema())
        let violations = parser.parse(bytes).violations.map(\.description)
        #expect(violations.first == "habits[0].dates[1]: 19999 is not after 20000")
        #expect(violations.contains { $0.hasPrefix("crc32: crc32 stored") } == false)  // the encoder fixed the CRC
        bytes[bytes.count - 1] ^= 0xFF
        let all = parser.parse(bytes).violations.map(\.description)
        #expect(all.count == 2)
        #expect(all[1].hasPrefix("crc32: crc32 stored 0x"))
        bytes[4] = 9
        #expect(parser.firstViolation(bytes) == Violation(.unsupportedVersion, "9 is newer than supported 1", at: "version"))
        #expect(parser.firstViolation([])?.reason == "empty")
    }

    @Test("violations of one rule at one field share a site whatever the numbers; other rules and fields do not")
    func sites() throws {
        let parser = SchemaParser(schema: try habitSchema())
        func site(_ bytes: [UInt8]) throws -> Int { try #require(parser.firstViolation(bytes)?.site) }
        // Dates out of order: one rule at one field, whatever the dates and the element.
        let outOfOrder = try site(habitFile(dates: [20_000, 19_999]))
        #expect(try site(habitFile(dates: [5, 6, 7, 1])) == outOfOrder)
        // Another rule at the same field (over the maximum), and the same kind of rule elsewhere.
        let overMax = try site(habitFile(dates: [80_000]))
        #expect(overMax != outOfOrder)
        #expect(try site(habitFile(dates: [90_000, 90_001])) == overMax)
        var future = try habitFile()
        future[4] = 9
        #expect(try site(future) != overMax)
        // The full parse gives its violations the same sites; equality does not look at them.
        let bytes = try habitFile(dates: [20_000, 19_999])
        #expect(parser.parse(bytes).violations.first?.site == outOfOrder)
        var other = try #require(parser.firstViolation(bytes))
        other.site = nil
        #expect(other == parser.firstViolation(bytes))
    }

    @Test("the catalogue lies about every count, length, version and checksum, with expectations where certain")
    func catalogue() throws {
        let format = SchemaFormat(schema: try habitSchema())
        let mutations = format.schemaMutator.catalogue(of: try habitFile())
        let names = mutations.map(\.name)
        #expect(names.contains("version=future version"))
        #expect(names.contains("count=-1 habits[0].num_dates"))
        #expect(names.contains("length=past-end habits[0].name_len"))
        #expect(names.contains("wrong-checksum crc32"))
        #expect(names.contains { $0.hasPrefix("truncate-at-field@") })
        #expect(mutations.first { $0.name == "version=future version" }?.expectation?.reason == "unsupported-version")
        #expect(mutations.first { $0.name == "wrong-checksum crc32" }?.expectation?.reason == "corrupt")
        let parser = SchemaParser(schema: try habitSchema())
        // Lies keep the checksum right, so they reach the check they test.
        let lie = try #require(mutations.first { $0.name == "count=-1 habits[0].num_dates" })
        #expect(parser.firstViolation(lie.bytes)?.description == "habits[0].num_dates: 4294967295 exceeds max 100000")
        // Every entry is corrupt but the sizes at the edge of what is valid.
        let validEdges: Set = ["set habits[0].name=long-256", "grow habits to 10000"]
        for mutation in mutations {
            #expect((parser.firstViolation(mutation.bytes) == nil) == validEdges.contains(mutation.name), "\(mutation.name)")
        }
    }

    @Test("sizes at their limits: the largest valid length or count and one more, or the width's largest and one more")
    func sizeLimits() throws {
        let mutator = SchemaFormat(schema: try habitSchema()).schemaMutator
        // habits[0].name is sized by name_len (u2, valid max 256); habits by num_habits (u4, max
        // 10000); dates by num_dates (u4, max 100000); the magic has a fixed size.
        #expect(mutator.sizeLimits(at: [3, 0, 1]) == [256, 257])
        #expect(mutator.sizeLimits(at: [3]) == [10_000, 10_001])
        #expect(mutator.sizeLimits(at: [3, 0, 3]) == [100_000, 100_001])
        #expect(mutator.sizeLimits(at: [0]) == [])
        // Without a maximum, a u1 or u2 size's limits are where its width wraps; a u4 has none.
        let unbounded = try KSYLoader.load(
            yaml: """
                meta: {id: notes, endian: le}
                seq:
                  - {id: title_len, type: u1}
                  - {id: title, type: str, size: title_len, encoding: UTF-8}
                  - {id: body_len, type: u2}
                  - {id: body, type: str, size: body_len, encoding: UTF-8}
                  - {id: blob_len, type: u4}
                  - {id: blob, size: blob_len}
                """)
        let notes = SchemaFormat(schema: unbounded).schemaMutator
        #expect(notes.sizeLimits(at: [1]) == [255, 256])
        #expect(notes.sizeLimits(at: [3]) == [65_535, 65_536])
        #expect(notes.sizeLimits(at: [5]) == [])

        // The catalogue sets each sized field, and grows each counted array, to its limits once
        // per field of the schema (not for every habit), and no array past 16,384 elements.
        let names = mutator.catalogue(of: try habitFile()).map(\.name)
        #expect(
            names.filter { $0.hasPrefix("set ") || $0.hasPrefix("grow ") }.sorted() == [
                "grow habits to 10000", "grow habits to 10001", "set habits[0].name=long-256", "set habits[0].name=long-257",
            ])
        let parser = SchemaParser(schema: try habitSchema())
        let grown = try #require(mutator.catalogue(of: try habitFile()).first { $0.name == "grow habits to 10001" })
        #expect(parser.firstViolation(grown.bytes)?.description == "num_habits: 10001 exceeds max 10000")
        // Grown in the bytes, it is the file the encoder writes for the grown value tree, count
        // and checksum included.
        let value = try #require(parser.parse(try habitFile()).value)
        guard case .array(let habits)? = value.value(at: [3]) else { throw CancellationError() }
        let expected = SchemaEncoder(schema: try habitSchema()).bytes(
            value.setting(.array(habits + Array(repeating: habits[0], count: 10_001 - habits.count)), at: [3]))
        #expect(grown.bytes == expected)
    }

    @Test("a file of ten thousand records shrinks by halves: a few variants a step, a few dozen steps")
    func largeFileShrinks() throws {
        let mutator = SchemaFormat(schema: try habitSchema()).schemaMutator
        let parser = SchemaParser(schema: try habitSchema())
        let grown = try #require(mutator.catalogue(of: try habitFile()).first { $0.name == "grow habits to 10001" })
        func habits(_ bytes: [UInt8]) -> Int? {
            guard case .array(let habits)? = parser.parse(bytes).value?.value(at: [3]) else { return nil }
            return habits.count
        }
        #expect(habits(grown.bytes) == 10_001)
        let candidates = mutator.shrinkCandidates(of: grown.bytes)
        #expect(candidates.count <= 4)
        #expect(candidates.compactMap(habits).contains(5_000))
        // Still over 100 habits: halving reaches 156 (10,001 / 2^6) within 20 tries (one
        // element at a time would take thousands); the byte-level passes that follow break the
        // checksum and find nothing.
        let result = Minimizer(maxTests: 20).minimize(
            grown.bytes, structure: { mutator.shrinkCandidates(of: $0) }, while: { bytes in (habits(bytes) ?? 0) > 100 })
        let left = try #require(habits(result.bytes))
        #expect(left > 100 && left < 400, "\(left) habits left")
    }

    @Test("random structure-aware mutations are deterministic and mostly invalid")
    func randomMutations() throws {
        let format = SchemaFormat(schema: try habitSchema())
        let seed = try habitFile()
        func run(_ s: UInt64) -> [String] {
            var rng = FuzzRNG(seed: s)
            return (0..<200).compactMap { _ in format.schemaMutator.mutate(seed, using: &rng)?.name }
        }
        #expect(run(1) == run(1))
        #expect(run(1).count > 150)
        #expect(Set(run(1).map { $0.split(separator: " ").first! }).count > 8)
    }

    @Test("real WAV files written by Python's wave parse and re-encode byte for byte")
    func wavRoundTrip() throws {
        let schema = try KSYLoader.load(contentsOf: corpusFolder.appendingPathComponent("schemas/wav.ksy").path)
        let folder = corpusFolder.appendingPathComponent("wav")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".wav") }
        #expect(files.count >= 4)
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: folder.appendingPathComponent(file)))
            let parsed = SchemaParser(schema: schema).parse(bytes)
            #expect(parsed.violations.isEmpty, "\(file): \(parsed.violations)")
            #expect(SchemaEncoder(schema: schema).bytes(try #require(parsed.value)) == bytes, "\(file)")
        }
    }

    @Test(
        "a broken schema is an error that says where",
        arguments: [
            ("seq: [", "not valid YAML"),
            ("seq:\n  - id: a\n    type: u3", "unknown type 'u3'"),
            ("seq:\n  - id: a\n    type: str", "a str needs size"),
            ("seq:\n  - id: a\n    type: u4\n    size: (1 +", "expression"),
            ("seq:\n  - id: a\n    type: u1\n  - id: a\n    type: u1", "appears twice"),
            ("seq:\n  - id: a\n    size: b", "'b' is not a field"),
            ("seq:\n  - id: a\n    type: u1\n    colour: red", "unsupported key 'colour'"),
            ("seq:\n  - id: a\n    type: u1\n    -checksum: {algorithm: md5}", "-checksum needs"),
        ])
    func brokenSchemas(yaml: String, message: String) {
        #expect {
            try KSYLoader.load(yaml: yaml)
        } throws: { error in
            (error as? SchemaError)?.message.contains(message) == true
        }
    }
}

@Suite("Binary schemas: offsets (instances with pos)")
struct SchemaOffsetTests {
    let yaml = """
        meta: {id: note_file, endian: be}
        seq:
          - id: magic
            contents: NOTE
          - id: ofs_text
            type: u4
          - id: len_text
            type: u2
        instances:
          text:
            pos: ofs_text
            size: len_text
            type: str
            encoding: UTF-8
        """

    /// Header (10 bytes), 3 bytes of padding, then the text the header points at.
    let file: [UInt8] = Array("NOTE".utf8) + [0, 0, 0, 13, 0, 5] + [0, 0, 0] + Array("hello".utf8)

    @Test("an instance is read at its offset, and the file re-encodes byte for byte")
    func readsAtOffset() throws {
        let schema = try KSYLoader.load(yaml: yaml)
        let parsed = SchemaParser(schema: schema).parse(file)
        #expect(parsed.violations.isEmpty, "\(parsed.violations)")
        guard case .record(let record)? = parsed.value else { Issue.record("no value"); return }
        #expect(record.instances == [.bytes(Array("hello".utf8))])
        #expect(SchemaEncoder(schema: schema).bytes(.record(record)) == file)
    }

    @Test("offsets past the end or lengths beyond it are violations")
    func badOffsets() throws {
        let parser = SchemaParser(schema: try KSYLoader.load(yaml: yaml))
        var past = file
        past[7] = 200
        #expect(parser.firstViolation(past)?.description == "text: pos 200 is outside the stream (0...18)")
        var long = file
        long[9] = 50
        #expect(parser.firstViolation(long)?.description == "text: needs 50 bytes, 5 left")
    }

    @Test("the catalogue points offsets at the start, at themselves, backwards and past the end")
    func offsetLies() throws {
        let format = SchemaFormat(schema: try KSYLoader.load(yaml: yaml))
        let names = format.schemaMutator.catalogue(of: file).map(\.name)
        for label in ["0", "self", "backwards", "past-end", "max"] {
            #expect(names.contains("offset=\(label) ofs_text"), "\(names)")
        }
    }
}

@Suite("Binary schemas: shrinking")
struct SchemaShrinkTests {
    /// Habits with at least two dates, from the value tree.
    func habitsWithTwoDates(_ value: SchemaValue) -> Int {
        guard case .record(let root) = value, case .array(let habits) = root.values[3] else { return 0 }
        return habits.filter { habit in
            guard case .record(let h) = habit, case .array(let dates) = h.values[3] else { return false }
            return dates.count >= 2
        }.count
    }

    @Test("generated values shrink to the smallest that keeps a property")
    func shrinksValues() throws {
        let schema = try habitSchema()
        let mutator = SchemaMutator(schema: schema)
        var rng = FuzzRNG(seed: 1)
        var value = SchemaGenerator(schema: schema, limits: .init(maxElements: 6)).generate(using: &rng)
        while habitsWithTwoDates(value) == 0 { value = SchemaGenerator(schema: schema).generate(using: &rng) }
        let shrunk = mutator.shrink(value) { habitsWithTwoDates($0) > 0 }
        guard case .record(let root) = shrunk, case .array(let habits) = root.values[3],
            case .record(let habit)? = habits.first, case .array(let dates) = habit.values[3]
        else {
            Issue.record("unexpected shape \(shrunk)")
            return
        }
        #expect(habits.count == 1)
        #expect(dates.count == 2)
        #expect(habit.values[1] == .bytes([]))
    }

    @Test("the minimizer removes whole records before cutting bytes")
    func structuralMinimization() throws {
        let format = SchemaFormat(schema: try habitSchema())
        let parser = SchemaParser(schema: format.schema)
        var rng = FuzzRNG(seed: 2)
        var bytes = format.schemaMutator.generate(using: &rng)
        while !(parser.parse(bytes).value.map { habitsWithTwoDates($0) > 0 } ?? false) { bytes = format.schemaMutator.generate(using: &rng) }
        // The "bug": any valid file with a habit with two dates or more. Byte cuts alone break
        // the CRC at once and could not shrink it; structure can.
        let result = Minimizer().minimize(bytes, structure: format.schemaMutator.shrinkCandidates) { candidate in
            let parsed = parser.parse(candidate)
            return parsed.violations.isEmpty && parsed.value.map { habitsWithTwoDates($0) > 0 } == true
        }
        #expect(result.bytes.count == 4 + 2 + 4 + (2 + 1 + 4 + 8) + 4)
    }
}

@Suite("Binary schemas: version-dependent fields and tag-length-value records")
struct SchemaVersionTests {
    let yaml = """
        meta: {id: settings, endian: le}
        seq:
          - id: version
            type: u1
            valid: {min: 1}
            -version: {current: 2}
          - id: volume
            type: u1
          - id: theme
            doc: added in version 2
            type: u1
            enum: theme
            if: version >= 2
          - id: records
            type: record
            repeat: eos
        types:
          record:
            seq:
              - id: tag
                type: u1
              - id: len
                type: u1
              - id: body
                size: len
                type:
                  switch-on: tag
                  cases:
                    1: name_body
          name_body:
            seq:
              - id: name
                type: strz
        enums:
          theme: {0: light, 1: dark}
        """

    @Test("a field present only from version 2 is read, generated and encoded by the version")
    func versionDependent() throws {
        let schema = try KSYLoader.load(yaml: yaml)
        let parser = SchemaParser(schema: schema)
        #expect(parser.firstViolation([1, 50]) == nil)
        #expect(parser.firstViolation([2, 50, 1]) == nil)
        #expect(parser.firstViolation([2, 50]) != nil)  // version 2 needs a theme
        #expect(parser.firstViolation([2, 50, 7])?.description == "theme: 7 is not a known theme")
        #expect(parser.firstViolation([3, 50, 1])?.reason == "unsupported-version")
        #expect(parser.firstViolation([2, 50, 1, 1, 3, 0x61, 0x62, 0]) == nil)  // tag 1: a name record
        #expect(parser.firstViolation([2, 50, 1, 9, 2, 0xFF, 0xFF]) == nil)  // unknown tag: raw bytes
        let generator = SchemaGenerator(schema: schema)
        var sawV1 = false, sawV2 = false
        for seed in 0..<UInt64(500) {
            var rng = FuzzRNG(seed: seed)
            let bytes = generator.generateFile(using: &rng)
            #expect(parser.firstViolation(bytes) == nil, "seed \(seed): \(bytes)")
            if bytes.first == 1 { sawV1 = true } else { sawV2 = true }
        }
        #expect(sawV1 && sawV2)
    }
}

@Suite("Binary schemas: the validator's early stop, the encoder's bytes-only pass")
struct SchemaFirstViolationTests {
    /// `firstViolation` stops at the first broken rule and builds no paths it does not report:
    /// on valid, mutated and structurally mutated files of every bundled schema it must say
    /// exactly what the full parse's first violation says.
    @Test("the first violation is the full parse's first, on thousands of corrupt files", arguments: ["habit-tracker.ksy", "wav.ksy"])
    func sameAsFullParse(schemaFile: String) throws {
        let schema = try KSYLoader.load(contentsOf: corpusFolder.appendingPathComponent("schemas/\(schemaFile)").path)
        let parser = SchemaParser(schema: schema)
        let mutator = SchemaMutator(schema: schema)
        var rng = FuzzRNG(seed: 7)
        var compared = 0, invalid = 0
        for round in 0..<300 {
            let valid = mutator.generate(using: &rng)
            var inputs = [valid]
            for _ in 0..<4 {
                var bytes = valid
                for _ in 0..<(1 + round % 3) {
                    Mutator.byteLevel[rng.below(Mutator.byteLevel.count)].mutate(&bytes, using: &rng, context: MutationContext(partner: valid))
                }
                inputs.append(bytes)
            }
            if let structured = mutator.mutate(valid, using: &rng) { inputs.append(structured.bytes) }
            for bytes in inputs {
                let full = parser.parse(bytes).violations.first
                let first = parser.firstViolation(bytes)
                #expect(first == full, "\(schemaFile): \(bytes)")
                compared += 1
                if full != nil { invalid += 1 }
            }
        }
        // Both kinds were compared: valid files and many broken ones.
        #expect(invalid > compared / 2 && invalid < compared)
    }

    /// One parser validates on every thread of a campaign, and its first-violation passes share
    /// working arrays: passes at the same time must say what they say one at a time.
    @Test("first violations from many threads at once are the ones found one at a time")
    func concurrentPasses() throws {
        let schema = try habitSchema()
        let parser = SchemaParser(schema: schema)
        let mutator = SchemaMutator(schema: schema)
        var rng = FuzzRNG(seed: 11)
        var made: [[UInt8]] = []
        for _ in 0..<200 {
            let valid = mutator.generate(using: &rng)
            made.append(valid)
            var bytes = valid
            Mutator.byteLevel[rng.below(Mutator.byteLevel.count)].mutate(&bytes, using: &rng, context: MutationContext(partner: valid))
            made.append(bytes)
            if let structured = mutator.mutate(valid, using: &rng) { made.append(structured.bytes) }
        }
        let inputs = made
        let expected = inputs.map { parser.firstViolation($0) }
        #expect(expected.contains(nil) && expected.contains { $0 != nil })
        let results = Mutex([Violation?](repeating: nil, count: inputs.count))
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for _ in 0..<5 {
                for index in stride(from: thread, to: inputs.count, by: 8) {
                    let found = parser.firstViolation(inputs[index])
                    results.withLock { $0[index] = found }
                }
            }
        }
        #expect(results.withLock { $0 } == expected)
    }

    /// `bytes(_:)` skips spans, paths and the written value: it must write what `encode(_:)`
    /// writes, for generated values and for the values structure-aware mutations make.
    @Test("bytes-only encoding writes what a full encoding writes", arguments: ["habit-tracker.ksy", "wav.ksy"])
    func bytesOnly(schemaFile: String) throws {
        let schema = try KSYLoader.load(contentsOf: corpusFolder.appendingPathComponent("schemas/\(schemaFile)").path)
        let generator = SchemaGenerator(schema: schema)
        let mutator = SchemaMutator(schema: schema)
        let encoder = SchemaEncoder(schema: schema)
        var rng = FuzzRNG(seed: 11)
        for _ in 0..<500 {
            let value = generator.generate(using: &rng)
            #expect(encoder.bytes(value) == encoder.encode(value).bytes)
            for smaller in mutator.shrinkCandidates(of: value).prefix(4) {
                #expect(encoder.bytes(smaller) == encoder.encode(smaller).bytes)
            }
        }
    }
}

@Suite("Checksums")
struct ChecksumTests {
    /// CRC-32 one bit at a time, as the definition reads.
    static func bitwiseCRC32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return ~crc
    }

    @Test("CRC-32 gives the standard check values")
    func knownValues() {
        #expect(Checksum.compute(.crc32, Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(Checksum.compute(.crc32, [UInt8]()) == 0)
        #expect(Checksum.compute(.crc32, Array("The quick brown fox jumps over the lazy dog".utf8)) == 0x414F_A339)
        #expect(Checksum.compute(.adler32, Array("Wikipedia".utf8)) == 0x11E6_0398)
    }

    @Test("CRC-32 eight bytes at a time equals the bitwise definition at every length and alignment")
    func slicingMatchesDefinition() {
        var rng = FuzzRNG(seed: 7)
        let data = (0..<600).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        for start in 0..<9 {
            for length in Array(0..<40) + [63, 64, 65, 255, 256, 511, 591] where start + length <= data.count {
                let slice = Array(data[start..<(start + length)])
                #expect(Checksum.compute(.crc32, slice) == Self.bitwiseCRC32(slice), "start \(start) length \(length)")
                // A slice of a larger array reads from its own start.
                #expect(Checksum.compute(.crc32, data[start..<(start + length)]) == Self.bitwiseCRC32(slice))
            }
        }
    }
}
