/// Reads an XML property list strictly into the same object table as a binary one, so every
/// layer above (the keyed-archive checker, the mutator, the binary writer) works on both.
///
/// The tokenizer is hand-written for the small XML subset property lists use: the XML
/// declaration, a DOCTYPE naming an external DTD (never fetched), comments, processing
/// instructions, elements, text, CDATA sections, the five predefined entities and character
/// references. An internal DTD subset is refused, so no entity is ever declared, let alone
/// expanded, and nothing is read from the network or the file system.
///
/// Objects are numbered in document order (a container before its contents, a key before its
/// value). A `<dict>` whose only entry is `CF$UID` with an `<integer>` becomes a `.uid` object,
/// as NSKeyedArchiver writes UIDs in XML. Strings are ASCII or UTF-16 objects as Foundation's
/// binary writer would choose, integers get its widths, reals are 8 bytes.
///
/// Where this reader is stricter than Foundation's (CoreFoundation's) parser: it needs the
/// `<plist>` root element (with no attribute but `version="1.0"`), well-formed XML throughout
/// (quoted attributes, no `<` in them, matching tags, no control characters, valid UTF-8, no
/// BOM), a DOCTYPE naming `plist`, no duplicate keys, no whitespace inside `<integer>`,
/// `<real>` and `<date>`, dates with fields in range, and base64 that is padded to a multiple of
/// four characters. Like Foundation and unlike a general XML parser, it keeps carriage returns
/// in text as they are.
public enum XMLPlistReader {
    /// Reads `bytes`.
    /// - Throws: ``PlistError`` whose message starts with the line and column of the first
    ///   problem and says what it is.
    public static func read(_ bytes: [UInt8]) throws(PlistError) -> BinaryPlist {
        var parser = XMLPlistParser(bytes: bytes)
        return try parser.parse()
    }
}

struct XMLPlistParser {
    let b: [UInt8]
    var i = 0
    var objects: [BinaryPlist.Object] = []

    init(bytes: [UInt8]) { b = bytes }

    // MARK: - Errors and positions

    /// "line L, column C" of a byte offset (columns count characters, from 1).
    func position(_ offset: Int) -> String {
        let at = min(max(0, offset), b.count)
        var line = 1
        var lineStart = 0
        for k in 0..<at where b[k] == 0x0A {
            line += 1
            lineStart = k + 1
        }
        var column = 1
        for k in lineStart..<at where b[k] & 0xC0 != 0x80 { column += 1 }
        return "line \(line), column \(column)"
    }

    func error(_ message: String, at offset: Int? = nil) -> PlistError {
        PlistError("xml \(position(offset ?? i)): \(message)")
    }

    /// Up to 20 characters from `offset`, for messages.
    func snippet(_ offset: Int) -> String {
        var end = min(b.count, offset + 20)
        while end < b.count, b[end] & 0xC0 == 0x80 { end += 1 }
        let text = String(decoding: b[offset..<end], as: UTF8.self)
        return text.replacingControls() + (end < b.count ? "…" : "")
    }

