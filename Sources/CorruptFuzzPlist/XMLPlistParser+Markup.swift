import CorruptFuzzCore

/// Tags, attributes, references and text of an XML property list.
extension XMLPlistParser {

    static func isNameStart(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == UInt8(ascii: "_") || c == UInt8(ascii: ":") || c >= 0x80
    }

    static func isNameChar(_ c: UInt8) -> Bool {
        isNameStart(c) || (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: "-") || c == UInt8(ascii: ".")
    }

    mutating func xmlName(_ what: String) throws(Violation) -> String {
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
    mutating func startTag() throws(Violation) -> Tag {
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
    mutating func attribute(in owner: String) throws(Violation) -> (String, String) {
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
    mutating func endTag() throws(Violation) -> String {
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
    mutating func reference(into out: inout [UInt8]) throws(Violation) {
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
    mutating func text(of element: String, openedAt start: Int) throws(Violation) -> [UInt8] {
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
}
