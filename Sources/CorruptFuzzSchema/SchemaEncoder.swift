/// Writes a ``SchemaValue`` as bytes, recomputing what the data determines: a count from its
/// array's length, a length from its string's or record's size, a checksum from the bytes it
/// covers. Fields a mutation pinned are written as they are, so they can lie on purpose.
public struct SchemaEncoder: Sendable {
    public let schema: BinarySchema

    public init(schema: BinarySchema) { self.schema = schema }

    /// The encoded file and where each field landed.
    public struct Output: Sendable {
        public var bytes: [UInt8]
        public var spans: [FieldSpan]
        /// The value as written, derived fields recomputed.
        public var value: SchemaValue
    }

    /// Encodes `value`, which must be a record of the schema's root type.
    public func encode(_ value: SchemaValue) -> Output { encode(value, spans: true) }

    /// Encodes `value`; without `spans`, neither field spans (their paths and locations) nor
    /// the value as written are kept: a structure-aware mutation needs only the bytes.
    private func encode(_ value: SchemaValue, spans: Bool) -> Output {
        guard case .record(let record) = value else { return Output(bytes: [], spans: [], value: value) }
        var state = EncodeState(schema: schema, recordSpans: spans)
        var fixed = record
        let bytes = state.writeRecord(&fixed, definition: schema.root, path: "", location: [], parents: [], base: 0)
        var out = bytes
        // Checksums last, in file order, so one may cover another.
        for patch in state.checksums.sorted(by: { $0.at < $1.at }) {
            let sum = Int128(Checksum.compute(patch.algorithm, out, patch.from..<patch.at))
            var encoded: [UInt8] = []
            IntegerCodec.encode(sum, width: patch.width, bigEndian: patch.bigEndian, into: &encoded)
            out.replaceSubrange(patch.at..<(patch.at + patch.width), with: encoded)
            if spans { fixed.set(.integer(sum), at: patch.location) }
        }
        return Output(bytes: out, spans: state.spans, value: .record(fixed))
    }

    /// Encodes without recording spans: the bytes only.
    public func bytes(_ value: SchemaValue) -> [UInt8] { encode(value, spans: false).bytes }
}

private struct ChecksumPatch {
    var at: Int
    var width: Int
    var bigEndian: Bool
    var from: Int
    var algorithm: ChecksumRule.Algorithm
    var location: [Int]
}

private struct EncodeState {
    let schema: BinarySchema
    /// Whether spans are kept: without them no path or location is built.
    let recordSpans: Bool
    var spans: [FieldSpan] = []
    var checksums: [ChecksumPatch] = []

    init(schema: BinarySchema, recordSpans: Bool = true) {
        self.schema = schema
        self.recordSpans = recordSpans
    }

