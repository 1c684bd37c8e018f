import CorruptFuzzCore
import Foundation

/// Structure-aware mutations of a schema's files.
///
/// Consistent mutations change the value tree and re-encode it, recomputing counts, lengths
/// and checksums, so the corruption gets past the loader's first checks to its deep code.
/// Lying mutations write a count, length, checksum or version that is wrong on purpose, to test
/// the check itself; where the right verdict is certain they carry an ``Expectation`` (a future
/// version must be rejected as `unsupported-version`, a wrong checksum as `corrupt`). New files
/// come from the schema's ``SchemaGenerator``.
public struct SchemaMutator: StructureAwareMutator {
    public let schema: BinarySchema
    private let parser: SchemaParser
    private let encoder: SchemaEncoder
    private let generator: SchemaGenerator
    /// The campaign mutates the same few hundred files over and over: each is parsed and
    /// encoded (for its field spans) once.
    private let parsedFiles = ParsedFiles()

    public init(schema: BinarySchema, limits: SchemaGenerator.Limits = .init()) {
        self.schema = schema
        parser = SchemaParser(schema: schema)
        encoder = SchemaEncoder(schema: schema)
        generator = SchemaGenerator(schema: schema, limits: limits)
    }

    public typealias Mutation = StructuredMutation

    /// One random structure-aware mutation of `bytes`, or nil when they do not parse (then
    /// byte-level mutations are the way to go).
    public func mutate(_ bytes: [UInt8], using rng: inout FuzzRNG) -> Mutation? {
        guard let prepared = parsedFiles.prepared(bytes, parser: parser, encoder: encoder) else { return nil }
        let encoded = prepared.output
        for _ in 0..<8 {
            let candidates = rng.below(10)
            let mutation: Mutation?
            switch candidates {
            case 0...3: mutation = consistent(prepared, rng: &rng)
            case 4...6: mutation = lie(encoded, rng: &rng)
            default: mutation = raw(encoded, rng: &rng)
            }
            if let mutation, mutation.bytes != bytes { return mutation }
        }
        return nil
    }

    /// Every systematic corruption of one file: each count and length set to 0, -1, max, ±1 and
    /// past the end; each checksum made wrong; the version made future, 0, negative and
    /// missing; each field boundary a truncation; each string given invalid UTF-8.
    public func catalogue(of bytes: [UInt8], context: CatalogueContext) -> [Mutation] {
        guard let value = parser.parse(bytes).value else { return [] }
        let encoded = encoder.encode(value)
        var out: [Mutation] = []
        var seen: Set<[UInt8]> = [encoded.bytes]
        func add(_ m: Mutation?) {
            if let m, context.allows(m.bytes.count), seen.insert(m.bytes).inserted { out.append(m) }
        }
        func add(_ lie: Lie?) { add(lie.map { write($0, encoded) }) }
        for span in encoded.spans {
            if span.isVersion { lyingVersions(span, encoded).forEach(add) }
            if span.isChecksum { add(wrongChecksum(span)) }
            if span.isCount || span.isLength {
                for label in SizeLie.allCases { add(lyingSize(span, encoded, label: label)) }
            }
            if span.isString, span.end > span.start { add(invalidUTF8(span, at: span.start)) }
            if span.isOffset {
                for label in OffsetLie.allCases { add(lyingOffset(span, encoded, label: label)) }
            }
        }
        for boundary in Set(encoded.spans.flatMap { [$0.start, $0.end] }).sorted() where boundary > 0 && boundary < encoded.bytes.count {
            add(Mutation(bytes: Array(encoded.bytes.prefix(boundary)), name: "truncate-at-field@\(boundary)", expectation: nil))
        }
        return out
    }

    /// A new valid file, drawn from the schema.
    public func generate(using rng: inout FuzzRNG) -> [UInt8] { generator.generateFile(using: &rng) }

    // MARK: - Shrinking

