import CorruptFuzzCore

/// Draws valid values of a schema from a seeded random generator, with sizes under control.
///
/// Fields are drawn in order, so a count or length field is drawn before the array or string
/// it describes, within its `valid` range and the limits; conditions, sizes and switch-on
/// selectors then see the values drawn before them. The encoder fills in checksums.
public struct SchemaGenerator: Sendable {
    /// Bounds on what is generated.
    public struct Limits: Sendable, Hashable {
        /// The most elements of one repeated field.
        public var maxElements: Int
        /// The most bytes of one string or byte array.
        public var maxBytes: Int
        /// The deepest nesting of user types.
        public var maxDepth: Int

        public init(maxElements: Int = 6, maxBytes: Int = 24, maxDepth: Int = 8) {
            self.maxElements = maxElements
            self.maxBytes = maxBytes
            self.maxDepth = maxDepth
        }
    }

    public let schema: BinarySchema
    public var limits: Limits
    private let plan: SchemaPlan
    private let encoder: SchemaEncoder

    public init(schema: BinarySchema, limits: Limits = .init()) {
        self.schema = schema
        self.limits = limits
        plan = SchemaPlan(schema)
        encoder = SchemaEncoder(schema: schema)
    }

    /// Draws one valid value.
    public func generate(using rng: inout FuzzRNG) -> SchemaValue {
        var scopes = ScopeStack()
        return .record(record(plan.root, typeName: schema.id, rng: &rng, scopes: &scopes, depth: 0))
    }

    /// Draws one valid file.
    public func generateFile(using rng: inout FuzzRNG) -> [UInt8] {
        encoder.bytes(generate(using: &rng))
    }

    /// Draws a record of `type`; `scopes` holds the records it is drawn in, and expressions see
    /// the fields drawn before (those after are not drawn yet and evaluate to nothing).
    func record(_ type: TypePlan, typeName: String, rng: inout FuzzRNG, scopes: inout ScopeStack, depth: Int) -> SchemaValue.Record {
        let definition = type.definition
        var values: [SchemaValue] = []
        scopes.push(type, streamSize: 0)
        for _ in definition.seq { scopes.append(.opaque) }
        defer { scopes.pop() }
        for field in definition.seq {
            defer { scopes.set(ScopeValue(values[values.count - 1]), at: values.count - 1) }
            if let condition = field.condition, scopes.evaluate(condition) == 0 {
                values.append(.absent)
                continue
            }
            // A count or length drawn here decides the size of what it describes.
            // At the deepest nesting, the least: a type that contains itself (a node with
            // children) then ends in a valid leaf, not in a record left empty.
            let deepest = depth >= limits.maxDepth
            if let derived = derivedRange(of: field, in: definition) {
                values.append(.integer(deepest ? derived.lowerBound : drawSize(derived, rng: &rng)))
                continue
            }
            if let repetition = field.repetition {
                var count = 0
                switch repetition {
                case .count(let expression): count = Int(clamping: scopes.evaluate(expression) ?? 0)
                case .untilEnd: count = deepest ? 0 : rng.below(limits.maxElements + 1)
                case .until: count = 1 + rng.below(limits.maxElements)
                }
                var elements: [SchemaValue] = []
                for _ in 0..<max(0, count) {
                    elements.append(element(field, rng: &rng, scopes: &scopes, depth: depth))
                }
                if field.order != nil { elements = ordered(elements, field: field) }
                values.append(.array(elements))
            } else {
                values.append(element(field, rng: &rng, scopes: &scopes, depth: depth))
            }
        }
        return SchemaValue.Record(typeName: typeName, values: values)
    }

