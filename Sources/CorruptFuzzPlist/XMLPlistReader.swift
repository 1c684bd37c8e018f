import CorruptFuzzCore
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
/// BOM, a public identifier of the characters XML allows there), a DOCTYPE naming `plist`, no
/// duplicate keys, no whitespace inside `<integer>`, `<real>` and `<date>`, dates with fields in
/// range, and base64 that is padded to a multiple of four characters. Like Foundation and unlike
/// a general XML parser, it keeps carriage returns in text as they are.
public enum XMLPlistReader {
    /// Reads `bytes`.
    /// - Throws: ``Violation`` whose message starts with the line and column of the first
    ///   problem and says what it is.
    public static func read(_ bytes: [UInt8]) throws(Violation) -> BinaryPlist {
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

    func error(_ message: String, at offset: Int? = nil) -> Violation {
        Violation(.corrupt, "xml \(position(offset ?? i)): \(message)")
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
    func checkCharacters() throws(Violation) {
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

    mutating func parse() throws(Violation) -> BinaryPlist {
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
    mutating func declaration() throws(Violation) {
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
    mutating func doctype() throws(Violation) {
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
            let identifierStart = i
            let identifier = try literal("DOCTYPE identifier")
            if isPublic {
                if let bad = identifier.utf8.firstIndex(where: { !Self.isPublicIDCharacter($0) }) {
                    let offset = identifierStart + 1 + identifier.utf8.distance(from: identifier.utf8.startIndex, to: bad)
                    throw error("DOCTYPE: '\(String(identifier[bad...].prefix(1)).replacingControls())' is not allowed in a public identifier", at: offset)
                }
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

    /// PubidChar ::= #x20 | #xD | #xA | [a-zA-Z0-9] | [-'()+,./:=?;!*#@$_%]
    static func isPublicIDCharacter(_ c: UInt8) -> Bool {
        (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || Array(" \r\n-'()+,./:=?;!*#@$_%".utf8).contains(c)
    }

    /// A quoted literal with no markup in it (DOCTYPE identifiers). XML allows `>` and `[` in a
    /// system identifier, but Core Foundation's reader skips a DOCTYPE by looking for the first
    /// `>` (or `[`, an internal subset) whatever the quotes, so PropertyListSerialization refuses
    /// such a file: it is not one the app can read.
    mutating func literal(_ what: String) throws(Violation) -> String {
        guard i < b.count, b[i] == UInt8(ascii: "\"") || b[i] == UInt8(ascii: "'") else {
            throw error("\(what): expected a quoted string")
        }
        let quote = b[i]
        let start = i
        i += 1
        guard let end = b[i...].firstIndex(of: quote) else { throw error("\(what): quote never closed", at: start) }
        if let markup = b[i..<end].firstIndex(where: { $0 == UInt8(ascii: ">") || $0 == UInt8(ascii: "[") }) {
            throw error("\(what): '\(Character(Unicode.Scalar(b[markup])))' inside the quotes (Foundation's reader ends the DOCTYPE there)", at: markup)
        }
        let text = String(decoding: b[i..<end], as: UTF8.self)
        i = end + 1
        return text
    }

    /// `<!-- … -->`; `--` may not occur inside.
    mutating func comment() throws(Violation) {
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
    mutating func processingInstruction() throws(Violation) {
        let start = i
        i += 2
        let target = try xmlName("processing instruction")
        guard target.lowercased() != "xml" else { throw error("an XML declaration is only allowed at the very start of the file", at: start) }
        // PI ::= '<?' PITarget (S (Char* - '?>'))? '?>': after the target, white space or the end.
        let next = i < b.count ? b[i] : 0
        let closes = next == UInt8(ascii: "?") && i + 1 < b.count && b[i + 1] == UInt8(ascii: ">")
        guard closes || next == 0x20 || next == 0x09 || next == 0x0A || next == 0x0D else {
            throw error("processing instruction \(target): no white space after its target", at: start)
        }
        while i + 1 < b.count {
            if b[i] == UInt8(ascii: "?"), b[i + 1] == UInt8(ascii: ">") {
                i += 2
                return
            }
            i += 1
        }
        throw error("processing instruction not closed with '?>'", at: start)
    }
}
