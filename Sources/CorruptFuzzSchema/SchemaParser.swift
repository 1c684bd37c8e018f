import CorruptFuzzCore

/// Reads bytes into a ``SchemaValue`` and checks every rule of the schema: the reference
/// validator.
///
/// A structural problem (a length past the end) stops the parse; a broken rule (a value out of
/// range, a bad checksum) is recorded and parsing goes on, so `all` finds every one of them.
/// A version newer than the app's stops at once: the rest of the layout may differ.
public struct SchemaParser: Sendable {
    public let schema: BinarySchema

    public init(schema: BinarySchema) { self.schema = schema }

    /// The outcome of a parse.
    public struct Result: Sendable {
        /// The value read, when the structure could be read to the end.
        public var value: SchemaValue?
        /// Every rule broken, in file order; empty for a valid file.
        public var violations: [Violation]
    }

    /// Parses and validates `bytes`.
    public func parse(_ bytes: [UInt8]) -> Result { parse(bytes, stopAtFirst: false) }

    /// Parses `bytes` and, with `stopAtFirst`, stops at the first broken rule (the first
    /// violation of a full parse: broken rules are recorded in file order, before any later
    /// structural error).
    private func parse(_ bytes: [UInt8], stopAtFirst: Bool) -> Result {
        guard !bytes.isEmpty else {
            return Result(value: nil, violations: [.empty])
        }
        var state = ParseState(bytes: bytes, schema: schema, stopAtFirst: stopAtFirst)
        var stream = Stream(start: 0, end: bytes.count, pos: 0)
        do {
            let record = try state.readRecord(schema.root, typeName: schema.id, stream: &stream, parents: [])
            if stream.pos < stream.end, !schema.allowsTrailingBytes {
                state.violations.append(
                    Violation(.corrupt, "\(stream.end - stream.pos) trailing bytes after the last field"))
            }
            return Result(value: .record(record), violations: state.violations)
        } catch {
            return Result(value: nil, violations: state.violations + [error])
        }
    }

    /// The first violation in `bytes`, or nil when they are valid: what the reference
    /// validator says about every input of a campaign, so the parse stops there.
    public func firstViolation(_ bytes: [UInt8]) -> Violation? { parse(bytes, stopAtFirst: true).violations.first }
}

/// Where the parse is, as the names and indices that lead there: a path string is written only
/// for a violation (most fields break no rule, and a campaign parses every input).
private enum PathPart {
    case field(String)
    case index(Int)
}

private struct ParseState {
    let bytes: [UInt8]
    let schema: BinarySchema
    /// Whether the first broken rule ends the parse (``SchemaParser/firstViolation(_:)``).
    let stopAtFirst: Bool
    var violations: [Violation] = []
    private var path: [PathPart] = []

    init(bytes: [UInt8], schema: BinarySchema, stopAtFirst: Bool) {
        self.bytes = bytes
        self.schema = schema
        self.stopAtFirst = stopAtFirst
    }

    /// `habits[2].num_dates`.
    var pathString: String {
        var text = ""
        for part in path {
            switch part {
            case .field(let id):
                if !text.isEmpty { text += "." }
                text += id
            case .index(let index):
                text += "[\(index)]"
            }
        }
        return text
    }

    func fail(_ message: String, reason: Reason = .corrupt) -> Violation {
        Violation(reason, message, at: pathString)
    }

    /// Records a broken rule; the parse goes on, unless only the first one is wanted.
    mutating func record(_ message: String) throws(Violation) {
        let violation = fail(message)
        if stopAtFirst { throw violation }
        violations.append(violation)
    }