    func element(_ field: Field, rng: inout FuzzRNG, scopes: inout ScopeStack, depth: Int) -> SchemaValue {
        func length() -> Int {
            if let size = field.size { return Int(clamping: max(0, scopes.evaluate(size) ?? 0)) }
            return rng.below(limits.maxBytes + 1)
        }
        switch field.type {
        case .contents(let bytes):
            return .bytes(bytes)
        case .integer(let width, let signed, _):
            return .integer(integer(field, width: width, signed: signed, rng: &rng))
        case .float:
            return .float(Double(rng.below(2_000_001) - 1_000_000) / 1000)
        case .bytes:
            return .bytes((0..<length()).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        case .string(let zeroTerminated):
            let count = zeroTerminated && field.size == nil ? rng.below(limits.maxBytes + 1) : length()
            return .bytes(text(bytes: count, ascii: zeroTerminated || field.encoding.uppercased() == "ASCII", rng: &rng))
        case .user(let name):
            return user(name, rng: &rng, scopes: &scopes, depth: depth, length: field.size == nil ? nil : length())
        case .switchOn(let selector, let cases, let defaultType):
            guard let key = scopes.evaluate(selector), let name = cases[key] ?? defaultType else {
                return .bytes((0..<length()).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
            }
            return user(name, rng: &rng, scopes: &scopes, depth: depth, length: nil)
        }
    }

    func user(_ name: String, rng: inout FuzzRNG, scopes: inout ScopeStack, depth: Int, length: Int?) -> SchemaValue {
        guard let type = plan.types[name], depth < limits.maxDepth else {
            return .record(SchemaValue.Record(typeName: name, values: []))
        }
        return .record(record(type, typeName: name, rng: &rng, scopes: &scopes, depth: depth + 1))
    }

    /// The range a count/length field may take, if a sibling's `repeat-expr` or `size` names it.
    func derivedRange(of field: Field, in definition: TypeDefinition) -> ClosedRange<Int128>? {
        guard case .integer(let width, let signed, _) = field.type else { return nil }
        let names = definition.seq.contains { other in
            if case .count(let e)? = other.repetition, e.referencedSibling == field.id { return true }
            return other.repetition == nil && other.size?.referencedSibling == field.id
        }
        guard names else { return nil }
        let isCount = definition.seq.contains { if case .count(let e)? = $0.repetition { return e.referencedSibling == field.id } else { return false } }
        let (typeMin, typeMax) = bounds(width: width, signed: signed)
        let lower = max(field.valid?.min ?? 0, max(typeMin, 0))
        let upper = min(field.valid?.max ?? typeMax, typeMax, Int128(isCount ? limits.maxElements : limits.maxBytes))
        return lower <= upper ? lower...upper : lower...lower
    }

    func drawSize(_ range: ClosedRange<Int128>, rng: inout FuzzRNG) -> Int128 {
        let span = Int(clamping: range.upperBound - range.lowerBound)
        // Small sizes more often: shrinking and short files find bugs faster.
        let pick = rng.oneIn(3) ? rng.below(span + 1) : rng.below(min(span, 3) + 1)
        return range.lowerBound + Int128(pick)
    }

    func integer(_ field: Field, width: Int, signed: Bool, rng: inout FuzzRNG) -> Int128 {
        if field.checksum != nil { return 0 }
        if let name = field.enumName, let known = schema.enums[name], !known.isEmpty {
            let keys = known.keys.sorted()
            return keys[rng.below(keys.count)]
        }
        let valid = field.valid
        if let eq = valid?.equals { return eq }
        if let any = valid?.anyOf, !any.isEmpty { return any[rng.below(any.count)] }
        let (typeMin, typeMax) = bounds(width: width, signed: signed)
        var lower = max(valid?.min ?? typeMin, typeMin)
        var upper = min(valid?.max ?? typeMax, typeMax)
        if let version = field.version {
            lower = max(lower, 1)
            upper = min(upper, version.current)
        }
        guard lower < upper else { return lower }
        let span = upper - lower
        if span < Int128(UInt64.max), !rng.oneIn(4) || span <= 255 {
            // Mostly small offsets from the lower bound (or around zero when it is allowed).
            let base = lower <= 0 && upper >= 0 ? Int128(0) : lower
            let small = Int128(rng.below(Int(min(span, 255)) + 1))
            let candidate = base + (lower < 0 && rng.oneIn(2) ? -small : small)
            if candidate >= lower, candidate <= upper { return candidate }
        }
        let random = Int128(rng.next() >> 1) % (span + 1)
        return lower + random
    }

    func ordered(_ elements: [SchemaValue], field: Field) -> [SchemaValue] {
        var values = elements.compactMap(\.integer).sorted()
        if field.order == .strictlyIncreasing {
            var unique: [Int128] = []
            for v in values where unique.last.map({ v > $0 }) ?? true { unique.append(v) }
            values = unique
        }
        return values.map { .integer($0) }
    }

    func text(bytes count: Int, ascii: Bool, rng: inout FuzzRNG) -> [UInt8] {
        var out: [UInt8] = []
        let pieces: [[UInt8]] = [Array("é".utf8), Array("✓".utf8), Array("🧘".utf8), Array("水".utf8)]
        while out.count < count {
            let room = count - out.count
            if !ascii, rng.oneIn(4), let piece = pieces.filter({ $0.count <= room }).randomElement(using: &rng) {
                out += piece
            } else {
                out.append(UInt8(0x61 + rng.below(26)))
            }
        }
        return out
    }
}

/// The smallest and largest values of an integer type.
func bounds(width: Int, signed: Bool) -> (Int128, Int128) {
    let bits = Int128(width * 8)
    if signed { return (-(Int128(1) << (bits - 1)), (Int128(1) << (bits - 1)) - 1) }
    return (0, (Int128(1) << bits) - 1)
}
