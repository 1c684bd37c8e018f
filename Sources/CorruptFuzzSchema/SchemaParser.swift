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
    public func parse(_ bytes: [UInt8]) -> Result {
        guard !bytes.isEmpty else {
            return Result(value: nil, violations: [.empty])
        }
        var state = ParseState(bytes: bytes, schema: schema)
        var stream = Stream(start: 0, end: bytes.count, pos: 0)
        do {
            let record = try state.readRecord(schema.root, typeName: schema.id, stream: &stream, path: "", parents: [])
            if stream.pos < stream.end, !schema.allowsTrailingBytes {
                state.violations.append(
                    Violation(.corrupt, "\(stream.end - stream.pos) trailing bytes after the last field"))
            }
            return Result(value: .record(record), violations: state.violations)
        } catch {
            return Result(value: nil, violations: state.violations + [error])
        }
    }

    /// The first violation in `bytes`, or nil when they are valid.
    public func firstViolation(_ bytes: [UInt8]) -> Violation? { parse(bytes).violations.first }
}

private struct ParseState {
    let bytes: [UInt8]
    let schema: BinarySchema
    var violations: [Violation] = []

    init(bytes: [UInt8], schema: BinarySchema) {
        self.bytes = bytes
        self.schema = schema
    }

    func fail(_ path: String, _ message: String, reason: Reason = .corrupt) -> Violation {
        Violation(reason, message, at: path)
    }

    mutating func readRecord(
        _ definition: TypeDefinition, typeName: String, stream: inout Stream, path: String, parents: [Scope]
    ) throws(Violation) -> SchemaValue.Record {
        var scope = Scope(definition: definition, values: [], streamSize: stream.end - stream.start, streamPos: 0)
        var fieldStarts: [Int] = []
        for field in definition.seq {
            let fieldPath = path.isEmpty ? field.id : "\(path).\(field.id)"
            fieldStarts.append(stream.pos)
            scope.streamPos = stream.pos - stream.start
            let scopes = parents + [scope]
            if let condition = field.condition {
                guard let holds = condition.evaluate({ resolve($0, scopes: scopes, current: nil) }) else {
                    throw fail(fieldPath, "cannot evaluate if: \(condition)")
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
                    guard let count = expression.evaluate({ resolve($0, scopes: scopes, current: nil) }), count >= 0 else {
                        throw fail(fieldPath, "repeat count \(expression) is not a non-negative number")
                    }
                    // Every element takes at least one byte (or its fixed width): a count that
                    // cannot fit in what remains is a lie, caught before anything is allocated.
                    let minimum = Int128(field.type.fixedWidth ?? 1)
                    if count * minimum > Int128(stream.remaining) {
                        throw fail("\(fieldPath)", "\(count) elements of \(minimum) bytes need \(count * minimum) bytes, \(stream.remaining) left")
                    }
                    for index in 0..<Int(count) {
                        elements.append(try readElement(field, stream: &stream, path: "\(fieldPath)[\(index)]", scopes: scopes, previous: elements.last))
                    }
                case .untilEnd:
                    while stream.remaining > 0 {
                        elements.append(
                            try readElement(field, stream: &stream, path: "\(fieldPath)[\(elements.count)]", scopes: scopes, previous: elements.last))
                    }
                case .until(let expression):
                    while true {
                        let element = try readElement(field, stream: &stream, path: "\(fieldPath)[\(elements.count)]", scopes: scopes, previous: elements.last)
                        elements.append(element)
                        guard let done = expression.evaluate({ resolve($0, scopes: scopes, current: element) }) else {
                            throw fail(fieldPath, "cannot evaluate repeat-until: \(expression)")
                        }
                        if done != 0 { break }
                        if stream.remaining == 0 { throw fail(fieldPath, "ends before repeat-until \(expression) holds") }
                    }
                }
                value = .array(elements)
            } else {
                value = try readElement(field, stream: &stream, path: fieldPath, scopes: scopes, previous: nil)
            }
            scope.values.append(value)
            if let checksum = field.checksum, case .integer(let stored) = value {
                let from = checksum.from.flatMap { name in definition.seq.firstIndex { $0.id == name }.map { fieldStarts[$0] } } ?? 0
                let covered = bytes[from..<fieldStarts[fieldStarts.count - 1]]
                let computed = Int128(Checksum.compute(checksum.algorithm, covered))
                if stored != computed {
                    violations.append(fail(fieldPath, "\(checksum.algorithm.rawValue) stored \(hex(stored)) != computed \(hex(computed))"))
                }
            }
        }
        var record = SchemaValue.Record(typeName: typeName, values: scope.values.map { $0 ?? .absent })
        if !definition.instances.isEmpty {
            let seqEnd = stream.pos
            var covered = seqEnd
            scope.streamPos = stream.pos - stream.start
            let scopes = parents + [scope]
            for instance in definition.instances {
                let instancePath = path.isEmpty ? instance.id : "\(path).\(instance.id)"
                guard let position = instance.position,
                    let pos = position.evaluate({ resolve($0, scopes: scopes, current: nil) })
                else {
                    throw fail(instancePath, "cannot evaluate pos")
                }
                guard pos >= 0, pos <= Int128(stream.end - stream.start) else {
                    throw fail(instancePath, "pos \(pos) is outside the stream (0...\(stream.end - stream.start))")
                }
                var sub = Stream(start: stream.start, end: stream.end, pos: stream.start + Int(pos))
                record.instances.append(try readElement(instance, stream: &sub, path: instancePath, scopes: scopes, previous: nil))
                covered = max(covered, sub.pos)
            }
            record.tail = Array(bytes[seqEnd..<covered])
            stream.pos = covered
        }
        return record
    }