    /// Writes a record at absolute offset `base`, fixing its derived fields first.
    mutating func writeRecord(
        _ record: inout SchemaValue.Record, definition: TypeDefinition, path: String, location: [Int], parents: [Scope], base: Int
    ) -> [UInt8] {
        let seq = definition.seq
        while record.values.count < seq.count { record.values.append(.absent) }
        // Derived counts and lengths: a sibling named by `repeat-expr` or `size` gets the
        // actual count or byte length, unless pinned.
        for field in seq {
            if case .count(let expression)? = field.repetition, case .array(let elements)? = record.value(of: field, in: seq) {
                assign(expression, actual: Int128(elements.count), record: &record, seq: seq)
            }
            if let expression = field.size, field.repetition == nil, let value = record.value(of: field, in: seq) {
                if let length = byteLength(value, field: field, parents: parents, record: record, definition: definition) {
                    assign(expression, actual: Int128(length), record: &record, seq: seq)
                }
            }
        }
        // Sizes that cannot be inverted (`len % 2` padding) follow the fields they depend on.
        for (index, field) in seq.enumerated() where field.repetition == nil {
            guard let expression = field.size, expression.referencedSibling == nil, case .bytes(let b) = record.values[index] else { continue }
            let scope = Scope(definition: definition, values: record.values.map { Optional($0) }, streamSize: 0, streamPos: 0)
            if let wanted = expression.evaluate({ resolve($0, scopes: parents + [scope], current: nil) }), wanted >= 0, wanted < 1 << 24,
                Int(wanted) != b.count, !record.pinned.contains(index)
            {
                record.values[index] = .bytes(Array(b.prefix(Int(wanted))) + Array(repeating: 0, count: max(0, Int(wanted) - b.count)))
            }
        }
        var out: [UInt8] = []
        var fieldStarts: [Int] = []
        for (index, field) in seq.enumerated() {
            fieldStarts.append(base + out.count)
            let fieldPath = recordSpans ? (path.isEmpty ? field.id : "\(path).\(field.id)") : ""
            // The scopes a nested record's expressions see; built only for a nested record.
            let streamPos = out.count
            var built: [Scope]?
            func scopes() -> [Scope] {
                if let built { return built }
                let scope = Scope(definition: definition, values: record.values.map { Optional($0) }, streamSize: 0, streamPos: streamPos)
                let made = parents + [scope]
                built = made
                return made
            }
            let start = base + out.count
            switch record.values[index] {
            case .absent:
                continue
            case .array(var elements):
                for j in elements.indices {
                    let elementStart = base + out.count
                    let elementPath = recordSpans ? "\(fieldPath)[\(j)]" : ""
                    let elementLocation = recordSpans ? location + [index, j] : []
                    out += writeElement(
                        &elements[j], field: field, path: elementPath, location: elementLocation, scopes: scopes, base: base + out.count)
                    if recordSpans {
                        addSpan(
                            field, path: elementPath, start: elementStart, end: base + out.count, location: elementLocation, seq: seq,
                            instances: definition.instances)
                    }
                }
                record.values[index] = .array(elements)
            default:
                var value = record.values[index]
                out += writeElement(&value, field: field, path: fieldPath, location: location + [index], scopes: scopes, base: start)
                record.values[index] = value
                if let checksum = field.checksum, !record.pinned.contains(index), let width = field.type.fixedWidth,
                    case .integer(_, _, let endian) = field.type
                {
                    let from = checksum.from.flatMap { name in seq.firstIndex { $0.id == name }.map { fieldStarts[$0] } } ?? 0
                    checksums.append(
                        ChecksumPatch(
                            at: start, width: width, bigEndian: (endian ?? schema.endian) == .big, from: from,
                            algorithm: checksum.algorithm, location: location + [index]))
                }
            }
            if recordSpans {
                addSpan(field, path: fieldPath, start: start, end: base + out.count, location: location + [index], seq: seq, instances: definition.instances)
            }
        }
        return out + record.tail
    }

    mutating func writeElement(
        _ value: inout SchemaValue, field: Field, path: String, location: [Int], scopes: () -> [Scope], base: Int
    ) -> [UInt8] {
        var out: [UInt8] = []
        switch (field.type, value) {
        case (.integer(let width, _, let endian), .integer(let v)):
            IntegerCodec.encode(v, width: width, bigEndian: (endian ?? schema.endian) == .big, into: &out)
        case (.float(let width, let endian), .float(let d)):
            let bits = width == 4 ? Int128(Float(d).bitPattern) : Int128(d.bitPattern)
            IntegerCodec.encode(bits, width: width, bigEndian: (endian ?? schema.endian) == .big, into: &out)
        case (.contents(let expected), .bytes(let b)):
            out = b.isEmpty ? expected : b
        case (.string(let zeroTerminated), .bytes(let b)):
            out = b
            if zeroTerminated, field.size == nil, !field.sizeEOS { out.append(0) }
        case (.bytes, .bytes(let b)), (.switchOn, .bytes(let b)):
            out = b
        case (.user, .record(var record)), (.switchOn, .record(var record)):
            let definition = schema.types[record.typeName] ?? TypeDefinition(seq: [])
            out = writeRecord(&record, definition: definition, path: path, location: location, parents: scopes(), base: base)
            value = .record(record)
        default:
            break  // a value that does not fit its field (a mutation's doing) writes nothing
        }
        return out
    }