    /// Structurally smaller variants of `bytes`: each array element removed (last first), each
    /// string or byte field emptied or halved, each plain number set to 0; counts, lengths and
    /// checksums recomputed. Empty when `bytes` do not parse.
    public func shrinkCandidates(of bytes: [UInt8]) -> [[UInt8]] {
        guard let value = parser.parse(bytes).value else { return [] }
        return shrinkCandidates(of: value).map { encoder.bytes($0) }.filter { $0.count < bytes.count }
    }

    /// Smaller variants of a value, for shrinking generated values (see ``shrink(_:while:)``).
    public func shrinkCandidates(of value: SchemaValue) -> [SchemaValue] {
        var out: [SchemaValue] = []
        var arrays: [[Int]] = []
        Prepared.collectArrays(value, location: [], into: &arrays)
        for location in arrays {
            guard case .array(let elements)? = value.value(at: location) else { continue }
            for index in elements.indices.reversed().prefix(16) {
                var fewer = elements
                fewer.remove(at: index)
                out.append(value.setting(.array(fewer), at: location))
            }
        }
        let spans = encoder.encode(value).spans
        for span in spans where !span.isCount && !span.isLength && !span.isChecksum && !span.isVersion {
            switch value.value(at: span.location) {
            case .bytes(let b)? where !b.isEmpty && field(at: span).map({ if case .contents = $0.type { return false } else { return true } }) ?? false:
                out.append(value.setting(.bytes([]), at: span.location))
                if b.count > 1 {
                    // Cut on a character boundary, so a string stays UTF-8.
                    var cut = b.count / 2
                    while cut > 0, span.isString, b[cut] & 0xC0 == 0x80 { cut -= 1 }
                    if cut > 0 { out.append(value.setting(.bytes(Array(b.prefix(cut))), at: span.location)) }
                    out.append(value.setting(.bytes([span.isString ? 0x61 : 0]), at: span.location))
                }
            case .integer(let v)? where v != 0:
                out.append(value.setting(.integer(0), at: span.location))
            default:
                break
            }
        }
        return out
    }

    /// Shrinks a value greedily while `predicate` holds: the generator's values are shrinkable.
    public func shrink(_ value: SchemaValue, while predicate: (SchemaValue) -> Bool) -> SchemaValue {
        var current = value
        var progress = true
        while progress {
            progress = false
            for candidate in shrinkCandidates(of: current) where predicate(candidate) {
                current = candidate
                progress = true
                break
            }
        }
        return current
    }

    // MARK: - Consistent mutations (lengths and checksums recomputed)

    private func consistent(_ prepared: Prepared, rng: inout FuzzRNG) -> Mutation? {
        let encoded = prepared.output
        let leaves = prepared.leaves
        guard !leaves.isEmpty else { return nil }
        let span = leaves[rng.below(leaves.count)]
        guard let current = encoded.value.value(at: span.location) else { return nil }
        var value = encoded.value
        let name: String
        switch current {
        case .integer(let v):
            let width = span.integerWidth ?? 4
            let (lo, hi) = bounds(width: width, signed: span.signed)
            let options: [(String, Int128)] = [
                ("0", 0), ("1", 1), ("-1", span.signed ? -1 : hi), ("min", lo), ("max", hi), ("+1", v + 1), ("-1n", v - 1),
                ("random", lo + Int128(rng.next() >> 1) % (hi - lo + 1)),
            ]
            let (label, replacement) = options[rng.below(options.count)]
            value = value.setting(.integer(Swift.min(hi, Swift.max(lo, replacement))), at: span.location)
            name = "set \(span.path)=\(label)"
        case .bytes(let b) where span.isString || !b.isEmpty:
            let choices = ["empty", "long", "random"]
            let choice = choices[rng.below(choices.count)]
            let replacement: [UInt8]
            switch choice {
            case "empty": replacement = []
            case "long": replacement = Array(repeating: UInt8(ascii: "A"), count: rng.logUniform(300...70_300))
            default: replacement = generator.text(bytes: rng.below(40), ascii: false, rng: &rng)
            }
            value = value.setting(.bytes(replacement), at: span.location)
            name = "set \(span.path)=\(choice)-\(replacement.count)"
        case .record, .array:
            return arrayMutation(prepared, rng: &rng)
        default:
            return nil
        }
        return Mutation(bytes: encoder.bytes(value), name: name, expectation: nil)
    }