    mutating func readElement(
        _ field: Field, stream: inout Stream, path: String, scopes: [Scope], previous: SchemaValue?
    ) throws(Violation) -> SchemaValue {
        func size() throws(Violation) -> Int {
            if field.sizeEOS { return stream.remaining }
            guard let expression = field.size else { throw fail(path, "needs a size") }
            guard let size = expression.evaluate({ resolve($0, scopes: scopes, current: nil) }) else {
                throw fail(path, "cannot evaluate size \(expression)")
            }
            guard size >= 0 else { throw fail(path, "size \(size) is negative") }
            guard size <= Int128(stream.remaining) else { throw fail(path, "needs \(size) bytes, \(stream.remaining) left") }
            return Int(size)
        }
        func take(_ count: Int) throws(Violation) -> ArraySlice<UInt8> {
            guard count <= stream.remaining else { throw fail(path, "needs \(count) bytes, \(stream.remaining) left") }
            defer { stream.pos += count }
            return bytes[stream.pos..<(stream.pos + count)]
        }

        switch field.type {
        case .contents(let expected):
            let got = try take(expected.count)
            if !got.elementsEqual(expected) { throw fail(path, "expected contents \(describe(expected))") }
            return .bytes(expected)
        case .integer(let width, let signed, let endian):
            let raw = try take(width)
            let value = IntegerCodec.decode(raw, signed: signed, bigEndian: (endian ?? schema.endian) == .big)
            try check(field, value, path: path, previous: previous, scopes: scopes)
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
                guard let zero = bytes[stream.pos..<stream.end].firstIndex(of: 0) else { throw fail(path, "has no terminating zero byte") }
                raw = Array(bytes[stream.pos..<zero])
                stream.pos = zero + 1
            } else {
                raw = Array(try take(try size()))
            }
            try checkText(raw, encoding: field.encoding, path: path)
            return .bytes(raw)
        case .user(let name):
            let length = field.size != nil || field.sizeEOS ? try size() : nil
            return try readUser(name, stream: &stream, path: path, scopes: scopes, length: length)
        case .switchOn(let selector, let cases, let defaultType):
            guard let key = selector.evaluate({ resolve($0, scopes: scopes, current: nil) }) else {
                throw fail(path, "cannot evaluate switch-on \(selector)")
            }
            let length = field.size != nil || field.sizeEOS ? try size() : nil
            guard let name = cases[key] ?? defaultType else {
                return .bytes(Array(try take(length ?? 0)))
            }
            return try readUser(name, stream: &stream, path: path, scopes: scopes, length: length)
        }
    }

    mutating func readUser(
        _ name: String, stream: inout Stream, path: String, scopes: [Scope], length: Int?
    ) throws(Violation) -> SchemaValue {
        guard let definition = schema.types[name] else { throw fail(path, "unknown type \(name)") }
        if let length {
            var sub = Stream(start: stream.pos, end: stream.pos + length, pos: stream.pos)
            let record = try readRecord(definition, typeName: name, stream: &sub, path: path, parents: scopes)
            if sub.pos < sub.end {
                violations.append(fail(path, "\(sub.end - sub.pos) unused bytes at the end of \(name)"))
            }
            stream.pos += length
            return .record(record)
        }
        return .record(try readRecord(definition, typeName: name, stream: &stream, path: path, parents: scopes))
    }

    mutating func check(_ field: Field, _ value: Int128, path: String, previous: SchemaValue?, scopes: [Scope]) throws(Violation) {
        if let version = field.version {
            if value > version.current {
                throw fail(path, "\(value) is newer than supported \(version.current)", reason: .unsupportedVersion)
            }
        }
        if let valid = field.valid {
            if let eq = valid.equals, value != eq { violations.append(fail(path, "\(value) is not \(eq)")) }
            if let min = valid.min, value < min { violations.append(fail(path, "\(value) is below min \(min)")) }
            if let max = valid.max, value > max { violations.append(fail(path, "\(value) exceeds max \(max)")) }
            if let any = valid.anyOf, !any.contains(value) { violations.append(fail(path, "\(value) is not one of \(any)")) }
            if let expression = valid.expression,
                expression.evaluate({ resolve($0, scopes: scopes, current: .integer(value)) }) == 0
            {
                violations.append(fail(path, "\(value) breaks \(expression)"))
            }
        }
        if let name = field.enumName, let known = schema.enums[name], known[value] == nil {
            violations.append(fail(path, "\(value) is not a known \(name)"))
        }
        if let order = field.order, let last = previous?.integer {
            if order == .strictlyIncreasing ? value <= last : value < last {
                violations.append(fail(path, "\(value) is not after \(last)"))
            }
        }
    }

    mutating func checkText(_ raw: [UInt8], encoding: String, path: String) throws(Violation) {
        switch encoding.uppercased() {
        case "UTF-8", "UTF8":
            if String(validating: raw, as: UTF8.self) == nil { violations.append(fail(path, "invalid UTF-8")) }
        case "ASCII":
            if raw.contains(where: { $0 >= 0x80 }) { violations.append(fail(path, "not ASCII")) }
        default:
            break
        }
    }
}
