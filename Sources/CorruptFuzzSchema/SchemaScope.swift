import CorruptFuzzCore

/// The part of the input a record reads: `start..<end`, with the read position.
struct Stream {
    var start: Int
    var end: Int
    var pos: Int
    var remaining: Int { end - pos }
}

/// What an expression can learn of a field's value: its number, or its element count or byte
/// length (`name.size`). Records, floats and absent fields evaluate to nothing, so scopes keep
/// no more than this and never retain the value tree.
enum ScopeValue {
    case integer(Int128)
    /// An array's element count, or the length of a byte, string or contents field.
    case sized(Int)
    case opaque

    init(_ value: SchemaValue) {
        switch value {
        case .integer(let v): self = .integer(v)
        case .bytes(let b): self = .sized(b.count)
        case .array(let a): self = .sized(a.count)
        default: self = .opaque
        }
    }

    var integer: Int128? {
        if case .integer(let v) = self { return v }
        return nil
    }
}

/// The records being read or written, innermost last, with the values expressions can name.
///
/// Pushed on entering a record and popped on leaving it, so that nothing is allocated per field:
/// the values of all open records share one array, each record's from its frame's `base`.
struct ScopeStack {
    struct Frame {
        /// Not retained: a stack lives within one parse or encoding, and the plan that holds
        /// every type outlives it. Frames so hold no references, and emptying the stack between
        /// validations releases nothing.
        unowned(unsafe) let type: TypePlan
        let base: Int
        var count = 0
        var streamSize: Int
        var streamPos = 0
    }

    private(set) var frames: [Frame] = []
    private var values: [ScopeValue] = []

    mutating func push(_ type: TypePlan, streamSize: Int) {
        frames.append(Frame(type: type, base: values.count, streamSize: streamSize))
    }

    mutating func pop() {
        values.removeSubrange(frames.removeLast().base...)
    }

    /// Empties the stack, keeping its storage.
    mutating func removeAll() {
        frames.removeAllKeepingStorage()
        values.removeAllKeepingStorage()
    }

    /// Adds a value to the innermost record (the next field's, in schema order).
    mutating func append(_ value: ScopeValue) {
        values.append(value)
        frames[frames.count - 1].count += 1
    }

    /// Replaces the innermost record's value at `index`.
    mutating func set(_ value: ScopeValue, at index: Int) {
        values[frames[frames.count - 1].base + index] = value
    }

    /// The read or write position in the innermost record, for `_io.pos`.
    mutating func setStreamPos(_ pos: Int) {
        frames[frames.count - 1].streamPos = pos
    }

    /// Resolves a reference path (innermost record last); `current` is `_`.
    func resolve(_ path: [String], current: ScopeValue?) -> Int128? {
        guard var scopeIndex = frames.indices.last else { return nil }
        var rest = path[...]
        while let head = rest.first {
            switch head {
            case "_":
                guard rest.count == 1 || rest.dropFirst().first == "size" else { return nil }
                if rest.count == 2, case .sized(let count)? = current { return Int128(count) }
                return current?.integer
            case "_parent": scopeIndex -= 1
            case "_root": scopeIndex = 0
            case "_io":
                guard scopeIndex >= 0, let what = rest.dropFirst().first else { return nil }
                let frame = frames[scopeIndex]
                switch what {
                case "size": return Int128(frame.streamSize)
                case "pos": return Int128(frame.streamPos)
                case "eof": return frame.streamPos >= frame.streamSize ? 1 : 0
                default: return nil
                }
            default:
                guard scopeIndex >= 0 else { return nil }
                let frame = frames[scopeIndex]
                guard let index = frame.type.index(of: head), index < frame.count else { return nil }
                let value = values[frame.base + index]
                if rest.count == 2, rest.last == "size" {
                    if case .sized(let count) = value { return Int128(count) }
                    return nil
                }
                return rest.count == 1 ? value.integer : nil
            }
            if scopeIndex < 0 { return nil }
            rest = rest.dropFirst()
        }
        return nil
    }

    /// Evaluates `expression` against the open records.
    func evaluate(_ expression: Expression, current: ScopeValue? = nil) -> Int128? {
        expression.evaluate { resolve($0, current: current) }
    }
}

/// A field path (`habits[2].name_len`) kept as its parts while reading or writing, and spelled
/// out only when a violation or span needs it: most fields never do.
struct FieldPath {
    enum Component {
        /// A field, by its plan: its identity stands for its place in the schema. Not
        /// retained, as a ``ScopeStack/Frame``'s type is not: a path lives within one parse or
        /// encoding, and the plan outlives it.
        case field(Unmanaged<FieldPlan>)
        case index(Int)
    }

    private var components: [Component] = []

    mutating func push(_ field: FieldPlan) { components.append(.field(Unmanaged.passUnretained(field))) }
    mutating func push(index: Int) { components.append(.index(index)) }
    mutating func pop() { components.removeLast() }
    /// Empties the path, keeping its storage.
    mutating func removeAll() { components.removeAllKeepingStorage() }

    /// A violation's ``Violation/site``: the rule checked at source line `line`, at this path's
    /// fields (indices left out: every element of an array is one place).
    func site(_ line: UInt) -> Int {
        var hash = WordHash()
        hash.add(Int(line))
        for case .field(let plan) in components { hash.add(Int(bitPattern: plan.toOpaque())) }
        return Int(truncatingIfNeeded: hash.value)
    }

    /// `habits[2].name_len`: ids joined by dots, indices in brackets.
    var rendered: String {
        var out = ""
        for component in components {
            switch component {
            case .field(let plan):
                let id = plan.takeUnretainedValue().id
                out = out.isEmpty ? id : "\(out).\(id)"
            case .index(let index): out = "\(out)[\(index)]"
            }
        }
        return out
    }
}

extension Array {
    /// Empties the array, keeping its storage, one element at a time: for the few elements of
    /// a parse's stacks this costs less than `removeAll(keepingCapacity:)`, which replaces a
    /// subrange.
    @inline(__always) mutating func removeAllKeepingStorage() {
        while !isEmpty { removeLast() }
    }
}
