import CorruptFuzzCore
import Foundation

/// Reads bytes into a ``SchemaValue`` and checks every rule of the schema: the reference
/// validator.
///
/// A structural problem (a length past the end) stops the parse; a broken rule (a value out of
/// range, a bad checksum) is recorded and parsing goes on, so `all` finds every one of them.
/// A version newer than the app's stops at once: the rest of the layout may differ.
public struct SchemaParser: Sendable {
    public let schema: BinarySchema
    private let plan: SchemaPlan
    /// The first-violation pass's working arrays, kept between calls.
    private let scratch: ParseScratch

    /// The deepest nesting of records a file may have: a schema whose types contain
    /// themselves (a tree of nodes) is read to this depth, and a file nested deeper is a
    /// violation, so that no file, however deep, overflows the stack (each record read is a few
    /// calls deep).
    public static let maxNesting = 64

    public init(schema: BinarySchema) {
        self.schema = schema
        plan = SchemaPlan(schema)
        scratch = ParseScratch(plan: plan)
    }

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
        var state = ParseState(bytes: bytes, plan: plan, buildsValue: true)
        do {
            let value = try state.readFile()
            return Result(value: value, violations: state.violations)
        } catch {
            return Result(value: nil, violations: state.violations + [error])
        }
    }

    /// The first violation in `bytes`, or nil when they are valid: what `parse(bytes)` lists
    /// first.
    ///
    /// This is the validator's question, asked for every input of a campaign, so it has its own
    /// pass: it stops at the first broken rule (in file order, as `parse` records them, before
    /// any later structural error) and builds no value tree, only what expressions can name.
    public func firstViolation(_ bytes: [UInt8]) -> Violation? {
        guard !bytes.isEmpty else { return .empty }
        // The arrays of the last pass, emptied but with their storage: a validation allocates
        // nothing then, unless its violation. A pass that finds them in use (another thread
        // validating) makes its own.
        if scratch.lock.try() {
            defer { scratch.lock.unlock() }
            return scratch.firstViolation(bytes)
        }
        var state = ParseState(bytes: bytes, plan: plan, buildsValue: false)
        state.writer = scratch.writer
        return state.firstViolation()
    }
}

/// The state of first-violation passes, kept between them with the storage of its arrays:
/// allocating and freeing them cost a validation more than reading most files. Used by one
/// pass at a time, under `lock`.
private final class ParseScratch: @unchecked Sendable {
    let lock = NSLock()
    /// Used under `lock` only, so without the runtime's exclusivity checks.
    @exclusivity(unchecked) private var state: ParseState

    let writer: FirstViolationWriter

    init(plan: SchemaPlan) {
        writer = FirstViolationWriter(plan: plan)
        state = ParseState(bytes: [], plan: plan, buildsValue: false)
        state.writer = writer
    }

    func firstViolation(_ bytes: [UInt8]) -> Violation? {
        state.firstViolation(of: bytes)
    }
}

/// Writes the message and path of a first-violation pass's violation, by running the pass
/// again over the same bytes with the text written.
private final class FirstViolationWriter: ViolationWriter {
    let plan: SchemaPlan

    init(plan: SchemaPlan) { self.plan = plan }

    func write(_ bytes: [UInt8]) -> (message: String, path: String) {
        var state = ParseState(bytes: bytes, plan: plan, buildsValue: false)
        guard let violation = state.firstViolation() else { return ("", "") }
        return (violation.message, violation.path)
    }
}

/// One parse. With `buildsValue` it reads the value tree and records every violation; without,
/// it is the first-violation pass: a broken rule is thrown at once, and values are read only
/// for what expressions can see of them (``ScopeValue``).
private struct ParseState {
    private(set) var bytes: [UInt8]
    let plan: SchemaPlan
    let buildsValue: Bool
    /// Writes the text of the violations this pass finds, when it is read; nil: the pass
    /// writes it (a parse, or the writer's own pass).
    var writer: FirstViolationWriter?
    var violations: [Violation] = []
    var scopes = ScopeStack()
    var path = FieldPath()
    /// Where each field of the open records started, for checksums that start at a field.
    var fieldStarts: [Int] = []
    /// How many records are open (at most ``SchemaParser/maxNesting``).
    var depth = 0

    init(bytes: [UInt8], plan: SchemaPlan, buildsValue: Bool) {
        self.bytes = bytes
        self.plan = plan
        self.buildsValue = buildsValue
    }

