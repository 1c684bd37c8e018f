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
    /// Every name an expression of the schema reads (`num_habits`, `len` of `_parent.len`): an
    /// integer field of another name changes no other byte of the file when it changes.
    private let referencedNames: Set<String>

    public init(schema: BinarySchema, limits: SchemaGenerator.Limits = .init()) {
        self.schema = schema
        parser = SchemaParser(schema: schema)
        encoder = SchemaEncoder(schema: schema)
        generator = SchemaGenerator(schema: schema, limits: limits)
        referencedNames = Self.referencedNames(in: schema)
    }

    private static func referencedNames(in schema: BinarySchema) -> Set<String> {
        var names: Set<String> = []
        func add(_ expression: Expression?) {
            switch expression {
            case .reference(let path)?: names.formUnion(path)
            case .unary(_, let e)?: add(e)
            case .binary(_, let a, let b)?:
                add(a)
                add(b)
            case .literal?, nil: break
            }
        }
        for definition in [schema.root] + Array(schema.types.values) {
            for field in definition.seq + definition.instances {
                add(field.size)
                add(field.condition)
                add(field.position)
                add(field.valid?.expression)
                switch field.repetition {
                case .count(let e)?, .until(let e)?: add(e)
                default: break
                }
                if case .switchOn(let selector, _, _) = field.type { add(selector) }
            }
        }
        return names
    }

    public typealias Mutation = StructuredMutation

    /// One random structure-aware mutation of `bytes`, or nil when they do not parse (then
    /// byte-level mutations are the way to go).
    public func mutate(_ bytes: [UInt8], using rng: inout FuzzRNG) -> Mutation? {
        guard let prepared = prepared(bytes) else { return nil }
        let encoded = prepared.output
        for _ in 0..<8 {
            let candidates = rng.below(10)
            let mutation: Mutation?
            switch candidates {
            case 0...3: mutation = consistent(prepared, rng: &rng)
            case 4...6: mutation = lie(prepared, rng: &rng)
            default: mutation = raw(encoded, rng: &rng)
            }
            if let mutation, mutation.bytes != bytes { return mutation }
        }
        return nil
    }

    /// Whether `bytes` parse (the parse is kept for ``mutate(_:using:)``).
    public func canMutate(_ bytes: [UInt8]) -> Bool { prepared(bytes) != nil }

    /// `bytes` parsed and encoded, with what every mutation of them would otherwise work out
    /// again; nil when they do not parse.
    private func prepared(_ bytes: [UInt8]) -> Prepared? {
        // Looked up, then made here: a closure that made it would copy the mutator each call.
        let key = ByteKey(bytes)
        if let known = parsedFiles.lookUp(key) { return known }
        let made = parser.parse(bytes).value.map { value in
            let output = encoder.encode(value)
            var prepared = Prepared(output, fixedLies: output.spans.map(fixedLies))
            prepared.inPlace = prepared.leaves.map { span in
                guard let width = span.integerWidth, span.end - span.start == width, let field = field(at: span) else { return false }
                return !referencedNames.contains(field.id)
            }
            return prepared
        }
        parsedFiles.store(made, for: key)
        return made
    }

    /// The lies of a span that draw nothing at random, in the order ``lie(_:rng:)`` weighs
    /// them: its versions and its wrong checksum, then its enum value out of range.
    fileprivate func fixedLies(_ span: FieldSpan) -> (before: [Lie], enumLie: Lie?) {
        var before: [Lie] = []
        if span.isVersion { before += lyingVersions(span) }
        if span.isChecksum, let lie = wrongChecksum(span) { before.append(lie) }
        let enumLie = span.isEnum ? overwrite(span, with: enumOutOfRange(span), name: .enumOutOfRange) : nil
        return (before, enumLie)
    }

    /// Every systematic corruption of one file: each count and length set to 0, -1, max, ±1 and
    /// past the end; each checksum made wrong; the version made future, 0, negative and
    /// missing; each field boundary a truncation; each string given invalid UTF-8. And each
    /// sized field and counted array at the limits of its size (``sizeLimits(at:)``), where
    /// the largest valid size makes a valid file: the edge a loader must still accept.
    public func catalogue(of bytes: [UInt8], context: CatalogueContext) -> [Mutation] {
        guard let value = parser.parse(bytes).value else { return [] }
        let encoded = encoder.encode(value)
        var out: [Mutation] = []
        var seen: Set<ByteKey> = [ByteKey(encoded.bytes)]
        func add(_ m: Mutation?) {
            if let m, context.allows(m.bytes.count), seen.insert(ByteKey(m.bytes)).inserted { out.append(m) }
        }
        func add(_ lie: Lie?) { add(lie.map { write($0, encoded) }) }
        for span in encoded.spans {
            if span.isVersion { lyingVersions(span).forEach(add) }
            if span.isChecksum { add(wrongChecksum(span)) }
            if span.isCount || span.isLength {
                for label in SizeLie.allCases { add(lyingSize(span, encoded, label: label)) }
            }
            if span.isString, span.end > span.start { add(invalidUTF8(span, at: span.start)) }
            if span.isOffset {
                for label in OffsetLie.allCases { add(lyingOffset(span, encoded, label: label)) }
            }
        }
        // Each string and byte field at the limits of its size, each array at the limits of
        // its count, re-encoded consistently; once per field of the schema (the first habit's
        // name stands for every habit's).
        func firstOfField(_ path: String, in tried: inout Set<String>) -> Bool { tried.insert(String(path.filter { !$0.isNumber })).inserted }
        var triedFields: Set<String> = []
        for span in encoded.spans where firstOfField(span.path, in: &triedFields) {
            guard case .bytes? = encoded.value.value(at: span.location) else { continue }
            for length in sizeLimits(at: span.location) where length <= Self.maxCatalogueLength {
                let value = encoded.value.setting(.bytes(Array(repeating: UInt8(ascii: "A"), count: length)), at: span.location)
                add(Mutation(bytes: encoder.bytes(value), name: "set \(span.path)=long-\(length)", expectation: nil))
            }
        }
        var arrays: [[Int]] = []
        Prepared.collectArrays(value, location: [], into: &arrays)
        var triedArrays: Set<String> = []
        for location in arrays {
            let path = encoded.spans.first { $0.location == location }?.path ?? "array"
            guard firstOfField(path, in: &triedArrays) else { continue }
            for count in sizeLimits(at: location) {
                if let grown = grow(location, to: count, encoded) { add(Mutation(bytes: grown, name: "grow \(path) to \(count)", expectation: nil)) }
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

    /// Structurally smaller variants of `bytes`: each array halved (either half kept), each
    /// element removed (last first), each string or byte field emptied or halved, each plain
    /// number set to 0; counts, lengths and checksums recomputed. Empty when `bytes` do not
    /// parse. At most 64 variants, and 4 (the halves of the outermost arrays) for a file over
    /// 16 KiB: each is encoded before the minimizer tries the first, and a file of ten
    /// thousand records has tens of thousands of fields.
    public func shrinkCandidates(of bytes: [UInt8]) -> [[UInt8]] {
        guard let value = parser.parse(bytes).value else { return [] }
        let limit = bytes.count > 16 << 10 ? 4 : Self.maxShrinkCandidates
        return shrinkCandidates(of: value, limit: limit).map { encoder.bytes($0) }.filter { $0.count < bytes.count }
    }

    /// The most variants ``shrinkCandidates(of:)-([UInt8])`` gives.
    static let maxShrinkCandidates = 64

    /// Smaller variants of a value, for shrinking generated values (see ``shrink(_:while:)``).
    public func shrinkCandidates(of value: SchemaValue) -> [SchemaValue] { shrinkCandidates(of: value, limit: Self.maxShrinkCandidates) }

    private func shrinkCandidates(of value: SchemaValue, limit: Int) -> [SchemaValue] {
        var out: [SchemaValue] = []
        var arrays: [[Int]] = []
        Prepared.collectArrays(value, location: [], into: &arrays)
        // Halves first: a long array shrinks in a few steps rather than one element a step.
        for location in arrays where out.count < limit {
            guard case .array(let elements)? = value.value(at: location), elements.count >= 4 else { continue }
            out.append(value.setting(.array(Array(elements.prefix(elements.count / 2))), at: location))
            out.append(value.setting(.array(Array(elements.dropFirst(elements.count / 2))), at: location))
        }
        for location in arrays where out.count < limit {
            guard case .array(let elements)? = value.value(at: location) else { continue }
            for index in elements.indices.reversed().prefix(16) where out.count < limit {
                var fewer = elements
                fewer.remove(at: index)
                out.append(value.setting(.array(fewer), at: location))
            }
        }
        guard out.count < limit else { return Array(out.prefix(limit)) }
        let spans = encoder.encode(value).spans
        for span in spans where !span.isCount && !span.isLength && !span.isChecksum && !span.isVersion {
            guard out.count < limit else { break }
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
        return Array(out.prefix(limit))
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
        let leaf = rng.below(leaves.count)
        let span = leaves[leaf]
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
            let set = Swift.min(hi, Swift.max(lo, replacement))
            name = "set \(span.path)=\(label)"
            if prepared.inPlace[leaf] {
                // Written in place, the checksums computed again: what encoding the changed
                // value gives, for a field no expression reads, without encoding the file.
                var bytes = encoded.bytes
                var written: [UInt8] = []
                IntegerCodec.encode(set, width: width, bigEndian: span.bigEndian, into: &written)
                bytes.replaceSubrange(span.start..<span.end, with: written)
                bytes = encoded.rechecksummed(bytes)
                assert(bytes == encoder.bytes(value.setting(.integer(set), at: span.location)), "\(name) in place")
                return Mutation(bytes: bytes, name: name, expectation: nil)
            }
            value = value.setting(.integer(set), at: span.location)
        case .bytes(let b) where span.isString || !b.isEmpty:
            let choices = ["empty", "long", "random"]
            let choice = choices[rng.below(choices.count)]
            let replacement: [UInt8]
            switch choice {
            case "empty": replacement = []
            case "long": replacement = Array(repeating: UInt8(ascii: "A"), count: longLength(span, rng: &rng))
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
            let copies = rng.oneIn(4) ? manyCopies(location, count: elements.count, rng: &rng) : 1
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
    private func lie(_ prepared: Prepared, rng: inout FuzzRNG) -> Mutation? {
        let encoded = prepared.output
        var options: [Lie] = []
        options.reserveCapacity(prepared.maxLies)
        for (index, span) in encoded.spans.enumerated() {
            let fixed = prepared.fixedLies[index]
            options += fixed.before
            if span.isCount || span.isLength {
                let labels = SizeLie.allCases
                if let lie = lyingSize(span, encoded, label: labels[rng.below(labels.count)]) { options.append(lie) }
            }
            if let lie = fixed.enumLie { options.append(lie) }
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
    fileprivate struct Lie {
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

    /// `lie` written into `encoded`, its other checksums made right again, so the lie reaches
    /// the check it tests rather than failing at the checksum.
    private func write(_ lie: Lie, _ encoded: SchemaEncoder.Output) -> Mutation {
        var bytes: [UInt8]
        switch lie.edit {
        case .overwrite(let span, let value):
            var replacement: [UInt8] = []
            IntegerCodec.encode(value, width: span.end - span.start, bigEndian: span.bigEndian, into: &replacement)
            bytes = encoded.bytes
            bytes.replaceSubrange(span.start..<span.end, with: replacement)
            if !span.isChecksum { bytes = encoded.rechecksummed(bytes) }
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

    private func lyingVersions(_ span: FieldSpan) -> [Lie] {
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

    // MARK: - Sizes

    /// The longest field, or grown array, a catalogue entry makes.
    static let maxCatalogueLength = 1 << 20
    /// The most elements a catalogue entry grows an array to: each entry is loaded and
    /// validated early in every campaign, a check's first hundred inputs among them.
    static let maxCatalogueElements = 16_384

    /// The lengths (of a string or byte field) or element counts (of an array) at the edges of
    /// what the field's size allows: the largest valid value of the sibling integer that sizes
    /// or counts it and one more (`valid: {max: 256}`: 256 and 257), or, without such a
    /// maximum, the largest value its width holds and one more, which wraps (a `u2`: 65,535
    /// and 65,536; wider integers have no reachable edge). Empty when the size is not a
    /// sibling integer. A loader's off-by-one is at exactly these lengths; random lengths
    /// rarely land on them.
    func sizeLimits(at location: [Int]) -> [Int] {
        guard let (_, sizer) = sizer(at: location), case .integer(let width, let signed, _) = sizer.type, width <= 8 else { return [] }
        let widthMax = width >= 8 ? Int128(Int.max) : (Int128(1) << (8 * width - (signed ? 1 : 0))) - 1
        if let max = sizer.valid?.max, max >= 0, max < widthMax, max < 1 << 30 { return [Int(max), Int(max) + 1] }
        return width <= 2 ? [Int(widthMax), Int(widthMax) + 1] : []
    }

    /// The sibling field that sizes (`size: name_len`) or counts (`repeat-expr: num_habits`)
    /// the field at `location`, and its index in their record; nil for any other size.
    private func sizer(at location: [Int]) -> (index: Int, field: Field)? {
        guard let (definition, field) = definitionAndField(at: location) else { return nil }
        let expression: Expression?
        switch field.repetition {
        case .count(let count)?: expression = count
        case nil: expression = field.size
        default: expression = nil
        }
        guard case .reference(let name)? = expression, name.count == 1,
            let index = definition.seq.firstIndex(where: { $0.id == name[0] })
        else { return nil }
        return (index, definition.seq[index])
    }

    /// How long havoc makes a "long" string or byte field: seven times in sixteen a limit of
    /// its size of at most 4 KiB (``sizeLimits(at:)``), half the time 257 bytes to 4 KiB,
    /// and once in sixteen a limit from 4 KiB to 70 KB (a `u2`'s 65,535 and 65,536) or any
    /// length in that range, for loaders that slow down or blow up on large fields. (Drawn
    /// from 300 bytes to 70 KB every time, long fields made most of the bytes a campaign ran,
    /// and no draw hit a limit exactly.) The catalogue tries every limit once per field.
    private func longLength(_ span: FieldSpan, rng: inout FuzzRNG) -> Int {
        let limits = sizeLimits(at: span.location)
        let small = limits.filter { $0 <= 4_096 }
        let large = limits.filter { $0 > 4_096 && $0 <= 70_300 }
        switch rng.below(16) {
        case 0: return large.isEmpty ? rng.logUniform(4_097...70_300) : large[rng.below(large.count)]
        case 1...7 where !small.isEmpty: return small[rng.below(small.count)]
        default: return rng.logUniform(257...4_096)
        }
    }

    /// How many copies of an element a large duplication inserts: three times in eight enough
    /// to bring the count to a limit within 1,100 elements (``sizeLimits(at:)``), once in
    /// sixteen 100 to 1,100, otherwise 2 to 99. The catalogue tries every limit once per field,
    /// up to 16,384 elements.
    private func manyCopies(_ location: [Int], count: Int, rng: inout FuzzRNG) -> Int {
        let reachable = sizeLimits(at: location).map { $0 - count }.filter { $0 >= 1 && $0 <= 1_100 }
        switch rng.below(16) {
        case 0: return rng.logUniform(100...1_100)
        case 1...6 where !reachable.isEmpty: return reachable[rng.below(reachable.count)]
        default: return rng.logUniform(2...99)
        }
    }

    /// The file with the array at `location` grown to `count` elements by copies of its first,
    /// written into the bytes rather than re-encoded (encoding ten thousand records takes a
    /// tenth of a second; a check builds its catalogue before its first input): the copies go
    /// after the first element, the count field is set, checksums are recomputed. Nil when
    /// that would not be the file the encoder writes (an offset or an enclosing size would
    /// move), when the array has no element or already as many, or past the catalogue's limits.
    private func grow(_ location: [Int], to count: Int, _ encoded: SchemaEncoder.Output) -> [UInt8]? {
        guard case .array(let elements)? = encoded.value.value(at: location), !elements.isEmpty, count > elements.count,
            count <= Self.maxCatalogueElements,
            let (sizer, _) = sizer(at: location),
            let countSpan = encoded.spans.first(where: { $0.location == location.dropLast() + [sizer] }),
            let element = encoded.spans.first(where: { $0.location == location + [0] }),
            countSpan.end <= element.start, element.end > element.start,
            (count - elements.count) * (element.end - element.start) <= Self.maxCatalogueLength,
            !encoded.spans.contains(where: \.isOffset), !hasSizedAncestor(location)
        else { return nil }
        let copy = encoded.bytes[element.start..<element.end]
        let inserted = (count - elements.count) * copy.count
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encoded.bytes.count + inserted)
        bytes += encoded.bytes[..<element.end]
        for _ in elements.count..<count { bytes += copy }
        bytes += encoded.bytes[element.end...]
        var written: [UInt8] = []
        IntegerCodec.encode(Int128(count), width: countSpan.end - countSpan.start, bigEndian: countSpan.bigEndian, into: &written)
        bytes.replaceSubrange(countSpan.start..<countSpan.end, with: written)
        // Checksums after the copies, moved with them.
        var moved = encoded
        moved.checksums = encoded.checksums.map { patch in
            var patch = patch
            if patch.at >= element.end { patch.at += inserted }
            if patch.from >= element.end { patch.from += inserted }
            return patch
        }
        return moved.rechecksummed(bytes)
    }

    /// Whether a field on the way to `location` has a `size`, which copies inside it would break.
    private func hasSizedAncestor(_ location: [Int]) -> Bool {
        var prefix: [Int] = []
        for index in location.dropLast() {
            prefix.append(index)
            if let (_, field) = definitionAndField(at: prefix), field.size != nil || field.sizeEOS { return true }
        }
        return false
    }

    // MARK: - Lookups

    /// The schema field a span belongs to.
    private func field(at span: FieldSpan) -> Field? { definitionAndField(at: span.location)?.field }

    /// The schema field at a location in the value tree (an array's location is its field's,
    /// an element's is inside it), and the type definition that holds it.
    private func definitionAndField(at location: [Int]) -> (definition: TypeDefinition, field: Field)? {
        var definition = schema.root
        var location = location[...]
        while let index = location.first, index < definition.seq.count {
            let field = definition.seq[index]
            location = location.dropFirst()
            if field.repetition != nil, !location.isEmpty { location = location.dropFirst() }
            guard !location.isEmpty else { return (definition, field) }
            guard case .user(let name) = field.type, let next = schema.types[name] else { return nil }
            definition = next
        }
        return nil
    }

    private func versionRule(at span: FieldSpan) -> VersionRule? { field(at: span)?.version }

    private func enumOutOfRange(_ span: FieldSpan) -> Int128 {
        guard let name = field(at: span)?.enumName, let known = schema.enums[name] else { return 0xFF }
        return (known.keys.max() ?? 0) + 1
    }
}

/// A pool file ready to mutate: parsed and encoded once (for its field spans), with what every
/// mutation of it would otherwise look up again.
struct Prepared: Sendable {
    var output: SchemaEncoder.Output
    /// Each span's lies that draw nothing at random (``SchemaMutator/fixedLies(_:)``).
    fileprivate var fixedLies: [(before: [SchemaMutator.Lie], enumLie: SchemaMutator.Lie?)]
    /// The most lies ``SchemaMutator/lie(_:rng:)`` can weigh for this file.
    let maxLies: Int
    /// The spans a consistent mutation may set (not derived counts, lengths or checksums).
    var leaves: [FieldSpan]
    /// Whether each leaf is an integer a consistent mutation may set in place: no expression
    /// reads it, so it changes no other byte than its own and the checksums'.
    var inPlace: [Bool] = []
    /// Where the value's arrays are, and their paths for mutation names.
    var arrays: [[Int]]
    var arrayPaths: [String]

    fileprivate init(_ output: SchemaEncoder.Output, fixedLies: [(before: [SchemaMutator.Lie], enumLie: SchemaMutator.Lie?)]) {
        self.output = output
        self.fixedLies = fixedLies
        // Its fixed lies, and a size, an offset and an invalid UTF-8 byte for each span.
        maxLies = fixedLies.reduce(0) { $0 + $1.before.count + ($1.enumLie == nil ? 0 : 1) } + 3 * output.spans.count
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
    /// Files by their bytes, hashed in one pass (this runs for every structure-aware mutation).
    private var files: [ByteKey: Prepared?] = [:]

    /// The file prepared for `key` (nil inside when it does not parse), or nil when there is none.
    func lookUp(_ key: ByteKey) -> Prepared?? {
        // lock() and unlock() rather than withLock: its generic result costs a metadata lookup.
        lock.lock()
        defer { lock.unlock() }
        return files[key]
    }

    func store(_ prepared: Prepared?, for key: ByteKey) {
        lock.lock()
        defer { lock.unlock() }
        if files.count >= Self.capacity { files.removeAll(keepingCapacity: true) }
        files[key] = prepared
    }
}