    /// Removes, duplicates, swaps or adds an array element; counts follow.
    private func arrayMutation(_ prepared: Prepared, rng: inout FuzzRNG) -> Mutation? {
        let encoded = prepared.output
        let arrays = prepared.arrays
        guard !arrays.isEmpty else { return nil }
        let pick = rng.below(arrays.count)
        let location = arrays[pick]
        guard case .array(var elements)? = encoded.value.value(at: location) else { return nil }
        let path = prepared.arrayPaths[pick]
        let action: String
        switch rng.below(4) {
        case 0 where !elements.isEmpty:
            let i = rng.below(elements.count)
            elements.remove(at: i)
            action = "remove \(path)[\(i)]"
        case 1 where !elements.isEmpty:
            let i = rng.below(elements.count)
            let copies = rng.oneIn(4) ? rng.logUniform(100...1_100) : 1
            elements.insert(contentsOf: repeatElement(elements[i], count: copies), at: i)
            action = "duplicate \(path)[\(i)]x\(copies)"
        case 2 where elements.count >= 2:
            let i = rng.below(elements.count), j = rng.below(elements.count)
            elements.swapAt(i, j)
            action = "swap \(path)[\(i)],[\(j)]"
        default:
            guard let template = elements.first else { return nil }
            elements.append(template)
            action = "append \(path)"
        }
        let value = encoded.value.setting(.array(elements), at: location)
        return Mutation(bytes: encoder.bytes(value), name: action, expectation: nil)
    }

    // MARK: - Lying mutations

    /// One lie, chosen among every lie the file allows: each is decided first (which value,
    /// its name) and only the chosen one is written, since writing one copies the file and
    /// recomputes its checksums.
    private func lie(_ encoded: SchemaEncoder.Output, rng: inout FuzzRNG) -> Mutation? {
        var options: [Lie] = []
        for span in encoded.spans {
            if span.isVersion { options += lyingVersions(span, encoded) }
            if span.isChecksum, let lie = wrongChecksum(span) { options.append(lie) }
            if span.isCount || span.isLength {
                let labels = SizeLie.allCases
                if let lie = lyingSize(span, encoded, label: labels[rng.below(labels.count)]) { options.append(lie) }
            }
            if span.isEnum, let lie = overwrite(span, with: enumOutOfRange(span), name: .enumOutOfRange) {
                options.append(lie)
            }
            if span.isString, span.end > span.start {
                options.append(invalidUTF8(span, at: span.start + rng.below(span.end - span.start)))
            }
            if span.isOffset {
                let labels = OffsetLie.allCases
                if let lie = lyingOffset(span, encoded, label: labels[rng.below(labels.count)]) { options.append(lie) }
            }
        }
        guard !options.isEmpty else { return nil }
        return write(options[rng.below(options.count)], encoded)
    }

    /// What a lying count or length is set to: 0, -1 (the maximum when unsigned), the maximum,
    /// one more or one less than the truth, or past the end of the file.
    enum SizeLie: String, CaseIterable {
        case zero = "0"
        case minusOne = "-1"
        case max
        case plusOne = "+1"
        case minusOneN = "-1n"
        case pastEnd = "past-end"
    }

    /// Where a lying offset points: the start, itself, backwards, past the end, the maximum.
    enum OffsetLie: String, CaseIterable {
        case zero = "0"
        case itself = "self"
        case backwards
        case pastEnd = "past-end"
        case max
    }