    /// Starts a first-violation pass over `bytes`, keeping the storage of the last one's arrays
    /// (whose elements hold no references: emptying them releases nothing).
    mutating func reset(_ bytes: [UInt8]) {
        self.bytes = bytes
        scopes.removeAll()
        path.removeAll()
        fieldStarts.removeAllKeepingStorage()
        depth = 0
    }

    /// The first broken rule in `bytes`, or nil, read with the storage of the last pass's
    /// arrays.
    mutating func firstViolation(of bytes: [UInt8]) -> Violation? {
        reset(bytes)
        defer { self.bytes = [] }
        return firstViolation()
    }

    /// The first broken rule, or nil.
    mutating func firstViolation() -> Violation? {
        do {
            _ = try readFile()
            return nil
        } catch {
            return error
        }
    }

    /// A value and what expressions can see of it; without `buildsValue`, the value is `.absent`
    /// (``SchemaValue`` is indirect: any other case would allocate its box).
    typealias Read = (value: SchemaValue, seen: ScopeValue)

    /// The violation of the rule checked at `line` (its site: that line at this field). With a
    /// ``writer``, its message and path are written only when read, by the writer's pass over
    /// the same bytes (most are never read), and making it allocates nothing.
    func fail(_ message: @autoclosure () -> String, reason: Reason = .corrupt, line: UInt = #line) -> Violation {
        if let writer { return Violation(reason, site: path.site(line), foundIn: bytes, by: writer) }
        return Violation(reason, message(), at: path.rendered, site: path.site(line))
    }

    /// Records a broken rule, or in the first-violation pass, ends the parse with it.
    mutating func report(_ message: @autoclosure () -> String, line: UInt = #line) throws(Violation) {
        let violation = fail(message(), line: line)
        if !buildsValue { throw violation }
        violations.append(violation)
    }

    mutating func readFile() throws(Violation) -> SchemaValue {
        var stream = Stream(start: 0, end: bytes.count, pos: 0)
        let record = try readRecord(plan.root, typeName: plan.id, stream: &stream)
        if stream.pos < stream.end, !plan.allowsTrailingBytes {
            let trailing = stream.end - stream.pos
            try report("\(trailing) trailing bytes after the last field")
        }
        return record
    }

    /// Reads a record of `type`; the path already names it.
    mutating func readRecord(_ type: TypePlan, typeName: String, stream: inout Stream) throws(Violation) -> SchemaValue {
        guard depth < SchemaParser.maxNesting else { throw fail("records nested deeper than \(SchemaParser.maxNesting)") }
        depth += 1
        defer { depth -= 1 }
        scopes.push(type, streamSize: stream.end - stream.start)
        let startsBase = fieldStarts.count
        var values: [SchemaValue] = []
        if buildsValue { values.reserveCapacity(type.fields.count) }
        for plan in type.fields {
            path.push(plan)
            if type.notesFieldStarts { fieldStarts.append(stream.pos) }
            scopes.setStreamPos(stream.pos - stream.start)
            let read = try readField(plan, stream: &stream)
            if let checksum = plan.field.checksum, case .integer(let stored) = read.seen {
                let from = plan.checksumFrom.map { fieldStarts[startsBase + $0] } ?? 0
                let computed = Int128(Checksum.compute(checksum.algorithm, bytes[from..<fieldStarts[fieldStarts.count - 1]]))
                if stored != computed {
                    try report("\(checksum.algorithm.rawValue) stored \(hex(stored)) != computed \(hex(computed))")
                }
            }
            scopes.append(read.seen)
            if buildsValue { values.append(read.value) }
            path.pop()
        }
        var record = SchemaValue.Record(typeName: typeName, values: buildsValue ? values : [])
        if !type.instances.isEmpty {
            let seqEnd = stream.pos
            var covered = seqEnd
            scopes.setStreamPos(stream.pos - stream.start)
            for instance in type.instances {
                path.push(instance)
                guard let position = instance.field.position, let pos = scopes.evaluate(position) else {
                    throw fail("cannot evaluate pos")
                }
                let size = stream.end - stream.start
                guard pos >= 0, pos <= Int128(size) else {
                    throw fail("pos \(pos) is outside the stream (0...\(size))")
                }
                var sub = Stream(start: stream.start, end: stream.end, pos: stream.start + Int(pos))
                let read = try readElement(instance, stream: &sub, previous: nil)
                if buildsValue { record.instances.append(read.value) }
                covered = max(covered, sub.pos)
                path.pop()
            }
            if buildsValue { record.tail = Array(bytes[seqEnd..<covered]) }
            stream.pos = covered
        }
        fieldStarts.removeSubrange(startsBase...)
        scopes.pop()
        return buildsValue ? .record(record) : .absent
    }

