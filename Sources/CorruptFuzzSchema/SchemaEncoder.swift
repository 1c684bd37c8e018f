/// Writes a ``SchemaValue`` as bytes, recomputing what the data determines: a count from its
/// array's length, a length from its string's or record's size, a checksum from the bytes it
/// covers. Fields a mutation pinned are written as they are, so they can lie on purpose.
public struct SchemaEncoder: Sendable {
    public let schema: BinarySchema
    private let plan: SchemaPlan

    public init(schema: BinarySchema) {
        self.schema = schema
        plan = SchemaPlan(schema)
    }

    /// The encoded file and where each field landed.
    public struct Output: Sendable {
        public var bytes: [UInt8]
        public var spans: [FieldSpan]
        /// The value as written, derived fields recomputed.
        public var value: SchemaValue
        /// The checksums, in the order they were computed.
        var checksums: [ChecksumPatch] = []

        /// `bytes` (this encoding with some bytes changed in place, or moved as `checksums`
        /// say) with its checksums computed again, as encoding the changed value would. A
        /// checksum the bytes no longer hold is left out.
        func rechecksummed(_ bytes: [UInt8]) -> [UInt8] {
            var out = bytes
            for patch in checksums where patch.from <= patch.at && patch.at + patch.width <= out.count {
                _ = patch.apply(to: &out)
            }
            return out
        }
    }

    /// Encodes `value`, which must be a record of the schema's root type.
    public func encode(_ value: SchemaValue) -> Output { encode(value, recordsSpans: true) }

    /// Encodes without recording spans: the bytes only. Mutations re-encode a value for every
    /// input they make, and spell out no field paths for it.
    public func bytes(_ value: SchemaValue) -> [UInt8] { encode(value, recordsSpans: false).bytes }

    private func encode(_ value: SchemaValue, recordsSpans: Bool) -> Output {
        guard case .record(var fixed) = value else { return Output(bytes: [], spans: [], value: value) }
        var state = EncodeState(plan: plan, recordsSpans: recordsSpans)
        state.writeRecord(&fixed, type: plan.root)
        // Checksums last, in file order, so one may cover another.
        let checksums = state.checksums.sorted(by: { $0.at < $1.at })
        for patch in checksums {
            let sum = patch.apply(to: &state.out)
            if recordsSpans { fixed.set(.integer(sum), at: patch.location) }
        }
        return Output(bytes: state.out, spans: state.spans, value: recordsSpans ? .record(fixed) : value, checksums: recordsSpans ? checksums : [])
    }
}

/// A checksum field of an encoding: where it is and where what it covers starts.
struct ChecksumPatch: Sendable {
    var at: Int
    var width: Int
    var bigEndian: Bool
    var from: Int
    var algorithm: ChecksumRule.Algorithm
    var location: [Int]

    /// Computes the checksum over `out[from..<at]` and writes it at `at`; returns it.
    func apply(to out: inout [UInt8]) -> Int128 {
        let sum = Int128(Checksum.compute(algorithm, out[from..<at]))
        var encoded: [UInt8] = []
        IntegerCodec.encode(sum, width: width, bigEndian: bigEndian, into: &encoded)
        out.replaceSubrange(at..<(at + width), with: encoded)
        return sum
    }
}

/// One encoding, written into one buffer. With `recordsSpans` it notes where each field
/// landed, with its path and location; without, it only writes bytes.
private struct EncodeState {
    let plan: SchemaPlan
    let recordsSpans: Bool
    var out: [UInt8] = []
    var spans: [FieldSpan] = []
    var checksums: [ChecksumPatch] = []
    /// The records being written, for expressions (their stream size is 0: it is not known yet).
    var scopes = ScopeStack()
    var path = FieldPath()
    /// The location of the field being written in the value tree (kept with spans only).
    var location: [Int] = []
    /// Where each field of the open records starts in `out`.
    var fieldStarts: [Int] = []

    init(plan: SchemaPlan, recordsSpans: Bool) {
        self.plan = plan
        self.recordsSpans = recordsSpans
    }