    mutating func readRecord(
        _ definition: TypeDefinition, typeName: String, stream: inout Stream, parents: [Scope]
    ) throws(Violation) -> SchemaValue.Record {
        var scope = Scope(definition: definition, values: [], streamSize: stream.end - stream.start, streamPos: 0)
        scope.values.reserveCapacity(definition.seq.count)
        var fieldStarts: [Int] = []
        fieldStarts.reserveCapacity(definition.seq.count)
        let depth = path.count
        for field in definition.seq {
            path.removeSubrange(depth...)
            path.append(.field(field.id))
            fieldStarts.append(stream.pos)
            scope.streamPos = stream.pos - stream.start
            // The scopes an expression sees; built only for a field that has one.
            let current = scope
            var built: [Scope]?
            func scopes() -> [Scope] {
                if let built { return built }
                let made = parents + [current]
                built = made
                return made
            }
            // `!= nil` before `if let`: copying an absent optional expression still costs a
            // call, for every field of every input.
            if field.condition != nil, let condition = field.condition {
                guard let holds = condition.evaluate({ resolve($0, scopes: scopes(), current: nil) }) else {
                    throw fail("cannot evaluate if: \(condition)")
                }
                if holds == 0 {
                    scope.values.append(.absent)
                    continue
                }
            }
            let value: SchemaValue
            if let repetition = field.repetition {
                var elements: [SchemaValue] = []
                switch repetition {
                case .count(let expression):
                    guard let count = expression.evaluate({ resolve($0, scopes: scopes(), current: nil) }), count >= 0 else {
                        throw fail("repeat count \(expression) is not a non-negative number")
                    }
                    // Every element takes at least one byte (or its fixed width): a count that
                    // cannot fit in what remains is a lie, caught before anything is allocated.
                    let minimum = Int128(field.type.fixedWidth ?? 1)
                    if count * minimum > Int128(stream.remaining) {
                        throw fail("\(count) elements of \(minimum) bytes need \(count * minimum) bytes, \(stream.remaining) left")
                    }
                    elements.reserveCapacity(Int(count))
                    for index in 0..<Int(count) {
                        path.append(.index(index))
                        elements.append(try readElement(field, stream: &stream, scopes: scopes, previous: elements.last))
                        path.removeLast()
                    }
                case .untilEnd:
                    while stream.remaining > 0 {
                        path.append(.index(elements.count))
                        elements.append(try readElement(field, stream: &stream, scopes: scopes, previous: elements.last))
                        path.removeLast()
                    }
                case .until(let expression):
                    while true {
                        path.append(.index(elements.count))
                        let element = try readElement(field, stream: &stream, scopes: scopes, previous: elements.last)
                        path.removeLast()
                        elements.append(element)
                        guard let done = expression.evaluate({ resolve($0, scopes: scopes(), current: element) }) else {
                            throw fail("cannot evaluate repeat-until: \(expression)")
                        }
                        if done != 0 { break }
                        if stream.remaining == 0 { throw fail("ends before repeat-until \(expression) holds") }
                    }
                }
                value = .array(elements)
            } else {
                value = try readElement(field, stream: &stream, scopes: scopes, previous: nil)
            }
            scope.values.append(value)
            if field.checksum != nil, let checksum = field.checksum, case .integer(let stored) = value {
                let from = checksum.from.flatMap { name in definition.seq.firstIndex { $0.id == name }.map { fieldStarts[$0] } } ?? 0
                let computed = Int128(Checksum.compute(checksum.algorithm, bytes, from..<fieldStarts[fieldStarts.count - 1]))
                if stored != computed {
                    try record("\(checksum.algorithm.rawValue) stored \(hex(stored)) != computed \(hex(computed))")
                }
            }
        }
        path.removeSubrange(depth...)
        var record = SchemaValue.Record(typeName: typeName, values: scope.values.map { $0 ?? .absent })
        if !definition.instances.isEmpty {
            let seqEnd = stream.pos
            var covered = seqEnd
            scope.streamPos = stream.pos - stream.start
            let scopes = parents + [scope]
            for instance in definition.instances {
                path.append(.field(instance.id))
                guard let position = instance.position,
                    let pos = position.evaluate({ resolve($0, scopes: scopes, current: nil) })
                else {
                    throw fail("cannot evaluate pos")
                }
                guard pos >= 0, pos <= Int128(stream.end - stream.start) else {
                    throw fail("pos \(pos) is outside the stream (0...\(stream.end - stream.start))")
                }
                var sub = Stream(start: stream.start, end: stream.end, pos: stream.start + Int(pos))
                record.instances.append(try readElement(instance, stream: &sub, scopes: { scopes }, previous: nil))
                covered = max(covered, sub.pos)
                path.removeLast()
            }
            record.tail = Array(bytes[seqEnd..<covered])
            stream.pos = covered
        }
        return record
    }

    mutating func readElement(
        _ field: Field, stream: inout Stream, scopes: () -> [Scope], previous: SchemaValue?
    ) throws(Violation) -> SchemaValue {
        func size() throws(Violation) -> Int {
            if field.sizeEOS { return stream.remaining }
            guard let expression = field.size else { throw fail("needs a size") }
            guard let size = expression.evaluate({ resolve($0, scopes: scopes(), current: nil) }) else {
                throw fail("cannot evaluate size \(expression)")
            }
            guard size >= 0 else { throw fail("size \(size) is negative") }
            guard size <= Int128(stream.remaining) else { throw fail("needs \(size) bytes, \(stream.remaining) left") }
            return Int(size)
        }
        func take(_ count: Int) throws(Violation) -> ArraySlice<UInt8> {
            guard count <= stream.remaining else { throw fail("needs \(count) bytes, \(stream.remaining) left") }
            defer { stream.pos += count }
            return bytes[stream.pos..<(stream.pos + count)]
        }

        switch field.type {
        case .contents(let expected):
            let got = try take(expected.count)
            if !got.elementsEqual(expected) { throw fail("expected contents \(describe(expected))") }
            return .bytes(expected)
        case .integer(let width, let signed, let endian):
            let raw = try take(width)
            let value = IntegerCodec.decode(raw, signed: signed, bigEndian: (endian ?? schema.endian) == .big)
            try check(field, value, previous: previous, scopes: scopes)
            return .integer(value)
        case .float(let width, let endian):
            let raw = IntegerCodec.decode(try take(width), signed: false, bigEndian: (endian ?? schema.endian) == .big)
            let double = width == 4 ? Double(Float(bitPattern: UInt32(truncatingIfNeeded: raw))) : Double(bitPattern: UInt64(truncatingIfNeeded: raw))
            return .float(double)
        case .bytes:
            return .bytes(Array(try take(try size())))
        case .string(let zeroTerminated):
            let raw: [UInt8]
            if zeroTerminated, field.size == nil, !field.sizeEOS {
                guard let zero = bytes[stream.pos..<stream.end].firstIndex(of: 0) else { throw fail("has no terminating zero byte") }
                raw = Array(bytes[stream.pos..<zero])
                stream.pos = zero + 1
            } else {
                raw = Array(try take(try size()))
            }
            try checkText(raw, encoding: field.encoding)
            return .bytes(raw)
        case .user(let name):
            let length = field.size != nil || field.sizeEOS ? try size() : nil
            return try readUser(name, stream: &stream, scopes: scopes(), length: length)
        case .switchOn(let selector, let cases, let defaultType):
            guard let key = selector.evaluate({ resolve($0, scopes: scopes(), current: nil) }) else {
                throw fail("cannot evaluate switch-on \(selector)")
            }
            let length = field.size != nil || field.sizeEOS ? try size() : nil
            guard let name = cases[key] ?? defaultType else {
                return .bytes(Array(try take(length ?? 0)))
            }
            return try readUser(name, stream: &stream, scopes: scopes(), length: length)
        }
    }