    /// A lie decided but not yet written: what to change, its name and what a loader must do.
    /// A mutation weighs every lie of a file and writes one, so the name and the expectation
    /// are spelled out only for that one (``write(_:_:)``).
    private struct Lie {
        enum Edit {
            /// The integer field at `span` set to `value`, other checksums made right again.
            case overwrite(FieldSpan, Int128)
            /// The file cut before `offset`.
            case truncate(Int)
            /// The checksum at `span` with its last bit flipped.
            case flipChecksum(FieldSpan, width: Int)
            /// A byte of a string that cannot start or continue UTF-8.
            case invalidUTF8(Int)
        }
        /// The mutation's name: `what` and the span's path (`version=future habits.version`).
        enum Name {
            case version(StaticString)
            case versionMissing
            case wrongChecksum
            case size(SizeLie)
            case offset(OffsetLie)
            case enumOutOfRange
            case invalidUTF8(at: Int)
        }
        /// What a loader must do with the lie.
        enum Expected {
            case nothing
            /// Reject it as `unsupported-version`: the version is newer than `current`.
            case newerThan(Int128)
            case corruptChecksum
        }
        var edit: Edit
        var span: FieldSpan
        var name: Name
        var expected: Expected = .nothing

        var rendered: String {
            switch name {
            case .version(let label): "version=\(label) \(span.path)"
            case .versionMissing: "version-missing \(span.path)"
            case .wrongChecksum: "wrong-checksum \(span.path)"
            case .size(let label): "\(span.isCount ? "count" : "length")=\(label.rawValue) \(span.path)"
            case .offset(let label): "offset=\(label.rawValue) \(span.path)"
            case .enumOutOfRange: "enum-out-of-range \(span.path)"
            case .invalidUTF8(let offset): "invalid-utf8 \(span.path)@\(offset - span.start)"
            }
        }

        var expectation: Expectation? {
            switch expected {
            case .nothing: nil
            case .newerThan(let current): Expectation(reason: .unsupportedVersion, because: "the version is newer than the app's \(current)")
            case .corruptChecksum: Expectation(reason: .corrupt, because: "the checksum is wrong")
            }
        }
    }

    private func write(_ lie: Lie, _ encoded: SchemaEncoder.Output) -> Mutation {
        var bytes: [UInt8]
        switch lie.edit {
        case .overwrite(let span, let value):
            var replacement: [UInt8] = []
            IntegerCodec.encode(value, width: span.end - span.start, bigEndian: span.bigEndian, into: &replacement)
            bytes = encoded.bytes
            bytes.replaceSubrange(span.start..<span.end, with: replacement)
            bytes = fixChecksums(bytes, encoded, except: span)
        case .truncate(let offset):
            bytes = Array(encoded.bytes.prefix(offset))
        case .flipChecksum(let span, let width):
            bytes = encoded.bytes
            bytes[span.start + width - 1] ^= 0x01
        case .invalidUTF8(let offset):
            bytes = encoded.bytes
            bytes[offset] = [0xFF, 0xC0, 0x80, 0xED][offset % 4]
        }
        return Mutation(bytes: bytes, name: lie.rendered, expectation: lie.expectation)
    }

    private func lyingVersions(_ span: FieldSpan, _ encoded: SchemaEncoder.Output) -> [Lie] {
        guard let width = span.integerWidth, let rule = versionRule(at: span) else { return [] }
        let (_, hi) = bounds(width: width, signed: span.signed)
        var out: [Lie] = []
        let future = Lie.Expected.newerThan(rule.current)
        let lies: [(StaticString, Int128, Lie.Expected)] = [
            ("future", rule.current + 1, future), ("future-max", hi, future), ("0", 0, .nothing),
            ("negative", span.signed ? -1 : hi, span.signed ? .nothing : future),
        ]
        for (label, value, expected) in lies {
            if let lie = overwrite(span, with: value, name: .version(label), expected: expected) { out.append(lie) }
        }
        out.append(Lie(edit: .truncate(span.start), span: span, name: .versionMissing))
        return out
    }