    /// Appends a record to `out`, fixing its derived fields first; the path and location
    /// already name it.
    mutating func writeRecord(_ record: inout SchemaValue.Record, type: TypePlan) {
        let seq = type.fields
        while record.values.count < seq.count { record.values.append(.absent) }
        // Derived counts and lengths: a sibling named by `repeat-expr` or `size` gets the
        // actual count or byte length, unless pinned.
        for plan in seq {
            let field = plan.field
            if case .count(let expression)? = field.repetition, case .array(let elements)? = record.value(of: plan, in: type) {
                assign(expression, actual: Int128(elements.count), record: &record, type: type)
            }
            if let expression = field.size, field.repetition == nil, let value = record.value(of: plan, in: type) {
                if let length = byteLength(value, record: record, type: type) {
                    assign(expression, actual: Int128(length), record: &record, type: type)
                }
            }
        }
        // From here on, what expressions can see of the values does not change: the values
        // written below are the same integers, byte strings, arrays of the same length and
        // records.
        scopes.push(type, streamSize: 0)
        for value in record.values { scopes.append(ScopeValue(value)) }
        // Sizes that cannot be inverted (`len % 2` padding) follow the fields they depend on.
        for (index, plan) in seq.enumerated() where plan.field.repetition == nil && !plan.sizeIsDerived {
            guard let expression = plan.field.size, case .bytes(let b) = record.values[index] else { continue }
            if let wanted = scopes.evaluate(expression), wanted >= 0, wanted < 1 << 24, Int(wanted) != b.count, !record.pinned.contains(index) {
                record.values[index] = .bytes(Array(b.prefix(Int(wanted))) + Array(repeating: 0, count: max(0, Int(wanted) - b.count)))
                scopes.set(.sized(Int(wanted)), at: index)
            }
        }
        let recordStart = out.count
        let startsBase = fieldStarts.count
        for index in seq.indices {
            let plan = seq[index]
            fieldStarts.append(out.count)
            scopes.setStreamPos(out.count - recordStart)
            let start = out.count
            if recordsSpans {
                path.push(plan)
                location.append(index)
            }
            defer {
                if recordsSpans {
                    path.pop()
                    location.removeLast()
                }
            }
            // Taken out of the record while written, so that changing a nested record does
            // not copy the arrays that hold it.
            var value = record.values[index]
            record.values[index] = .absent
            switch value {
            case .absent:
                continue
            case .array(var elements):
                value = .absent
                for j in elements.indices {
                    let elementStart = out.count
                    if recordsSpans {
                        path.push(index: j)
                        location.append(j)
                    }
                    writeElement(&elements[j], plan: plan)
                    if recordsSpans {
                        addSpan(plan, start: elementStart)
                        path.pop()
                        location.removeLast()
                    }
                }
                record.values[index] = .array(elements)
            default:
                writeElement(&value, plan: plan)
                record.values[index] = value
                if let checksum = plan.field.checksum, !record.pinned.contains(index), let width = plan.field.type.fixedWidth,
                    case .integer = plan.field.type
                {
                    checksums.append(
                        ChecksumPatch(
                            at: start, width: width, bigEndian: plan.bigEndian, from: plan.checksumFrom.map { fieldStarts[startsBase + $0] } ?? 0,
                            algorithm: checksum.algorithm, location: location))
                }
            }
            if recordsSpans { addSpan(plan, start: start) }
        }
        fieldStarts.removeSubrange(startsBase...)
        scopes.pop()
        out += record.tail
    }

    mutating func writeElement(_ value: inout SchemaValue, plan: FieldPlan) {
        let field = plan.field
        switch (field.type, value) {
        case (.integer(let width, _, _), .integer(let v)):
            IntegerCodec.encode(v, width: width, bigEndian: plan.bigEndian, into: &out)
        case (.float(let width, _), .float(let d)):
            let bits = width == 4 ? Int128(Float(d).bitPattern) : Int128(d.bitPattern)
            IntegerCodec.encode(bits, width: width, bigEndian: plan.bigEndian, into: &out)
        case (.contents(let expected), .bytes(let b)):
            out += b.isEmpty ? expected : b
        case (.string, .bytes(let b)):
            out += b
            if plan.readsToZero { out.append(0) }
        case (.bytes, .bytes(let b)), (.switchOn, .bytes(let b)):
            out += b
        case (.user, .record(var record)), (.switchOn, .record(var record)):
            value = .absent
            writeRecord(&record, type: self.plan.types[record.typeName] ?? self.plan.emptyType)
            value = .record(record)
        default:
            break  // a value that does not fit its field (a mutation's doing) writes nothing
        }
    }

    /// The byte length `value` will take, for a `size` field of `record`.
    func byteLength(_ value: SchemaValue, record: SchemaValue.Record, type: TypePlan) -> Int? {
        switch value {
        case .bytes(let b): return b.count
        case .record(var sub):
            var copy = EncodeState(plan: plan, recordsSpans: false)
            copy.scopes = scopes
            copy.scopes.push(type, streamSize: 0)
            for value in record.values { copy.scopes.append(ScopeValue(value)) }
            copy.writeRecord(&sub, type: plan.types[sub.typeName] ?? plan.emptyType)
            return copy.out.count
        default: return nil
        }
    }

    /// Sets the field an expression names so that the expression yields `actual`.
    func assign(_ expression: Expression, actual: Int128, record: inout SchemaValue.Record, type: TypePlan) {
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
        guard let name = target.siblingReference, let index = type.index(of: name),
            !record.pinned.contains(index), index < record.values.count, case .integer = record.values[index]
        else { return }
        record.values[index] = .integer(value)
    }

    /// Notes the span of a field (or element) written from `start` to the end of `out`.
    mutating func addSpan(_ plan: FieldPlan, start: Int) {
        let field = plan.field
        var width: Int?, signed = false
        if case .integer(let w, let s, _) = field.type {
            width = w
            signed = s
        }
        spans.append(
            FieldSpan(
                path: path.rendered, start: start, end: out.count, location: location, isCount: plan.isCount, isLength: plan.isLength,
                isVersion: field.version != nil, isChecksum: field.checksum != nil,
                isString: { if case .string = field.type { return true } else { return false } }(),
                isEnum: field.enumName != nil, isOffset: plan.isOffset, integerWidth: width, signed: signed,
                bigEndian: width != nil && plan.bigEndian))
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
    /// The value of the first field of `type` with the id of `field`.
    func value(of field: FieldPlan, in type: TypePlan) -> SchemaValue? {
        guard let index = type.index(of: field.id), index < values.count else { return nil }
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