    mutating func readUser(
        _ name: String, stream: inout Stream, scopes: [Scope], length: Int?
    ) throws(Violation) -> SchemaValue {
        guard let definition = schema.types[name] else { throw fail("unknown type \(name)") }
        if let length {
            var sub = Stream(start: stream.pos, end: stream.pos + length, pos: stream.pos)
            let record = try readRecord(definition, typeName: name, stream: &sub, parents: scopes)
            if sub.pos < sub.end {
                try self.record("\(sub.end - sub.pos) unused bytes at the end of \(name)")
            }
            stream.pos += length
            return .record(record)
        }
        return .record(try readRecord(definition, typeName: name, stream: &stream, parents: scopes))
    }

    mutating func check(_ field: Field, _ value: Int128, previous: SchemaValue?, scopes: () -> [Scope]) throws(Violation) {
        // Each rule is read where it is (`field.valid?.min`): copying a whole constraint
        // retains its expression and list, for every integer of every input.
        if let current = field.version?.current, value > current {
            throw fail("\(value) is newer than supported \(current)", reason: .unsupportedVersion)
        }
        if field.valid != nil {
            if let eq = field.valid?.equals, value != eq { try record("\(value) is not \(eq)") }
            if let min = field.valid?.min, value < min { try record("\(value) is below min \(min)") }
            if let max = field.valid?.max, value > max { try record("\(value) exceeds max \(max)") }
            if field.valid?.anyOf != nil, let any = field.valid?.anyOf, !any.contains(value) { try record("\(value) is not one of \(any)") }
            if field.valid?.expression != nil, let expression = field.valid?.expression,
                expression.evaluate({ resolve($0, scopes: scopes(), current: .integer(value)) }) == 0
            {
                try record("\(value) breaks \(expression)")
            }
        }
        if field.enumName != nil, let name = field.enumName, let known = schema.enums[name], known[value] == nil {
            try record("\(value) is not a known \(name)")
        }
        if let order = field.order, let last = previous?.integer {
            if order == .strictlyIncreasing ? value <= last : value < last {
                try record("\(value) is not after \(last)")
            }
        }
    }

    mutating func checkText(_ raw: [UInt8], encoding: String) throws(Violation) {
        // The usual spellings first: upper-casing the name allocates, for every string field.
        let name = encoding == "UTF-8" || encoding == "ASCII" ? encoding : encoding.uppercased()
        switch name {
        case "UTF-8", "UTF8":
            if !UTF8Check.isValid(raw) { try record("invalid UTF-8") }
        case "ASCII":
            if raw.contains(where: { $0 >= 0x80 }) { try record("not ASCII") }
        default:
            break
        }
    }
}

/// Whether bytes are well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
/// past U+10FFFF), without building the string: every string field of every input is checked.
enum UTF8Check {
    static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var i = 0
            let n = buffer.count
            while i < n {
                let b0 = buffer[i]
                if b0 < 0x80 {
                    i += 1
                    continue
                }
                func continuation(_ k: Int) -> Bool { i + k < n && buffer[i + k] & 0xC0 == 0x80 }
                switch b0 {
                case 0xC2...0xDF:
                    guard continuation(1) else { return false }
                    i += 2
                case 0xE0...0xEF:
                    guard continuation(1), continuation(2) else { return false }
                    let b1 = buffer[i + 1]
                    if b0 == 0xE0 && b1 < 0xA0 { return false }  // overlong
                    if b0 == 0xED && b1 >= 0xA0 { return false }  // a surrogate
                    i += 3
                case 0xF0...0xF4:
                    guard continuation(1), continuation(2), continuation(3) else { return false }
                    let b1 = buffer[i + 1]
                    if b0 == 0xF0 && b1 < 0x90 { return false }  // overlong
                    if b0 == 0xF4 && b1 >= 0x90 { return false }  // past U+10FFFF
                    i += 4
                default:
                    return false
                }
            }
            return true
        }
    }
}