    private func wrongChecksum(_ span: FieldSpan) -> Lie? {
        guard let width = span.integerWidth else { return nil }
        return Lie(edit: .flipChecksum(span, width: width), span: span, name: .wrongChecksum, expected: .corruptChecksum)
    }

    private func lyingSize(_ span: FieldSpan, _ encoded: SchemaEncoder.Output, label: SizeLie) -> Lie? {
        guard let width = span.integerWidth, case .integer(let v)? = encoded.value.value(at: span.location) else { return nil }
        let (lo, hi) = bounds(width: width, signed: span.signed)
        let value: Int128
        switch label {
        case .zero: value = 0
        case .minusOne: value = span.signed ? -1 : hi
        case .max: value = hi
        case .plusOne: value = v + 1
        case .minusOneN: value = v - 1
        case .pastEnd: value = v + Int128(encoded.bytes.count - span.end) + 1
        }
        guard value >= lo, value <= hi, value != v else { return nil }
        return overwrite(span, with: value, name: .size(label))
    }

    /// An offset pointing at the start, at itself, backwards, past the end, or at the maximum.
    private func lyingOffset(_ span: FieldSpan, _ encoded: SchemaEncoder.Output, label: OffsetLie) -> Lie? {
        guard let width = span.integerWidth, case .integer(let v)? = encoded.value.value(at: span.location) else { return nil }
        let (lo, hi) = bounds(width: width, signed: span.signed)
        let value: Int128
        switch label {
        case .zero: value = 0
        case .itself: value = Int128(span.start)
        case .backwards: value = v / 2
        case .pastEnd: value = Int128(encoded.bytes.count + 1)
        case .max: value = hi
        }
        guard value >= lo, value <= hi, value != v else { return nil }
        return overwrite(span, with: value, name: .offset(label))
    }

    private func invalidUTF8(_ span: FieldSpan, at offset: Int) -> Lie {
        Lie(edit: .invalidUTF8(offset), span: span, name: .invalidUTF8(at: offset))
    }

    /// The integer at `span` set to `value`; nil when the span is not an integer of its width.
    private func overwrite(_ span: FieldSpan, with value: Int128, name: Lie.Name, expected: Lie.Expected = .nothing) -> Lie? {
        guard let width = span.integerWidth, span.end - span.start == width else { return nil }
        return Lie(edit: .overwrite(span, value), span: span, name: name, expected: expected)
    }

    /// Recomputes checksums after an in-place lie, so the lie reaches the check it tests rather
    /// than failing at the checksum.
    private func fixChecksums(_ bytes: [UInt8], _ encoded: SchemaEncoder.Output, except lied: FieldSpan) -> [UInt8] {
        lied.isChecksum ? bytes : patchChecksumsByPosition(bytes, encoded)
    }

    private func patchChecksumsByPosition(_ bytes: [UInt8], _ encoded: SchemaEncoder.Output) -> [UInt8] {
        var out = bytes
        for span in encoded.spans where span.isChecksum {
            guard let width = span.integerWidth, let rule = checksumRule(at: span), span.end <= out.count else { continue }
            let from = rule.from.flatMap { name in encoded.spans.first { $0.path == name || $0.path.hasSuffix(".\(name)") }?.start } ?? 0
            let sum = Int128(Checksum.compute(rule.algorithm, out[from..<span.start]))
            var replacement: [UInt8] = []
            IntegerCodec.encode(sum, width: width, bigEndian: span.bigEndian, into: &replacement)
            out.replaceSubrange(span.start..<span.end, with: replacement)
        }
        return out
    }

    // MARK: - Raw structure mutations

