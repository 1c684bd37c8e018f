import CorruptFuzzCore

/// The values of an XML property list: containers built iteratively on a stack, and leaves.
extension XMLPlistParser {

    struct Frame {
        enum Kind: String { case plist, array, dict }
        var kind: Kind
        var index: Int
        var start: Int
        var refs: [Int] = []
        var keys: [Int] = []
        var pendingKey: Int?
        var keyNames: Set<[UInt8]> = []
        var value: Int?
    }

    /// The content of `<plist>` through `</plist>`: one value. Iterative, so nesting depth is
    /// bounded by memory, not by the stack.
    mutating func content(rootStart: Int) throws(Violation) -> Int {
        var stack = [Frame(kind: .plist, index: -1, start: rootStart)]
        while true {
            skipWhitespace()
            let frame = stack[stack.count - 1]
            guard i < b.count else {
                throw error("<\(frame.kind.rawValue)> (opened at \(position(frame.start))) is never closed: unbalanced tags")
            }
            if at("<!--") {
                try comment()
                continue
            }
            if at("<?") {
                try processingInstruction()
                continue
            }
            guard b[i] == UInt8(ascii: "<"), !at("<![CDATA[") else {
                throw error("text outside elements: \"\(snippet(i))\" in <\(frame.kind.rawValue)>")
            }
            let tagStart = i
            if at("</") {
                let name = try endTag()
                var closed = stack.removeLast()
                guard name == closed.kind.rawValue else {
                    throw error("</\(name)> closes <\(closed.kind.rawValue)> (opened at \(position(closed.start))): unbalanced tags", at: tagStart)
                }
                switch closed.kind {
                case .plist:
                    guard let value = closed.value else { throw error("<plist> holds no value", at: closed.start) }
                    return value
                case .array:
                    objects[closed.index] = .array(closed.refs, length: .natural(closed.refs.count))
                case .dict:
                    if let key = closed.pendingKey {
                        throw error("key \"\(objects[key].stringValue ?? "")\" is not followed by a value", at: tagStart)
                    }
                    try finishDictionary(&closed)
                }
                attach(closed.index, to: &stack)
                continue
            }
            let tag = try startTag()
            if let (name, _) = tag.attributes.first {
                throw error("attribute \(name) on <\(tag.name)>: only <plist> takes attributes", at: tagStart)
            }
            let top = stack.count - 1
            if stack[top].kind == .dict, stack[top].pendingKey == nil {
                guard tag.name == "key" else {
                    throw error("<\(tag.name)> in <dict> where a <key> was expected: a value without a key", at: tagStart)
                }
                let text = tag.empty ? [] : try text(of: "key", openedAt: tagStart)
                guard stack[top].keyNames.insert(text).inserted else {
                    throw error("duplicate key \"\(String(decoding: text, as: UTF8.self))\" in <dict>", at: tagStart)
                }
                objects.append(.naturalString(String(decoding: text, as: UTF8.self)))
                stack[top].pendingKey = objects.count - 1
                continue
            }
            if stack[top].kind == .plist, stack[top].value != nil {
                throw error("a second value <\(tag.name)> in <plist>: it holds one", at: tagStart)
            }
            let index = objects.count
            switch tag.name {
            case "array", "dict":
                if tag.empty {
                    objects.append(tag.name == "array" ? .array([], length: .inline) : .dictionary(keys: [], values: [], length: .inline))
                    attach(index, to: &stack)
                } else {
                    objects.append(.null)  // placeholder until the container closes
                    stack.append(Frame(kind: tag.name == "array" ? .array : .dict, index: index, start: tagStart))
                }
                continue
            case "string":
                let text = tag.empty ? [] : try text(of: "string", openedAt: tagStart)
                objects.append(.naturalString(String(decoding: text, as: UTF8.self)))
            case "true", "false":
                if !tag.empty {
                    guard at("</") else { throw error("<\(tag.name)> holds content: it is written <\(tag.name)/>") }
                    let endStart = i
                    let name = try endTag()
                    guard name == tag.name else { throw error("</\(name)> closes <\(tag.name)>: unbalanced tags", at: endStart) }
                }
                objects.append(.bool(tag.name == "true"))
            case "integer", "real", "date", "data":
                guard !tag.empty else { throw error("empty <\(tag.name)/>", at: tagStart) }
                let text = try text(of: tag.name, openedAt: tagStart)
                objects.append(try leaf(tag.name, text, at: tagStart))
            case "key":
                throw error("<key> outside a <dict>", at: tagStart)
            case "plist":
                throw error("<plist> inside <plist>", at: tagStart)
            default:
                throw error("unknown element <\(tag.name)>", at: tagStart)
            }
            attach(index, to: &stack)
        }
    }

    func attach(_ index: Int, to stack: inout [Frame]) {
        let top = stack.count - 1
        switch stack[top].kind {
        case .plist: stack[top].value = index
        case .array: stack[top].refs.append(index)
        case .dict:
            stack[top].keys.append(stack[top].pendingKey!)
            stack[top].refs.append(index)
            stack[top].pendingKey = nil
        }
    }

    /// A closed `<dict>`: a UID when its only entry is `CF$UID` with an integer (its key and
    /// value objects, the last two in the table, are dropped); a dictionary otherwise.
    mutating func finishDictionary(_ frame: inout Frame) throws(Violation) {
        if frame.keys.count == 1, objects[frame.keys[0]].stringValue == "CF$UID" {
            let value = objects[frame.refs[0]]
            guard case .integer(let v, _) = value else {
                throw error("CF$UID holds something other than an <integer>", at: frame.start)
            }
            guard v >= 0, v <= Int128(UInt32.max) else {
                throw error("CF$UID \(v) is not a UID (0...4294967295)", at: frame.start)
            }
            objects.removeLast(objects.count - frame.index - 1)
            objects[frame.index] = .naturalUID(UInt64(v))
            return
        }
        objects[frame.index] = .dictionary(keys: frame.keys, values: frame.refs, length: .natural(frame.keys.count))
    }

    /// The object of an `<integer>`, `<real>`, `<date>` or `<data>` element's text.
    func leaf(_ element: String, _ text: [UInt8], at start: Int) throws(Violation) -> BinaryPlist.Object {
        let string = String(decoding: text, as: UTF8.self)
        switch element {
        case "integer":
            guard let value = Self.integer(text) else {
                throw error("<integer> \"\(string.replacingControls())\" is not an integer in -2^63...2^64-1 (decimal, or hex with 0x)", at: start)
            }
            return .naturalInteger(value)
        case "real":
            guard let value = Self.real(string) else { throw error("<real> \"\(string.replacingControls())\" is not a real number", at: start) }
            return .real(value, widthLog2: 3)
        case "date":
            guard let value = Self.date(text) else {
                throw error("<date> \"\(string.replacingControls())\" is not a date written yyyy-MM-ddTHH:mm:ssZ with fields in range", at: start)
            }
            return .date(value)
        default:
            switch Self.base64(text) {
            case .success(let bytes): return .data(bytes, length: .natural(bytes.count))
            case .failure(let problem): throw error("<data>: bad base64: \(problem.message)", at: start)
            }
        }
    }
}
