/// One thing wrong with a file, with where it is and the reason a loader should give.
public struct SchemaViolation: Error, Sendable, Hashable, CustomStringConvertible {
    /// `habits[2].num_dates`.
    public var path: String
    /// `4294967295 exceeds max 100000`.
    public var message: String
    /// `corrupt`, `unsupported-version` or `empty`.
    public var reason: String

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }

    public init(path: String, message: String, reason: String) {
        self.path = path
        self.message = message
        self.reason = reason
    }
}

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
        public var violations: [SchemaViolation]
    }

    /// Parses and validates `bytes`.
    public func parse(_ bytes: [UInt8]) -> Result {
        guard !bytes.isEmpty else {
            return Result(value: nil, violations: [SchemaViolation(path: "", message: "the file is empty", reason: "empty")])
        }
        var state = ParseState(bytes: bytes, schema: schema)
        var stream = Stream(start: 0, end: bytes.count, pos: 0)
        do {
            let record = try state.readRecord(schema.root, typeName: schema.id, stream: &stream, path: "", parents: [])
            if stream.pos < stream.end, !schema.allowsTrailingBytes {
                state.violations.append(
                    SchemaViolation(
                        path: "", message: "\(stream.end - stream.pos) trailing bytes after the last field", reason: "corrupt"))
            }
            return Result(value: .record(record), violations: state.violations)
        } catch {
            return Result(value: nil, violations: state.violations + [error])
        }
    }

    /// The first violation in `bytes`, or nil when they are valid.
    public func firstViolation(_ bytes: [UInt8]) -> SchemaViolation? { parse(bytes).violations.first }
}

struct Stream {
    var start: Int
    var end: Int
    var pos: Int
    var remaining: Int { end - pos }
}

/// Names and values in scope while evaluating expressions.
struct Scope {
    var definition: TypeDefinition
    var values: [SchemaValue?]
    var streamSize: Int
    var streamPos: Int

    func value(named name: String) -> SchemaValue? {
        guard let index = definition.seq.firstIndex(where: { $0.id == name }), index < values.count else { return nil }
        return values[index]
    }
}

/// Resolves a reference path against a stack of scopes (innermost last).
func resolve(_ path: [String], scopes: [Scope], current: SchemaValue?) -> Int128? {
    guard var scopeIndex = scopes.indices.last else { return nil }
    var rest = path[...]
    while let head = rest.first {
        switch head {
        case "_":
            guard rest.count == 1 || rest.dropFirst().first == "size" else { return nil }
            if rest.count == 2, case .bytes(let b)? = current { return Int128(b.count) }
            return current?.integer
        case "_parent": scopeIndex -= 1
        case "_root": scopeIndex = 0
        case "_io":
            guard scopeIndex >= 0, let what = rest.dropFirst().first else { return nil }
            let scope = scopes[scopeIndex]
            switch what {
            case "size": return Int128(scope.streamSize)
            case "pos": return Int128(scope.streamPos)
            case "eof": return scope.streamPos >= scope.streamSize ? 1 : 0
            default: return nil
            }
        default:
            guard scopeIndex >= 0, let value = scopes[scopeIndex].value(named: head) else { return nil }
            if rest.count == 2, rest.last == "size" {
                switch value {
                case .array(let a): return Int128(a.count)
                case .bytes(let b): return Int128(b.count)
                default: return nil
                }
            }
            return rest.count == 1 ? value.integer : nil
        }
        if scopeIndex < 0 { return nil }
        rest = rest.dropFirst()
    }
    return nil
}

private struct ParseState {
    let bytes: [UInt8]
    let schema: BinarySchema
    var violations: [SchemaViolation] = []

    init(bytes: [UInt8], schema: BinarySchema) {
        self.bytes = bytes
        self.schema = schema
    }

    func fail(_ path: String, _ message: String, reason: String = "corrupt") -> SchemaViolation {
        SchemaViolation(path: path, message: message, reason: reason)
    }

    mutating func readRecord(
        _ definition: TypeDefinition, typeName: String, stream: inout Stream, path: String, parents: [Scope]
    ) throws(SchemaViolation) -> SchemaValue.Record {
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
    ) throws(SchemaViolation) -> SchemaValue {
        func size() throws(SchemaViolation) -> Int {
            if field.sizeEOS { return stream.remaining }
            guard let expression = field.size else { throw fail(path, "needs a size") }
            guard let size = expression.evaluate({ resolve($0, scopes: scopes, current: nil) }) else {
                throw fail(path, "cannot evaluate size \(expression)")
            }
            guard size >= 0 else { throw fail(path, "size \(size) is negative") }
            guard size <= Int128(stream.remaining) else { throw fail(path, "needs \(size) bytes, \(stream.remaining) left") }
            return Int(size)
        }
        func take(_ count: Int) throws(SchemaViolation) -> ArraySlice<UInt8> {
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
    ) throws(SchemaViolation) -> SchemaValue {
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

    mutating func check(_ field: Field, _ value: Int128, path: String, previous: SchemaValue?, scopes: [Scope]) throws(SchemaViolation) {
        if let version = field.version {
            if value > version.current {
                throw fail(path, "\(value) is newer than supported \(version.current)", reason: "unsupported-version")
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

    mutating func checkText(_ raw: [UInt8], encoding: String, path: String) throws(SchemaViolation) {
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

func hex(_ value: Int128) -> String {
    let digits = String(UInt64(truncatingIfNeeded: value), radix: 16)
    return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
}

func describe(_ bytes: [UInt8]) -> String {
    if bytes.allSatisfy({ (0x20..<0x7F).contains($0) }) { return "\"\(String(decoding: bytes, as: UTF8.self))\"" }
    return "[" + bytes.map { hex(Int128($0)) }.joined(separator: ", ") + "]"
}

/// Reads and writes integers of any width in either byte order.
public enum IntegerCodec {
    public static func decode(_ raw: some Collection<UInt8>, signed: Bool, bigEndian: Bool) -> Int128 {
        var value: UInt64 = 0
        let ordered = bigEndian ? Array(raw) : raw.reversed()
        for byte in ordered { value = value << 8 | UInt64(byte) }
        let width = raw.count
        if signed, width < 8, value & (1 << UInt64(width * 8 - 1)) != 0 {
            return Int128(value) - (Int128(1) << Int128(width * 8))
        }
        if signed, width == 8 { return Int128(Int64(bitPattern: value)) }
        return Int128(value)
    }

    public static func encode(_ value: Int128, width: Int, bigEndian: Bool, into out: inout [UInt8]) {
        let bits = UInt64(truncatingIfNeeded: value)
        for i in 0..<width {
            let shift = bigEndian ? (width - 1 - i) * 8 : i * 8
            out.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
        }
    }
}

/// Checksums a schema can name.
public enum Checksum {
    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    public static func compute(_ algorithm: ChecksumRule.Algorithm, _ bytes: some Sequence<UInt8>) -> UInt32 {
        switch algorithm {
        case .crc32:
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
            return crc ^ 0xFFFF_FFFF
        case .adler32:
            var a: UInt32 = 1, b: UInt32 = 0
            for byte in bytes {
                a = (a + UInt32(byte)) % 65521
                b = (b + a) % 65521
            }
            return b << 16 | a
        }
    }
}