    /// Reads one `seq` field: absent when its `if` fails, else its element or elements.
    mutating func readField(_ plan: FieldPlan, stream: inout Stream) throws(Violation) -> Read {
        // The field's parts are read from the plan where they are used: a copy of the whole
        // field costs a validation more than reading most of its fields.
        if let condition = plan.field.condition {
            guard let holds = scopes.evaluate(condition) else {
                throw fail("cannot evaluate if: \(condition)")
            }
            if holds == 0 { return (.absent, .opaque) }
        }
        guard let repetition = plan.field.repetition else {
            return try readElement(plan, stream: &stream, previous: nil)
        }
        var elements: [SchemaValue] = []
        var count = 0
        var previous: ScopeValue?
        func add(_ read: Read) {
            if buildsValue { elements.append(read.value) }
            count += 1
            previous = read.seen
        }
        switch repetition {
        case .count(let expression):
            guard let total = scopes.evaluate(expression), total >= 0 else {
                throw fail("repeat count \(expression) is not a non-negative number")
            }
            // Every element takes at least one byte (or its fixed width): a count that
            // cannot fit in what remains is a lie, caught before anything is allocated.
            let minimum = Int128(plan.field.type.fixedWidth ?? 1)
            let left = stream.remaining
            if total * minimum > Int128(left) {
                throw fail("\(total) elements of \(minimum) bytes need \(total * minimum) bytes, \(left) left")
            }
            if buildsValue { elements.reserveCapacity(Int(total)) }
            for index in 0..<Int(total) {
                path.push(index: index)
                add(try readElement(plan, stream: &stream, previous: previous?.integer))
                path.pop()
            }
        case .untilEnd:
            while stream.remaining > 0 {
                path.push(index: count)
                add(try readElement(plan, stream: &stream, previous: previous?.integer))
                path.pop()
            }
        case .until(let expression):
            while true {
                path.push(index: count)
                let element = try readElement(plan, stream: &stream, previous: previous?.integer)
                path.pop()
                add(element)
                guard let done = scopes.evaluate(expression, current: element.seen) else {
                    throw fail("cannot evaluate repeat-until: \(expression)")
                }
                if done != 0 { break }
                if stream.remaining == 0 { throw fail("ends before repeat-until \(expression) holds") }
            }
        }
        return (buildsValue ? .array(elements) : .absent, .sized(count))
    }