    private func raw(_ encoded: SchemaEncoder.Output, rng: inout FuzzRNG) -> Mutation? {
        guard !encoded.spans.isEmpty else { return nil }
        let span = encoded.spans[rng.below(encoded.spans.count)]
        var bytes = encoded.bytes
        switch rng.below(3) {
        case 0:
            bytes.removeSubrange(span.start..<span.end)
            return Mutation(bytes: bytes, name: "remove-field \(span.path)", expectation: nil)
        case 1:
            bytes.insert(contentsOf: encoded.bytes[span.start..<span.end], at: span.end)
            return Mutation(bytes: bytes, name: "duplicate-field \(span.path)", expectation: nil)
        default:
            return Mutation(bytes: Array(bytes.prefix(span.start)), name: "truncate-at-field \(span.path)", expectation: nil)
        }
    }

    // MARK: - Lookups

    /// The schema field a span belongs to.
    private func field(at span: FieldSpan) -> Field? {
        var definition = schema.root
        var location = span.location[...]
        while let index = location.first, index < definition.seq.count {
            let field = definition.seq[index]
            location = location.dropFirst()
            if field.repetition != nil, !location.isEmpty { location = location.dropFirst() }
            guard !location.isEmpty else { return field }
            guard case .user(let name) = field.type, let next = schema.types[name] else { return nil }
            definition = next
        }
        return nil
    }

    private func versionRule(at span: FieldSpan) -> VersionRule? { field(at: span)?.version }
    private func checksumRule(at span: FieldSpan) -> ChecksumRule? { field(at: span)?.checksum }

    private func enumOutOfRange(_ span: FieldSpan) -> Int128 {
        guard let name = field(at: span)?.enumName, let known = schema.enums[name] else { return 0xFF }
        return (known.keys.max() ?? 0) + 1
    }
}

/// A pool file ready to mutate: parsed and encoded once (for its field spans), with what every
/// mutation of it would otherwise look up again.
struct Prepared: Sendable {
    var output: SchemaEncoder.Output
    /// The spans a consistent mutation may set (not derived counts, lengths or checksums).
    var leaves: [FieldSpan]
    /// Where the value's arrays are, and their paths for mutation names.
    var arrays: [[Int]]
    var arrayPaths: [String]

    init(_ output: SchemaEncoder.Output) {
        self.output = output
        leaves = output.spans.filter { !$0.isChecksum && !$0.isCount && !$0.isLength }
        var arrays: [[Int]] = []
        Self.collectArrays(output.value, location: [], into: &arrays)
        self.arrays = arrays
        arrayPaths = arrays.map { location in output.spans.first { $0.location == location }?.path ?? "array" }
    }

    /// The locations of every array in `value`, outer ones first.
    static func collectArrays(_ value: SchemaValue, location: [Int], into arrays: inout [[Int]]) {
        switch value {
        case .array(let elements):
            arrays.append(location)
            for (i, e) in elements.enumerated() { collectArrays(e, location: location + [i], into: &arrays) }
        case .record(let record):
            for (i, v) in record.values.enumerated() { collectArrays(v, location: location + [i], into: &arrays) }
        default:
            break
        }
    }
}

/// Prepared files by their bytes, for ``SchemaMutator/mutate(_:using:)``; cleared when it holds
/// ``capacity`` files.
private final class ParsedFiles: @unchecked Sendable {
    static let capacity = 1024
    private let lock = NSLock()
    private var files: [Key: Prepared?] = [:]

    /// A file as a key, hashed in one pass over its bytes (an array of bytes hashes them one by
    /// one, and this runs for every structure-aware mutation).
    private struct Key: Hashable {
        let bytes: [UInt8]
        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    func prepared(_ bytes: [UInt8], parser: SchemaParser, encoder: SchemaEncoder) -> Prepared? {
        let key = Key(bytes: bytes)
        // lock() and unlock() rather than withLock: its generic result costs a metadata lookup.
        lock.lock()
        let known = files[key]
        lock.unlock()
        if let known { return known }
        let made = parser.parse(bytes).value.map { Prepared(encoder.encode($0)) }
        lock.lock()
        if files.count >= Self.capacity { files.removeAll(keepingCapacity: true) }
        files[key] = made
        lock.unlock()
        return made
    }
}