    // MARK: - Bytes

    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }

    func at(_ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard i + n <= b.count else { return false }
        return literal.withUTF8Buffer { lit in
            for k in 0..<n where b[i + k] != lit[k] { return false }
            return true
        }
    }

    @discardableResult
    mutating func skipWhitespace() -> Int {
        let start = i
        while i < b.count, Self.isSpace(b[i]) { i += 1 }
        return i - start
    }

    /// The whole file is UTF-8 made of XML characters: no control characters but tab, line feed
    /// and carriage return, no surrogates, no U+FFFE or U+FFFF.
    func checkCharacters() throws(PlistError) {
        var k = 0
        let n = b.count
        while k < n {
            let c = b[k]
            if c < 0x80 {
                if c < 0x20, c != 0x09, c != 0x0A, c != 0x0D {
                    throw error("control character 0x\(hexByte(c)) is not an XML character", at: k)
                }
                k += 1
                continue
            }
            let length: Int
            var scalar: UInt32
            switch c {
            case 0xC2...0xDF: length = 2; scalar = UInt32(c & 0x1F)
            case 0xE0...0xEF: length = 3; scalar = UInt32(c & 0x0F)
            case 0xF0...0xF4: length = 4; scalar = UInt32(c & 0x07)
            default: throw error("byte 0x\(hexByte(c)) is not UTF-8", at: k)
            }
            guard k + length <= n else { throw error("UTF-8 sequence cut off by the end of the file", at: k) }
            for j in 1..<length {
                let cc = b[k + j]
                guard cc & 0xC0 == 0x80 else { throw error("byte 0x\(hexByte(c)) starts a broken UTF-8 sequence", at: k) }
                scalar = scalar << 6 | UInt32(cc & 0x3F)
            }
            let minimum: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x1_0000
            guard scalar >= minimum, scalar <= 0x10_FFFF, !(0xD800...0xDFFF).contains(scalar) else {
                throw error("invalid UTF-8 sequence (overlong, surrogate or past U+10FFFF)", at: k)
            }
            guard scalar != 0xFFFE, scalar != 0xFFFF else { throw error("U+\(String(scalar, radix: 16, uppercase: true)) is not an XML character", at: k) }
            k += length
        }
    }

    // MARK: - Document

    mutating func parse() throws(PlistError) -> BinaryPlist {
        if b.isEmpty { throw error("the file is empty") }
        if b.starts(with: [0xEF, 0xBB, 0xBF]) { throw error("UTF-8 byte-order mark: XML property lists are read as UTF-8 without one", at: 0) }
        if b.starts(with: [0xFE, 0xFF]) || b.starts(with: [0xFF, 0xFE]) {
            throw error("UTF-16 byte-order mark: only UTF-8 XML property lists are read", at: 0)
        }
        try checkCharacters()
        if at("<?xml"), i + 5 < b.count, Self.isSpace(b[i + 5]) { try declaration() }
        var sawDoctype = false
        while true {
            skipWhitespace()
            guard i < b.count else { throw error("no <plist> element") }
            if at("<!--") {
                try comment()
            } else if at("<!DOCTYPE") {
                guard !sawDoctype else { throw error("a second DOCTYPE") }
                try doctype()
                sawDoctype = true
            } else if at("<?") {
                try processingInstruction()
            } else if b[i] == UInt8(ascii: "<") {
                break
            } else {
                throw error("text outside elements: \"\(snippet(i))\"")
            }
        }
        let rootStart = i
        let root = try startTag()
        guard root.name == "plist" else { throw error("the root element is <\(root.name)>, not <plist>", at: rootStart) }
        for (name, value) in root.attributes where name != "version" || value != "1.0" {
            throw error("attribute \(name)=\"\(value)\" on <plist>: only version=\"1.0\" is read", at: rootStart)
        }
        if root.empty { throw error("<plist/> holds no value", at: rootStart) }
        let top = try content(rootStart: rootStart)
        while true {
            skipWhitespace()
            if i >= b.count { break }
            if at("<!--") {
                try comment()
            } else if at("<?") {
                try processingInstruction()
            } else {
                throw error("content after </plist>: \"\(snippet(i))\"")
            }
        }
        var plist = BinaryPlist(objects: objects, topObject: top)
        plist.fitLayout()
        return plist
    }

    /// `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`, at the very start.
    mutating func declaration() throws(PlistError) {
        let start = i
        i += 5
        var names: [String] = []
        while true {
            let space = skipWhitespace()
            if at("?>") { i += 2; break }
            guard i < b.count else { throw error("XML declaration not closed with '?>'", at: start) }
            guard space > 0 else { throw error("XML declaration: expected whitespace or '?>', found \"\(snippet(i))\"") }
            let attributeStart = i
            let (name, value) = try attribute(in: "the XML declaration")
            switch name {
            case "version":
                guard names.isEmpty else { throw error("XML declaration: version must come first", at: attributeStart) }
                guard value == "1.0" || value == "1.1" else { throw error("XML declaration: version \"\(value)\" is not 1.0", at: attributeStart) }
            case "encoding":
                guard names == ["version"] else { throw error("XML declaration: encoding must follow version", at: attributeStart) }
                guard value.lowercased() == "utf-8" else { throw error("XML declaration: encoding \"\(value)\": only UTF-8 is read", at: attributeStart) }
            case "standalone":
                guard names.first == "version", !names.contains("standalone") else {
                    throw error("XML declaration: standalone out of place", at: attributeStart)
                }
                guard value == "yes" || value == "no" else { throw error("XML declaration: standalone \"\(value)\" is not yes or no", at: attributeStart) }
            default:
                throw error("XML declaration: unknown attribute \(name)", at: attributeStart)
            }
            names.append(name)
        }
        guard names.first == "version" else { throw error("XML declaration without a version", at: start) }
    }

    /// `<!DOCTYPE plist PUBLIC "…" "…">`: the external DTD is named, never read; an internal
    /// subset (where entities would be declared) is refused.
    mutating func doctype() throws(PlistError) {
        let start = i
        i += 9
        guard skipWhitespace() > 0 else { throw error("DOCTYPE: expected whitespace after <!DOCTYPE", at: start) }
        let name = try xmlName("DOCTYPE")
        guard name == "plist" else { throw error("DOCTYPE names \(name), not plist", at: start) }
        var space = skipWhitespace()
        if at("PUBLIC") || at("SYSTEM") {
            guard space > 0 else { throw error("DOCTYPE: expected whitespace before \(at("PUBLIC") ? "PUBLIC" : "SYSTEM")") }
            let isPublic = at("PUBLIC")
            i += 6
            guard skipWhitespace() > 0 else { throw error("DOCTYPE: expected whitespace and a quoted identifier") }
            _ = try literal("DOCTYPE identifier")
            if isPublic {
                guard skipWhitespace() > 0 else { throw error("DOCTYPE: PUBLIC needs a public and a system identifier") }
                _ = try literal("DOCTYPE system identifier")
            }
            space = skipWhitespace()
        }
        _ = space
        if i < b.count, b[i] == UInt8(ascii: "[") {
            throw error("DOCTYPE: an internal DTD subset is not read (no entity is ever declared or expanded)")
        }
        guard i < b.count, b[i] == UInt8(ascii: ">") else {
            throw error(i < b.count ? "DOCTYPE: unexpected \"\(snippet(i))\"" : "DOCTYPE not closed with '>'", at: i < b.count ? i : start)
        }
        i += 1
    }

    /// A quoted literal with no markup in it (DOCTYPE identifiers).
    mutating func literal(_ what: String) throws(PlistError) -> String {
        guard i < b.count, b[i] == UInt8(ascii: "\"") || b[i] == UInt8(ascii: "'") else {
            throw error("\(what): expected a quoted string")
        }
        let quote = b[i]
        let start = i
        i += 1
        guard let end = b[i...].firstIndex(of: quote) else { throw error("\(what): quote never closed", at: start) }
        let text = String(decoding: b[i..<end], as: UTF8.self)
        i = end + 1
        return text
    }

    /// `<!-- … -->`; `--` may not occur inside.
    mutating func comment() throws(PlistError) {
        let start = i
        i += 4
        while i + 1 < b.count {
            if b[i] == UInt8(ascii: "-"), b[i + 1] == UInt8(ascii: "-") {
                guard i + 2 < b.count, b[i + 2] == UInt8(ascii: ">") else { throw error("'--' inside a comment") }
                i += 3
                return
            }
            i += 1
        }
        throw error("comment not closed with '-->'", at: start)
    }

    /// `<?target …?>`, but not a late XML declaration.
    mutating func processingInstruction() throws(PlistError) {
        let start = i
        i += 2
        let target = try xmlName("processing instruction")
        guard target.lowercased() != "xml" else { throw error("an XML declaration is only allowed at the very start of the file", at: start) }
        while i + 1 < b.count {
            if b[i] == UInt8(ascii: "?"), b[i + 1] == UInt8(ascii: ">") {
                i += 2
                return
            }
            i += 1
        }
        throw error("processing instruction not closed with '?>'", at: start)
    }

    // MARK: - Tags

    static func isNameStart(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == UInt8(ascii: "_") || c == UInt8(ascii: ":") || c >= 0x80
    }

    static func isNameChar(_ c: UInt8) -> Bool {
        isNameStart(c) || (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".")
    }

    mutating func xmlName(_ what: String) throws(PlistError) -> String {
        guard i < b.count, Self.isNameStart(b[i]) else {
            throw error("\(what): expected a name, found \(i < b.count ? "\"\(snippet(i))\"" : "the end of the file")")
        }
        let start = i
        while i < b.count, Self.isNameChar(b[i]) { i += 1 }
        return String(decoding: b[start..<i], as: UTF8.self)
    }

    struct Tag {
        var name: String
        var attributes: [(String, String)]
        var empty: Bool
    }

    /// A start tag or an empty-element tag, from its '<'.
    mutating func startTag() throws(PlistError) -> Tag {
        let start = i
        i += 1
        let name = try xmlName("tag")
        var attributes: [(String, String)] = []
        while true {
            let space = skipWhitespace()
            if at(">") {
                i += 1
                return Tag(name: name, attributes: attributes, empty: false)
            }
            if at("/>") {
                i += 2
                return Tag(name: name, attributes: attributes, empty: true)
            }
            guard i < b.count else { throw error("the <\(name)> tag is not closed before the end of the file", at: start) }
            guard space > 0 else { throw error("malformed <\(name)> tag: expected whitespace, '>' or '/>', found \"\(snippet(i))\"") }
            let attributeStart = i
            let (attributeName, value) = try attribute(in: "<\(name)>")
            guard !attributes.contains(where: { $0.0 == attributeName }) else {
                throw error("attribute \(attributeName) twice on <\(name)>", at: attributeStart)
            }
            attributes.append((attributeName, value))
        }
    }

    /// `name = "value"` or `name = 'value'`; the value may hold references but no '<'.
    mutating func attribute(in owner: String) throws(PlistError) -> (String, String) {
        let name = try xmlName("attribute of \(owner)")
        skipWhitespace()
        guard i < b.count, b[i] == UInt8(ascii: "=") else { throw error("attribute \(name) of \(owner) has no '='") }
        i += 1
        skipWhitespace()
        guard i < b.count, b[i] == UInt8(ascii: "\"") || b[i] == UInt8(ascii: "'") else {
            throw error("attribute \(name) of \(owner): the value is not quoted")
        }
        let quote = b[i]
        let start = i
        i += 1
        var value: [UInt8] = []
        while true {
            guard i < b.count else { throw error("attribute \(name) of \(owner): the quote is never closed", at: start) }
            let c = b[i]
            if c == quote {
                i += 1
                break
            }
            if c == UInt8(ascii: "<") { throw error("'<' inside the value of attribute \(name) of \(owner)") }
            if c == UInt8(ascii: "&") {
                try reference(into: &value)
            } else {
                value.append(c)
                i += 1
            }
        }
        return (name, String(decoding: value, as: UTF8.self))
    }

    /// An end tag `</name>` (whitespace allowed before '>'), from its '<'.
    mutating func endTag() throws(PlistError) -> String {
        let start = i
        i += 2
        let name = try xmlName("end tag")
        skipWhitespace()
        guard i < b.count, b[i] == UInt8(ascii: ">") else {
            throw error("malformed end tag </\(name): expected '>', found \(i < b.count ? "\"\(snippet(i))\"" : "the end of the file")", at: start)
        }
        i += 1
        return name
    }

    // MARK: - Text

    /// `&lt;` `&gt;` `&amp;` `&quot;` `&apos;` `&#N;` `&#xH;`, from the '&'. Nothing else is an
    /// entity here: there is no DTD to declare one.
    mutating func reference(into out: inout [UInt8]) throws(PlistError) {
        let start = i
        let window = b[(i + 1)..<min(b.count, i + 33)]
        guard let semicolon = window.firstIndex(of: UInt8(ascii: ";")) else {
            throw error("'&' that starts no reference (a literal ampersand is written &amp;)")
        }
        let name = String(decoding: b[(i + 1)..<semicolon], as: UTF8.self)
        i = semicolon + 1
        switch name {
        case "lt": out.append(UInt8(ascii: "<"))
        case "gt": out.append(UInt8(ascii: ">"))
        case "amp": out.append(UInt8(ascii: "&"))
        case "quot": out.append(UInt8(ascii: "\""))
        case "apos": out.append(UInt8(ascii: "'"))
        default:
            guard name.hasPrefix("#") else {
                throw error("unknown entity &\(name);: only &lt; &gt; &amp; &quot; &apos; and character references are read, no entity is expanded", at: start)
            }
            let hex = name.hasPrefix("#x")
            let digits = name.dropFirst(hex ? 2 : 1)
            guard !digits.isEmpty, digits.count <= 8, let value = UInt32(digits, radix: hex ? 16 : 10),
                digits.allSatisfy({ $0.isASCII && ($0.isNumber || (hex && $0.isHexDigit)) })
            else {
                throw error("malformed character reference &\(name);", at: start)
            }
            let isChar =
                value == 0x9 || value == 0xA || value == 0xD || (0x20...0xD7FF).contains(value)
                || (0xE000...0xFFFD).contains(value) || (0x1_0000...0x10_FFFF).contains(value)
            guard isChar, let scalar = Unicode.Scalar(value) else {
                throw error("character reference &\(name); is not an XML character", at: start)
            }
            out += Array(String(Character(scalar)).utf8)
        }
    }

    /// The text of a leaf element up to its end tag: characters, references and CDATA sections;
    /// no elements, comments or processing instructions.
    mutating func text(of element: String, openedAt start: Int) throws(PlistError) -> [UInt8] {
        var out: [UInt8] = []
        while true {
            // A run of plain characters at once.
            let run = i
            while i < b.count, b[i] != 0x3C, b[i] != 0x26, b[i] != 0x5D { i += 1 }  // < & ]
            if i > run { out.append(contentsOf: b[run..<i]) }
            guard i < b.count else { throw error("<\(element)> is never closed: unbalanced tags", at: start) }
            let c = b[i]
            if c == UInt8(ascii: "<") {
                if at("<![CDATA[") {
                    let cdataStart = i
                    i += 9
                    var closed = false
                    while i + 2 < b.count {
                        if b[i] == UInt8(ascii: "]"), b[i + 1] == UInt8(ascii: "]"), b[i + 2] == UInt8(ascii: ">") {
                            i += 3
                            closed = true
                            break
                        }
                        out.append(b[i])
                        i += 1
                    }
                    guard closed else { throw error("CDATA section not closed with ']]>'", at: cdataStart) }
                    continue
                }
                if at("</") {
                    let endStart = i
                    let name = try endTag()
                    guard name == element else {
                        throw error("</\(name)> closes <\(element)> (opened at \(position(start))): unbalanced tags", at: endStart)
                    }
                    return out
                }
                if at("<!--") { throw error("comment inside <\(element)>: it holds only text") }
                throw error("markup \"\(snippet(i))\" inside <\(element)>: it holds only text")
            }
            if c == UInt8(ascii: "&") {
                try reference(into: &out)
                continue
            }
            if c == UInt8(ascii: "]"), at("]]>") { throw error("']]>' in text outside a CDATA section") }
            out.append(c)
            i += 1
        }
    }

    // MARK: - Values

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
    mutating func content(rootStart: Int) throws(PlistError) -> Int {
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
    mutating func finishDictionary(_ frame: inout Frame) throws(PlistError) {
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
    func leaf(_ element: String, _ text: [UInt8], at start: Int) throws(PlistError) -> BinaryPlist.Object {
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

    /// `[+-]?` then decimal digits or `0x` and hex digits; in -2^63...2^64-1.
    static func integer(_ text: [UInt8]) -> Int128? {
        var k = 0
        var negative = false
        if k < text.count, text[k] == UInt8(ascii: "-") || text[k] == UInt8(ascii: "+") {
            negative = text[k] == UInt8(ascii: "-")
            k += 1
        }
        var radix: UInt64 = 10
        if k + 1 < text.count, text[k] == UInt8(ascii: "0"), text[k + 1] | 0x20 == UInt8(ascii: "x") {
            radix = 16
            k += 2
        }
        guard k < text.count else { return nil }
        var magnitude: UInt64 = 0
        for c in text[k...] {
            let digit: UInt64
            switch c {
            case 0x30...0x39: digit = UInt64(c - 0x30)
            case 0x61...0x66 where radix == 16: digit = UInt64(c - 0x61 + 10)
            case 0x41...0x46 where radix == 16: digit = UInt64(c - 0x41 + 10)
            default: return nil
            }
            let (shifted, o1) = magnitude.multipliedReportingOverflow(by: radix)
            let (sum, o2) = shifted.addingReportingOverflow(digit)
            guard !o1, !o2 else { return nil }
            magnitude = sum
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return -Int128(magnitude)
        }
        return Int128(magnitude)
    }

    /// `nan`, `[+-]inf`, `[+-]infinity` (any case), or `[+-]?(d+(.d*)?|.d+)([eE][+-]?d+)?`.
    static func real(_ text: String) -> Double? {
        switch text.lowercased() {
        case "nan": return .nan
        case "inf", "+inf", "infinity", "+infinity": return .infinity
        case "-inf", "-infinity": return -.infinity
        default: break
        }
        let u = Array(text.utf8)
        var k = 0
        func digits() -> Int {
            let start = k
            while k < u.count, u[k] >= 0x30, u[k] <= 0x39 { k += 1 }
            return k - start
        }
        if k < u.count, u[k] == UInt8(ascii: "+") || u[k] == UInt8(ascii: "-") { k += 1 }
        var mantissa = digits()
        if k < u.count, u[k] == UInt8(ascii: ".") {
            k += 1
            mantissa += digits()
        }
        guard mantissa > 0 else { return nil }
        if k < u.count, u[k] | 0x20 == UInt8(ascii: "e") {
            k += 1
            if k < u.count, u[k] == UInt8(ascii: "+") || u[k] == UInt8(ascii: "-") { k += 1 }
            guard digits() > 0 else { return nil }
        }
        guard k == u.count else { return nil }
        return Double(text)
    }

    /// `-?Y+-MM-DDTHH:MM:SSZ` (proleptic Gregorian, UTC, year 0 exists), as seconds since
    /// 2001-01-01.
    static func date(_ text: [UInt8]) -> Double? {
        var k = 0
        var negative = false
        if k < text.count, text[k] == UInt8(ascii: "-") {
            negative = true
            k += 1
        }
        let yearStart = k
        while k < text.count, text[k] >= 0x30, text[k] <= 0x39 { k += 1 }
        let yearDigits = k - yearStart
        guard (1...9).contains(yearDigits) else { return nil }
        let year = Int64(String(decoding: text[yearStart..<k], as: UTF8.self))! * (negative ? -1 : 1)
        let rest = Array(text[k...])
        guard rest.count == 16 else { return nil }
        func two(_ at: Int) -> Int64? {
            let a = rest[at], b = rest[at + 1]
            guard a >= 0x30, a <= 0x39, b >= 0x30, b <= 0x39 else { return nil }
            return Int64(a - 0x30) * 10 + Int64(b - 0x30)
        }
        let separators: [(Int, UInt8)] = [(0, 0x2D), (3, 0x2D), (6, 0x54), (9, 0x3A), (12, 0x3A), (15, 0x5A)]
        guard separators.allSatisfy({ rest[$0.0] == $0.1 }),
            let month = two(1), let day = two(4), let hour = two(7), let minute = two(10), let second = two(13),
            (1...12).contains(month), day >= 1, day <= PlistCalendar.daysInMonth(year, month),
            hour <= 23, minute <= 59, second <= 59
        else { return nil }
        let days = PlistCalendar.daysFromCivil(year, month, day) - PlistCalendar.referenceDay
        return Double(days * 86_400 + hour * 3_600 + minute * 60 + second)
    }

    /// Base64 with whitespace anywhere, padded to a multiple of four characters.
    static func base64(_ text: [UInt8]) -> Result<[UInt8], PlistError> {
        var sextets: [UInt8] = []
        sextets.reserveCapacity(text.count)
        var padding = 0
        for c in text {
            if isSpace(c) { continue }
            if c == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            let value: UInt8
            switch c {
            case 0x41...0x5A: value = c - 0x41
            case 0x61...0x7A: value = c - 0x61 + 26
            case 0x30...0x39: value = c - 0x30 + 52
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            default:
                return .failure(PlistError("character \"\(String(decoding: [c], as: UTF8.self).replacingControls())\" is not base64"))
            }
            guard padding == 0 else { return .failure(PlistError("characters after '=' padding")) }
            sextets.append(value)
        }
        guard padding <= 2, (sextets.count + padding) % 4 == 0 else {
            return .failure(PlistError("\(sextets.count) characters and \(padding) '=' are not whole groups of four"))
        }
        var out: [UInt8] = []
        out.reserveCapacity(sextets.count / 4 * 3 + 2)
        var k = 0
        while k + 4 <= sextets.count {
            let v = UInt32(sextets[k]) << 18 | UInt32(sextets[k + 1]) << 12 | UInt32(sextets[k + 2]) << 6 | UInt32(sextets[k + 3])
            out += [UInt8(v >> 16), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
            k += 4
        }
        let left = sextets.count - k
        if left == 2 {
            out.append(sextets[k] << 2 | sextets[k + 1] >> 4)
        } else if left == 3 {
            out.append(sextets[k] << 2 | sextets[k + 1] >> 4)
            out.append(sextets[k + 1] << 4 | sextets[k + 2] >> 2)
        }
        return .success(out)
    }
}

/// Proleptic Gregorian calendar arithmetic for plist dates (UTC; year 0 exists, as
/// Foundation's CFGregorianDate has it).
enum PlistCalendar {
    static let referenceDay = daysFromCivil(2001, 1, 1)

    static func isLeap(_ y: Int64) -> Bool { y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) }

    static func daysInMonth(_ y: Int64, _ m: Int64) -> Int64 {
        switch m {
        case 2: isLeap(y) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01.
    static func daysFromCivil(_ year: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((m + 9) % 12) + 2) / 5 + d - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date of a day since 1970-01-01.
    static func civil(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

func hexByte(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF".utf8)
    return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
}

extension String {
    /// Control characters shown as escapes, for messages.
    func replacingControls() -> String {
        var out = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