    /// The byte length `value` will take, for a `size` field.
    func byteLength(_ value: SchemaValue, field: Field, parents: [Scope], record: SchemaValue.Record, definition: TypeDefinition) -> Int? {
        switch value {
        case .bytes(let b): return b.count
        case .record(var sub):
            var copy = EncodeState(schema: schema, recordSpans: false)
            let def = schema.types[sub.typeName] ?? TypeDefinition(seq: [])
            let scope = Scope(definition: definition, values: record.values.map { Optional($0) }, streamSize: 0, streamPos: 0)
            return copy.writeRecord(&sub, definition: def, path: "", location: [], parents: parents + [scope], base: 0).count
        default: return nil
        }
    }

    /// Sets the field an expression names so that the expression yields `actual`.
    func assign(_ expression: Expression, actual: Int128, record: inout SchemaValue.Record, seq: [Field]) {
        var target = expression
        var value = actual
        // Invert `name`, `name + k`, `name - k`, `name * k`.
        while case .binary(let op, let left, .literal(let k)) = target {
            switch op {
            case "+": value -= k
            case "-": value += k
            case "*":
                guard k != 0, value % k == 0 else { return }
                value /= k
            default: return
            }
            target = left
        }
        guard let name = target.siblingReference, let index = seq.firstIndex(where: { $0.id == name }),
            !record.pinned.contains(index), index < record.values.count, case .integer = record.values[index]
        else { return }
        record.values[index] = .integer(value)
    }

    mutating func addSpan(_ field: Field, path: String, start: Int, end: Int, location: [Int], seq: [Field], instances: [Field]) {
        let isOffset = instances.contains { $0.position?.referencedSibling == field.id }
        let isCount = seq.contains { if case .count(let e)? = $0.repetition { return e.referencedSibling == field.id } else { return false } }
        let isLength = seq.contains { $0.size?.referencedSibling == field.id }
        var width: Int?, signed = false, big = false
        if case .integer(let w, let s, let e) = field.type {
            width = w
            signed = s
            big = (e ?? schema.endian) == .big
        }
        spans.append(
            FieldSpan(
                path: path, start: start, end: end, location: location, isCount: isCount, isLength: isLength,
                isVersion: field.version != nil, isChecksum: field.checksum != nil,
                isString: { if case .string = field.type { return true } else { return false } }(),
                isEnum: field.enumName != nil, isOffset: isOffset, integerWidth: width, signed: signed, bigEndian: big))
    }
}

extension Expression {
    /// The sibling an invertible expression (`n`, `n + 4`, `n * 2`) is built on.
    var referencedSibling: String? {
        var target = self
        while case .binary(let op, let left, .literal) = target, ["+", "-", "*"].contains(op) { target = left }
        return target.siblingReference
    }
}

extension SchemaValue.Record {
    func value(of field: Field, in seq: [Field]) -> SchemaValue? {
        guard let index = seq.firstIndex(where: { $0.id == field.id }), index < values.count else { return nil }
        return values[index]
    }

    /// Sets the value at a location path (record index, array index, record index, ...).
    mutating func set(_ value: SchemaValue, at location: [Int]) {
        guard let first = location.first, first < values.count else { return }
        if location.count == 1 {
            values[first] = value
            return
        }
        values[first] = values[first].setting(value, at: Array(location.dropFirst()))
    }
}

extension SchemaValue {
    /// This value with the one at `location` (below it) replaced.
    func setting(_ newValue: SchemaValue, at location: [Int]) -> SchemaValue {
        guard let first = location.first else { return newValue }
        switch self {
        case .array(var elements) where first < elements.count:
            elements[first] = elements[first].setting(newValue, at: Array(location.dropFirst()))
            return .array(elements)
        case .record(var record) where first < record.values.count:
            record.values[first] = record.values[first].setting(newValue, at: Array(location.dropFirst()))
            return .record(record)
        default:
            return self
        }
    }

    /// The value at `location` below this one.
    func value(at location: [Int]) -> SchemaValue? {
        guard let first = location.first else { return self }
        switch self {
        case .array(let elements) where first < elements.count: return elements[first].value(at: Array(location.dropFirst()))
        case .record(let record) where first < record.values.count: return record.values[first].value(at: Array(location.dropFirst()))
        default: return nil
        }
    }
}