    /// Reads one element; the path names it. `previous` is the element before, for `-order`.
    mutating func readElement(_ plan: FieldPlan, stream: inout Stream, previous: Int128?) throws(Violation) -> Read {
        func size() throws(Violation) -> Int {
            if plan.field.sizeEOS { return stream.remaining }
            guard let expression = plan.field.size else { throw fail("needs a size") }
            guard let size = scopes.evaluate(expression) else {
                throw fail("cannot evaluate size \(expression)")
            }
            guard size >= 0 else { throw fail("size \(size) is negative") }
            let left = stream.remaining
            guard size <= Int128(left) else { throw fail("needs \(size) bytes, \(left) left") }
            return Int(size)
        }
        func take(_ count: Int) throws(Violation) -> Range<Int> {
            let left = stream.remaining
            guard count <= left else { throw fail("needs \(count) bytes, \(left) left") }
            defer { stream.pos += count }
            return stream.pos..<(stream.pos + count)
        }
        func bytesRead(_ range: Range<Int>) -> Read {
            (buildsValue ? .bytes(Array(bytes[range])) : .absent, .sized(range.count))
        }

        switch plan.field.type {
        case .contents(let expected):
            let got = try take(expected.count)
            if !bytes[got].elementsEqual(expected) { throw fail("expected contents \(describe(expected))") }
            return (buildsValue ? .bytes(expected) : .absent, .sized(expected.count))
        case .integer(let width, let signed, _):
            let value = IntegerCodec.decode(bytes, at: try take(width), signed: signed, bigEndian: plan.bigEndian)
            try check(plan, value, previous: previous)
            return (buildsValue ? .integer(value) : .absent, .integer(value))
        case .float(let width, _):
            let raw = IntegerCodec.decode(bytes, at: try take(width), signed: false, bigEndian: plan.bigEndian)
            let double = width == 4 ? Double(Float(bitPattern: UInt32(truncatingIfNeeded: raw))) : Double(bitPattern: UInt64(truncatingIfNeeded: raw))
            return (buildsValue ? .float(double) : .absent, .opaque)
        case .bytes:
            return bytesRead(try take(try size()))
        case .string:
            let range: Range<Int>
            if plan.readsToZero {
                guard let zero = bytes[stream.pos..<stream.end].firstIndex(of: 0) else { throw fail("has no terminating zero byte") }
                range = stream.pos..<zero
                stream.pos = zero + 1
            } else {
                range = try take(try size())
            }
            try checkText(range, plan.textCheck)
            return bytesRead(range)
        case .user(let name):
            let length = plan.field.size != nil || plan.field.sizeEOS ? try size() : nil
            return try readUser(name, stream: &stream, length: length)
        case .switchOn(let selector, let cases, let defaultType):
            guard let key = scopes.evaluate(selector) else {
                throw fail("cannot evaluate switch-on \(selector)")
            }
            let length = plan.field.size != nil || plan.field.sizeEOS ? try size() : nil
            guard let name = cases[key] ?? defaultType else {
                return bytesRead(try take(length ?? 0))
            }
            return try readUser(name, stream: &stream, length: length)
        }
    }

    mutating func readUser(_ name: String, stream: inout Stream, length: Int?) throws(Violation) -> Read {
        guard let type = plan.types[name] else { throw fail("unknown type \(name)") }
        if let length {
            var sub = Stream(start: stream.pos, end: stream.pos + length, pos: stream.pos)
            let record = try readRecord(type, typeName: name, stream: &sub)
            if sub.pos < sub.end {
                let unused = sub.end - sub.pos
                try report("\(unused) unused bytes at the end of \(name)")
            }
            stream.pos += length
            return (record, .opaque)
        }
        return (try readRecord(type, typeName: name, stream: &stream), .opaque)
    }

    mutating func check(_ plan: FieldPlan, _ value: Int128, previous: Int128?) throws(Violation) {
        if let version = plan.field.version {
            if value > version.current {
                throw fail("\(value) is newer than supported \(version.current)", reason: .unsupportedVersion)
            }
        }
        if let valid = plan.field.valid {
            if let eq = valid.equals, value != eq { try report("\(value) is not \(eq)") }
            if let min = valid.min, value < min { try report("\(value) is below min \(min)") }
            if let max = valid.max, value > max { try report("\(value) exceeds max \(max)") }
            if let any = valid.anyOf, !any.contains(value) { try report("\(value) is not one of \(any)") }
            if let expression = valid.expression, scopes.evaluate(expression, current: .integer(value)) == 0 {
                try report("\(value) breaks \(expression)")
            }
        }
        if let name = plan.field.enumName, let known = self.plan.enums[name], known[value] == nil {
            try report("\(value) is not a known \(name)")
        }
        if let order = plan.field.order, let last = previous {
            if order == .strictlyIncreasing ? value <= last : value < last {
                try report("\(value) is not after \(last)")
            }
        }
    }

    mutating func checkText(_ range: Range<Int>, _ check: FieldPlan.TextCheck) throws(Violation) {
        switch check {
        case .utf8:
            if !isValidUTF8(bytes[range]) { try report("invalid UTF-8") }
        case .ascii:
            if bytes[range].contains(where: { $0 >= 0x80 }) { try report("not ASCII") }
        case .none:
            break
        }
    }
}

/// Whether `bytes` are well-formed UTF-8, as `String(validating:as:)` decides, without making
/// the string.
func isValidUTF8(_ bytes: ArraySlice<UInt8>) -> Bool {
    if !bytes.contains(where: { $0 >= 0x80 }) { return true }
    var decoder = UTF8()
    var iterator = bytes.makeIterator()
    while true {
        switch decoder.decode(&iterator) {
        case .scalarValue: continue
        case .emptyInput: return true
        case .error: return false
        }
    }
}
