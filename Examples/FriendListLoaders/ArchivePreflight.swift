import Foundation

/// The friend-list app's check of an archive before NSKeyedUnarchiver reads it, written with
/// Foundation alone:
/// 1. bytes: a binary property list's header, trailer and offset table agree with the file,
///    and its strings are what their markers say; an XML one is UTF-8 text of XML characters
///    with nothing after `</plist>` (PropertyListSerialization reads all of these without a
///    word);
/// 2. the archive read as a plain property list with `PropertyListSerialization`, which reports
///    a malformed file as an error;
/// 3. what NSKeyedArchiver always writes and NSKeyedUnarchiver takes for granted: `$archiver`,
///    `$version`, `$top`, `$objects`, every UID in range, class descriptions, archived objects'
///    fields, only the document's classes;
/// 4. the friend list's shape, each object of the class its place asks for (with secure coding,
///    Foundation on Linux traps on any other).
enum ArchivePreflight {
    struct Problem: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    /// The archiver version NSKeyedArchiver writes.
    static let archiverVersion = 100_000

    /// Checks `data`; the friends are checked in documents of `readsVersions` (a newer one is
    /// left to the loader's version switch).
    static func check(_ data: Data, allowedClassNames: Set<String>, readsVersions: ClosedRange<Int> = 1...FriendList.currentVersion) throws(Problem) {
        let bytes = [UInt8](data)
        if bytes.starts(with: Array("bplist".utf8)) {
            try checkBinaryLayout(bytes)
        } else if bytes.starts(with: [0xEF, 0xBB, 0xBF]) || bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            throw Problem("header: a byte-order mark; the app writes UTF-8 XML without one")
        } else if bytes.first(where: { !isSpace($0) }) == UInt8(ascii: "<") {
            try checkXMLText(bytes)
        } else {
            throw Problem("header: neither a binary property list (bplist00) nor an XML one")
        }
        var format = PropertyListSerialization.PropertyListFormat.binary
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: data, options: [], format: &format)
        } catch {
            throw Problem("not a property list: \(error.localizedDescription)")
        }
        guard format == .binary || format == .xml else { throw Problem("not a binary or XML property list") }
        if format == .xml { try checkXMLMarkup(bytes) }
        let archive = try Archive(plist)
        try archive.checkEverything(allowedClassNames: allowedClassNames)
        try archive.checkObjects()
        try archive.checkFriendList(readsVersions: readsVersions)
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
}

// MARK: - Bytes

extension ArchivePreflight {
    /// The 8-byte header and the 32-byte trailer of a binary property list against the file's
    /// size: the offset table fills the space between the objects and the trailer, every
    /// object's offset points into the object area, and every string object holds what its
    /// marker says.
    static func checkBinaryLayout(_ bytes: [UInt8]) throws(Problem) {
        guard bytes.count >= 8 + 32 else { throw Problem("file: \(bytes.count) bytes is shorter than a header and a trailer") }
        guard bytes.starts(with: Array("bplist00".utf8)) else { throw Problem("header: not bplist00") }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        let referenceSize = Int(bytes[trailer + 7])
        let objectCount = number(bytes, at: trailer + 8, width: 8)
        let topObject = number(bytes, at: trailer + 16, width: 8)
        let tableStart = number(bytes, at: trailer + 24, width: 8)
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw Problem("trailer: offset size \(offsetSize) or reference size \(referenceSize) is not 1...8")
        }
        guard objectCount >= 1, topObject < objectCount else { throw Problem("trailer: top object \(topObject) of \(objectCount) objects") }
        guard tableStart >= 8, tableStart < UInt64(trailer) else { throw Problem("trailer: the offset table starts at \(tableStart), outside the file") }
        let (tableSize, overflow) = objectCount.multipliedReportingOverflow(by: UInt64(offsetSize))
        guard !overflow, tableSize == UInt64(trailer) - tableStart else {
            throw Problem("trailer: \(objectCount) offsets of \(offsetSize) bytes do not fill \(tableStart)..<\(trailer)")
        }
        if referenceSize < 8, objectCount >= UInt64(1) << UInt64(referenceSize * 8) {
            throw Problem("trailer: \(referenceSize)-byte references cannot name \(objectCount) objects")
        }
        let objectsEnd = Int(tableStart)
        var offsets: [Int] = []
        offsets.reserveCapacity(Int(objectCount))
        for index in 0..<Int(objectCount) {
            let offset = number(bytes, at: objectsEnd + index * offsetSize, width: offsetSize)
            guard offset >= 8, offset < tableStart else { throw Problem("offsets[\(index)]: \(offset) is outside the object area 8..<\(tableStart)") }
            if let problem = markerProblem(bytes[Int(offset)]) { throw Problem("objects[\(index)]: \(problem)") }
            if let problem = stringProblem(bytes, at: Int(offset), before: objectsEnd) { throw Problem("objects[\(index)]: \(problem)") }
            if bytes[Int(offset)] >> 4 == 0x4 {
                // Data: Foundation skips an object no other names, whatever its length says.
                guard let (count, start) = objectLength(bytes, at: Int(offset), before: objectsEnd) else {
                    throw Problem("objects[\(index)]: a length that is not an integer")
                }
                guard count <= UInt64(objectsEnd - start) else { throw Problem("objects[\(index)]: data runs past the objects") }
            }
            offsets.append(Int(offset))
        }
        for (index, offset) in offsets.enumerated() {
            try checkContainer(bytes, objects: offsets, at: offset, before: objectsEnd, referenceSize: referenceSize, named: "objects[\(index)]")
        }
    }

    /// The references of the array or dictionary at `offset`, if it is one: each names an
    /// object of the file, and a dictionary's keys are distinct strings. PropertyListSerialization
    /// reads a reference past the last object and a key written twice without a word (keeping
    /// one of the two values); both were found by a 3-minute `--worker` campaign.
    static func checkContainer(_ bytes: [UInt8], objects: [Int], at offset: Int, before end: Int, referenceSize: Int, named here: String) throws(Problem) {
        let kind = bytes[offset] >> 4
        guard kind == 0xA || kind == 0xD else { return }
        guard let (count, start) = objectLength(bytes, at: offset, before: end) else { throw Problem("\(here): a count that is not an integer") }
        let references = kind == 0xD ? count &* 2 : count
        guard count <= UInt64(end), references &* UInt64(referenceSize) <= UInt64(end - start) else {
            throw Problem("\(here): \(count) entries run past the objects")
        }
        var keys = Set<String>()
        for entry in 0..<Int(references) {
            let reference = number(bytes, at: start + entry * referenceSize, width: referenceSize)
            guard reference < UInt64(objects.count) else {
                throw Problem("\(here): reference \(reference) is not below the \(objects.count) objects")
            }
            guard kind == 0xD, entry < Int(count) else { continue }
            guard let key = string(bytes, at: objects[Int(reference)], before: end) else { throw Problem("\(here): a key is not a string") }
            guard keys.insert(key).inserted else { throw Problem("\(here): the key \"\(key.prefix(40))\" is there twice") }
        }
    }

    /// The count in an object's marker and where its content starts: the low four bits, or
    /// after them an integer object of 1, 2, 4 or 8 bytes.
    static func objectLength(_ bytes: [UInt8], at offset: Int, before end: Int) -> (count: UInt64, start: Int)? {
        let count = UInt64(bytes[offset] & 0x0F)
        let start = offset + 1
        guard count == 0x0F else { return (count, start) }
        guard start < end, bytes[start] >> 4 == 0x1, bytes[start] & 0x0F <= 3 else { return nil }
        let width = 1 << Int(bytes[start] & 0x0F)
        guard width < end - start else { return nil }
        return (number(bytes, at: start + 1, width: width), start + 1 + width)
    }

    /// The string object at `offset` (ASCII or UTF-16, already checked by ``stringProblem``),
    /// or nil when the object is not a string.
    static func string(_ bytes: [UInt8], at offset: Int, before end: Int) -> String? {
        let kind = bytes[offset] >> 4
        guard kind == 0x5 || kind == 0x6, let (count, start) = objectLength(bytes, at: offset, before: end) else { return nil }
        let size = Int(kind == 0x5 ? count : count &* 2)
        guard size <= end - start else { return nil }
        if kind == 0x5 { return String(decoding: bytes[start..<(start + size)], as: UTF8.self) }
        let units = stride(from: start, to: start + size, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
        return String(decoding: units, as: UTF16.self)
    }

    /// What is wrong with an object's marker byte, if anything: only the object types a keyed
    /// archive holds. Foundation on Linux reads a set (0xC_) and then crashes bridging it
    /// (SIGSEGV in the runtime's AnyHashable cast), and it reads markers no type has without
    /// a word; both were found by a 10-minute `--worker` campaign.
    static func markerProblem(_ marker: UInt8) -> String? {
        switch marker >> 4 {
        case 0x0: return [0x00, 0x08, 0x09, 0x0F].contains(marker) ? nil : "unknown marker \(marker)"  // null, false, true, fill
        case 0x1: return marker & 0x0F <= 3 ? nil : "an integer of \(1 << Int(marker & 0x0F)) bytes"
        case 0x2: return (2...3).contains(marker & 0x0F) ? nil : "a real of \(1 << Int(marker & 0x0F)) bytes"
        case 0x3: return marker == 0x33 ? nil : "unknown marker \(marker)"
        case 0x4, 0x5, 0x6, 0x8, 0xA, 0xD: return nil
        case 0xC: return "a set, which no keyed archive holds"
        default: return "unknown marker \(marker)"
        }
    }

    /// The rest of an XML declaration after `<?xml`: `version`, then optionally `encoding` and
    /// `standalone`, each `name = "value"` (or single quotes) after white space, then `?>`.
    /// Returns what follows it.
    static func xmlDeclaration(_ text: Substring) throws(Problem) -> Substring {
        var rest = text
        var names: [Substring] = []
        while true {
            let spaced = rest.utf8.first.map(isSpace) ?? false
            rest = rest.drop { $0.isWhitespace }
            if rest.hasPrefix("?>") { break }
            let name = rest.prefix { $0.isLetter }
            guard spaced, !name.isEmpty else { throw Problem("xml: the XML declaration is malformed") }
            rest = rest.dropFirst(name.count).drop { $0.isWhitespace }
            guard rest.first == "=" else { throw Problem("xml: \(name) in the XML declaration has no '='") }
            rest = rest.dropFirst().drop { $0.isWhitespace }
            guard let quote = rest.first, quote == "\"" || quote == "'", let close = rest.dropFirst().firstIndex(of: quote) else {
                throw Problem("xml: \(name) in the XML declaration is not quoted")
            }
            let value = rest[rest.index(after: rest.startIndex)..<close]
            rest = rest[rest.index(after: close)...]
            switch name {
            case "version" where names.isEmpty && value.hasPrefix("1.") && value.dropFirst(2).allSatisfy(\.isNumber) && value.count > 2:
                break
            case "encoding" where names == ["version"] && !value.isEmpty && value.allSatisfy({ $0.isLetter || $0.isNumber || "._-".contains($0) }):
                break
            case "standalone" where names.first == "version" && !names.contains("standalone") && (value == "yes" || value == "no"):
                break
            default:
                throw Problem("xml: \(name)=\"\(value.prefix(20))\" does not belong in the XML declaration there")
            }
            names.append(name)
        }
        guard names.first == "version" else { throw Problem("xml: the XML declaration has no version") }
        return rest.dropFirst(2)
    }

    /// Whether `c` may be part of an XML name (ASCII letters, digits, `.-_:`, and anything
    /// beyond ASCII, as XML 1.0's fifth edition allows).
    static func isNameCharacter(_ c: Character) -> Bool {
        c.isLetter || c.isNumber || ".-_:".contains(c) || !c.isASCII
    }

    /// The rest of the `<plist` start tag: no attribute, or `version="1.0"` (NSKeyedArchiver
    /// writes it). PropertyListSerialization reads any attributes, `version="1.7"` and even
    /// `<plist ve>` without a value, and ignores them: long campaigns found each.
    static func plistTag(_ text: Substring) throws(Problem) {
        guard let close = text.firstIndex(of: ">") else { throw Problem("xml: <plist> is not closed") }
        var rest = text[..<close].drop { $0.isWhitespace }
        if rest.isEmpty { return }
        guard rest.hasPrefix("version") else { throw Problem("xml: <plist> has an attribute other than version") }
        rest = rest.dropFirst(7).drop { $0.isWhitespace }
        guard rest.first == "=" else { throw Problem("xml: <plist>'s version has no '='") }
        rest = rest.dropFirst().drop { $0.isWhitespace }
        guard rest.hasPrefix("\"1.0\"") || rest.hasPrefix("'1.0'") else { throw Problem("xml: <plist>'s version is not \"1.0\"") }
        guard rest.dropFirst(5).allSatisfy(\.isWhitespace) else { throw Problem("xml: <plist> has more than a version") }
    }

    /// A processing instruction between `<?` and `?>`: a target that is an XML name other than
    /// `xml`, then nothing or white space and text (Foundation reads `<?"1. "1.0?>`).
    static func processingInstruction(_ body: Substring) throws(Problem) {
        let target = body.prefix(while: isNameCharacter)
        guard let first = target.first, first.isLetter || first == "_" || first == ":" || !first.isASCII else {
            throw Problem("xml: a processing instruction without a target name")
        }
        guard target.lowercased() != "xml" else { throw Problem("xml: an XML declaration that is not the first thing in the file") }
        let rest = body.dropFirst(target.count)
        guard rest.isEmpty || rest.first.map(\.isWhitespace) == true else { throw Problem("xml: the processing instruction \(target) is malformed") }
    }

    /// The rest of a DOCTYPE after `<!DOCTYPE`: white space, a name, optionally `SYSTEM "id"` or
    /// `PUBLIC "id" "id"`, optionally an internal subset in brackets, then `>`. Returns what
    /// follows it.
    static func doctype(_ text: Substring) throws(Problem) -> Substring {
        func quoted(_ rest: inout Substring) throws(Problem) {
            rest = rest.drop { $0.isWhitespace }
            guard let quote = rest.first, quote == "\"" || quote == "'", let close = rest.dropFirst().firstIndex(of: quote) else {
                throw Problem("xml: the DOCTYPE's identifier is not quoted")
            }
            rest = rest[rest.index(after: close)...]
        }
        guard let first = text.first, first.isWhitespace else { throw Problem("xml: the DOCTYPE is malformed") }
        var rest = text.drop { $0.isWhitespace }
        let name = rest.prefix { !$0.isWhitespace && $0 != ">" && $0 != "[" }
        guard !name.isEmpty else { throw Problem("xml: the DOCTYPE names no root element") }
        guard name == "plist" else { throw Problem("xml: the DOCTYPE names \(name.prefix(20)), not plist") }
        rest = rest.dropFirst(name.count).drop { $0.isWhitespace }
        if rest.hasPrefix("SYSTEM") {
            rest = rest.dropFirst(6)
            try quoted(&rest)
        } else if rest.hasPrefix("PUBLIC") {
            rest = rest.dropFirst(6)
            try quoted(&rest)
            try quoted(&rest)
        }
        rest = rest.drop { $0.isWhitespace }
        if rest.first == "[" {
            guard let close = rest.firstIndex(of: "]") else { throw Problem("xml: the DOCTYPE's internal subset is not closed") }
            rest = rest[rest.index(after: close)...].drop { $0.isWhitespace }
        }
        guard rest.first == ">" else { throw Problem("xml: the DOCTYPE is malformed") }
        return rest.dropFirst()
    }

    /// A big-endian unsigned number of `width` bytes.
    static func number(_ bytes: [UInt8], at offset: Int, width: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in offset..<(offset + width) { value = value << 8 | UInt64(bytes[i]) }
        return value
    }

    /// What is wrong with the string object at `offset`, if it is one: PropertyListSerialization
    /// reads an "ASCII" string with other bytes, and UTF-16 with a lone surrogate, without a word.
    static func stringProblem(_ bytes: [UInt8], at offset: Int, before end: Int) -> String? {
        let kind = bytes[offset] >> 4
        guard kind == 0x5 || kind == 0x6 else { return nil }
        var count = UInt64(bytes[offset] & 0x0F)
        var start = offset + 1
        if count == 0x0F {
            // The length follows as an integer object of 1, 2, 4 or 8 bytes.
            guard start < end, bytes[start] >> 4 == 0x1, bytes[start] & 0x0F <= 3 else { return "a string's length is not an integer" }
            let width = 1 << Int(bytes[start] & 0x0F)
            guard width < end - start else { return "a string's length runs past the objects" }
            count = number(bytes, at: start + 1, width: width)
            start += 1 + width
        }
        let size = kind == 0x5 ? count : count &* 2
        guard count <= UInt64(end), size <= UInt64(end - start) else { return "a string runs past the objects" }
        return bytes.withUnsafeBufferPointer { buffer -> String? in
            let body = UnsafeBufferPointer(rebasing: buffer[start..<(start + Int(size))])
            if kind == 0x5 {
                for byte in body where byte >= 0x80 { return "an ASCII string with a byte above 0x7F" }
                return nil
            }
            // UTF-16, big-endian: a high surrogate (D800-DBFF) comes before a low one (DC00-DFFF).
            var expectLow = false
            var i = 0
            while i < body.count {
                let high = body[i]
                let isLow = high >= 0xDC && high <= 0xDF
                guard isLow == expectLow else { return "a UTF-16 string with a lone surrogate" }
                expectLow = high >= 0xD8 && high <= 0xDB
                i += 2
            }
            return expectLow ? "a UTF-16 string with a lone surrogate" : nil
        }
    }

    /// An XML property list is UTF-8 text of XML characters (no control characters but tab,
    /// line feed and carriage return, no U+FFFE or U+FFFF) whose root element is `<plist>`
    /// (PropertyListSerialization also reads a bare `<dict>`), and nothing but white space,
    /// comments and processing instructions follows `</plist>`.
    static func checkXMLText(_ bytes: [UInt8]) throws(Problem) {
        guard String(validating: bytes, as: UTF8.self) != nil else { throw Problem("xml: not UTF-8") }
        let bad: Int? = bytes.withUnsafeBufferPointer { buffer in
            var i = 0
            while i < buffer.count {
                let byte = buffer[i]
                if byte < 0x20, !isSpace(byte) { return i }
                if byte == 0xEF, i + 2 < buffer.count, buffer[i + 1] == 0xBF, buffer[i + 2] >= 0xBE { return i }
                i += 1
            }
            return nil
        }
        if let bad { throw Problem("xml: byte \(bad) is not an XML character") }
        let text = String(decoding: bytes, as: UTF8.self)
        // The prolog: white space, the declaration, comments, processing instructions, DOCTYPE,
        // each checked against XML's grammar (PropertyListSerialization reads a declaration or a
        // DOCTYPE that is not).
        var head = text[...]
        if head.hasPrefix("<?xml"), let next = head.dropFirst(5).utf8.first, isSpace(next) || next == UInt8(ascii: "?") {
            head = try xmlDeclaration(head.dropFirst(5))
        }
        var sawDoctype = false
        while let first = head.utf8.first {
            if isSpace(first) {
                head = head.dropFirst()
            } else if head.hasPrefix("<?"), let close = head.dropFirst(2).range(of: "?>") {
                // (Searched after `<?`: in `<?>` the `?` is the opening's.)
                try processingInstruction(head.dropFirst(2)[..<close.lowerBound])
                head = head[close.upperBound...]
            } else if head.hasPrefix("<!--"), let close = head.range(of: "-->") {
                head = head[close.upperBound...]
            } else if head.hasPrefix("<!DOCTYPE") {
                // XML allows one DOCTYPE; Foundation reads a second, malformed one before it.
                guard !sawDoctype else { throw Problem("xml: a second DOCTYPE") }
                sawDoctype = true
                head = try doctype(head.dropFirst(9))
            } else {
                break
            }
        }
        guard head.hasPrefix("<plist"), let after = head.dropFirst(6).first, after == ">" || after == " " || after.isNewline || after == "\t"
        else { throw Problem("xml: the root element is not <plist>") }
        try plistTag(head.dropFirst(6))
        // What follows the root is checked with the markup, once Foundation has read the file
        // (``checkXMLMarkup(_:)``, ``checkAfterRoot(_:)``).
        guard text.contains("</plist>") else { throw Problem("xml: no </plist>") }
    }

    /// What follows the first `</plist>` (Foundation stops reading there): only white space,
    /// comments and processing instructions.
    static func checkAfterRoot(_ text: Substring) throws(Problem) {
        var tail = text
        while let first = tail.utf8.first {
            if isSpace(first) {
                tail = tail.dropFirst()
            } else if tail.hasPrefix("<!--"), let close = tail.range(of: "-->") {
                tail = tail[close.upperBound...]
            } else if tail.hasPrefix("<?"), let close = tail.dropFirst(2).range(of: "?>") {
                try processingInstruction(tail.dropFirst(2)[..<close.lowerBound])
                tail = tail[close.upperBound...]
            } else {
                throw Problem("xml: content after the first </plist>")
            }
        }
    }
}

// MARK: - Tags and keys of XML dictionaries

extension UInt8 {
    fileprivate var isASCIILetter: Bool { (self | 0x20) >= UInt8(ascii: "a") && (self | 0x20) <= UInt8(ascii: "z") }
}

extension ArchivePreflight {
    /// Markup whose content is skipped, opening and closing (`<!` last: it begins the others).
    static let skippedMarkup: [(opening: String, closing: String)] = [("<!--", "-->"), ("<![CDATA[", "]]>"), ("<?", "?>"), ("<!", ">")]

    /// Each `<dict>` of an XML property list names each key once: PropertyListSerialization
    /// keeps one value of a key written twice without a word (long campaigns found it on
    /// `CF$UID`, `NS.time`, `name`, `$classname`); and no start tag but `<plist>` has anything
    /// but white space after its name (Foundation reads `<string\t<string>`); nothing but white
    /// space, comments and processing instructions follows the first `</plist>` (Foundation
    /// stops there and ignores a second document half after it); no `<integer>` or `<real>`
    /// holds white space (Foundation reads `<real>\t1.5</real>`). Runs on a
    /// document Foundation has read; a key's text is compared with its entities and CDATA
    /// sections resolved, as Foundation reads it.
    static func checkXMLMarkup(_ bytes: [UInt8]) throws(Problem) {
        // One entry per open <dict> or <array>: the keys seen, or nil for an array.
        var open: [Set<String>?] = []
        var i = 0
        func starts(_ text: String, at index: Int) -> Bool {
            let utf8 = text.utf8
            return index + utf8.count <= bytes.count && bytes[index..<(index + utf8.count)].elementsEqual(utf8)
        }
        func skip(past end: String, from index: Int) -> Int {
            var j = index
            while j < bytes.count, !starts(end, at: j) { j += 1 }
            return min(bytes.count, j + end.utf8.count)
        }
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "<") else {
                i += 1
                continue
            }
            // Comments, CDATA sections, processing instructions and declarations hold no tags.
            if let (opening, closing) = Self.skippedMarkup.first(where: { starts($0.opening, at: i) }) {
                i = skip(past: closing, from: i + opening.utf8.count)
                continue
            }
            if starts("</plist", at: i) {
                let after = skip(past: ">", from: i)
                try checkAfterRoot(String(decoding: bytes[after...], as: UTF8.self)[...])
                return
            }
            if starts("</", at: i) {
                if starts("</dict", at: i) || starts("</array", at: i), !open.isEmpty { open.removeLast() }
                i = skip(past: ">", from: i)
                continue
            }
            // A start tag: a name, then nothing but white space before `>` or `/>` (Foundation
            // reads `<string\t<string>` as a string); <plist>'s version was checked before.
            var nameEnd = i + 1
            while nameEnd < bytes.count, bytes[nameEnd].isASCIILetter { nameEnd += 1 }
            let name = String(decoding: bytes[(i + 1)..<nameEnd], as: UTF8.self)
            var tagEnd = nameEnd
            while tagEnd < bytes.count, isSpace(bytes[tagEnd]) { tagEnd += 1 }
            let selfClosing = starts("/>", at: tagEnd)
            if name != "plist", !selfClosing, !starts(">", at: tagEnd) {
                throw Problem("xml: <\(name.prefix(20))> has something other than white space before its '>'")
            }
            if name == "key" {
                let start = selfClosing ? i : tagEnd + 1
                var end = start
                if !selfClosing {
                    // Up to </key>, stepping over CDATA sections (a `</key>` inside one is text).
                    while end < bytes.count, !starts("</key>", at: end) {
                        end = starts("<![CDATA[", at: end) ? skip(past: "]]>", from: end + 9) : end + 1
                    }
                }
                let key = selfClosing ? "" : keyText(bytes[start..<min(end, bytes.count)])
                i = selfClosing ? skip(past: ">", from: i) : min(bytes.count, end + 6)
                if let last = open.indices.last, open[last]?.insert(key).inserted == false {
                    throw Problem("xml: the key \"\(key.prefix(40))\" is in a <dict> twice")
                }
            } else {
                // <dict/> and <array/> open nothing.
                if !selfClosing, name == "dict" || name == "array" { open.append(name == "dict" ? Set<String>() : nil) }
                i = skip(past: ">", from: i)
                // A number is its digits alone: Foundation reads "\t1.5" and " 7" as numbers.
                if !selfClosing, name == "integer" || name == "real" {
                    var j = i
                    while j < bytes.count, bytes[j] != UInt8(ascii: "<") {
                        if isSpace(bytes[j]) { throw Problem("xml: white space inside <\(name)>") }
                        j += 1
                    }
                }
            }
        }
    }

    /// A key's text as Foundation reads it: CDATA sections as they are, the five named entities
    /// and character references resolved.
    static func keyText(_ raw: ArraySlice<UInt8>) -> String {
        let text = String(decoding: raw, as: UTF8.self)
        guard text.contains("&") || text.contains("<![CDATA[") else { return text }
        var out = ""
        var rest = text[...]
        while let first = rest.first {
            if rest.hasPrefix("<![CDATA["), let close = rest.range(of: "]]>") {
                out += rest[rest.index(rest.startIndex, offsetBy: 9)..<close.lowerBound]
                rest = rest[close.upperBound...]
            } else if first == "&", let semicolon = rest.firstIndex(of: ";") {
                let entity = rest[rest.index(after: rest.startIndex)..<semicolon]
                let named = ["lt": "<", "gt": ">", "amp": "&", "apos": "'", "quot": "\""]
                if let value = named[String(entity)] {
                    out += value
                } else if entity.hasPrefix("#x") || entity.hasPrefix("#X"), let code = UInt32(entity.dropFirst(2), radix: 16), let scalar = Unicode.Scalar(code)
                {
                    out.unicodeScalars.append(scalar)
                } else if entity.hasPrefix("#"), let code = UInt32(entity.dropFirst()), let scalar = Unicode.Scalar(code) {
                    out.unicodeScalars.append(scalar)
                } else {
                    out += rest[...semicolon]
                }
                rest = rest[rest.index(after: semicolon)...]
            } else {
                out.append(first)
                rest = rest.dropFirst()
            }
        }
        return out
    }
}

// MARK: - The archive as PropertyListSerialization reads it

extension ArchivePreflight {
    /// One value of the deserialized property list.
    enum Value {
        case uid(UInt32)
        case string(String)
        case integer(NSNumber)
        case real(Double)
        case bool(Bool)
        case data
        case date
        case array([Any])
        case dictionary([String: Any])
        /// A dictionary with a key that is not a string.
        case badDictionary
        case other

        var string: String? { if case .string(let s) = self { s } else { nil } }
        var fields: [String: Any]? { if case .dictionary(let d) = self { d } else { nil } }
    }

    /// The archive's top dictionary, `$objects` and `$top`, checked as NSKeyedArchiver writes
    /// them, and the reading of its values.
    final class Archive {
        let plist: Any
        var objects: [Any] = []
        var top: [String: Any] = [:]
        /// The numbers of the UID objects read so far (PropertyListSerialization gives one
        /// object for all references to the same UID, so a list of 200,000 is read once).
        private var uidNumbers: [ObjectIdentifier: UInt32] = [:]

        init(_ plist: Any) throws(Problem) {
            self.plist = plist
            let topLevel = value(plist)
            if case .badDictionary = topLevel { throw Problem("top: a key is not a string") }
            guard let fields = topLevel.fields else { throw Problem("top: not a dictionary") }
            guard let archiver = fields["$archiver"] else { throw Problem("$archiver: missing") }
            guard value(archiver).string == "NSKeyedArchiver" else { throw Problem("$archiver: not NSKeyedArchiver") }
            guard let version = fields["$version"] else { throw Problem("$version: missing") }
            guard case .integer(let number) = value(version), number == NSNumber(value: archiverVersion) else {
                throw Problem("$version: not the integer \(archiverVersion)")
            }
            guard let list = fields["$objects"], case .array(let objects) = value(list) else { throw Problem("$objects: missing or not an array") }
            guard let first = objects.first, value(first).string == "$null" else { throw Problem("$objects[0]: not $null") }
            guard let topField = fields["$top"], case .dictionary(let top) = value(topField) else {
                throw Problem("$top: missing or not a dictionary with string keys")
            }
            for (key, field) in top {
                guard case .uid(let uid) = value(field), uid < objects.count else { throw Problem("$top.\(key): not a UID below \(objects.count)") }
            }
            self.objects = objects
            self.top = top
        }

        /// What a value of the property list is.
        func value(_ value: Any) -> Value {
            if let uid = uid(value) { return .uid(uid) }
            switch value {
            case let string as String: return .string(string)
            case let dictionary as [AnyHashable: Any]:
                var fields: [String: Any] = [:]
                for (key, field) in dictionary {
                    guard let name = key.base as? String else { return .badDictionary }
                    fields[name] = field
                }
                return .dictionary(fields)
            case let array as [Any]: return .array(array)
            case is Data: return .data
            case is Date: return .date
            default:
                // Booleans come back as Bool and numbers as NSNumber on Linux (on Darwin,
                // booleans are NSNumbers of type "c"); an NSNumber casts to Bool, so ask its
                // type first.
                if type(of: value) == Bool.self, let bool = value as? Bool { return .bool(bool) }
                guard let number = value as? NSNumber else { return .other }
                switch String(cString: number.objCType) {
                case "d", "f": return .real(number.doubleValue)
                case "c", "B": return .bool(number.boolValue)
                default: return .integer(number)
                }
            }
        }

        /// Foundation on Linux gives UIDs as instances of its internal class
        /// `_NSKeyedArchiverUID`, whose number is a stored property `value` that only reflection
        /// reads.
        static let uidClass: AnyClass? = NSClassFromString("Foundation._NSKeyedArchiverUID")

        /// The number of a UID (a CFKeyedArchiverUID), or nil when `value` is not one.
        func uid(_ value: Any) -> UInt32? {
            #if canImport(Darwin)
                // On Darwin, a CFKeyedArchiverUID, whose description ends in `{value = N}`.
                let description = String(describing: value)
                guard description.hasPrefix("<CFKeyedArchiverUID"), let start = description.range(of: "{value = ") else { return nil }
                return UInt32(description[start.upperBound...].prefix { $0.isNumber })
            #else
                guard let uidClass = Self.uidClass, type(of: value) == uidClass else { return nil }
                let id = ObjectIdentifier(value as AnyObject)
                if let number = uidNumbers[id] { return number }
                guard let number = Mirror(reflecting: value).children.first(where: { $0.label == "value" })?.value as? UInt32 else { return nil }
                uidNumbers[id] = number
                return number
            #endif
        }

        /// The object a UID names; nil for `$null` (UID 0), anything but a UID, or a UID out
        /// of range.
        func object(_ reference: Any?) -> Value? {
            guard let reference, case .uid(let uid) = value(reference), uid > 0, uid < objects.count else { return nil }
            return value(objects[Int(uid)])
        }

        /// The `$classname` of an archived object's class description.
        func className(_ fields: [String: Any]) -> String? {
            guard let description = object(fields["$class"])?.fields, let name = description["$classname"] else { return nil }
            return value(name).string
        }

        /// Everywhere the unarchiver reads: every UID in range, every dictionary keyed by
        /// strings, every class name allowed. A loop with a stack: nesting costs no recursion.
        func checkEverything(allowedClassNames: Set<String>) throws(Problem) {
            // What NSKeyedUnarchiver reads: `$objects` and `$top`. A top-level key it does not
            // know is never read, whatever it holds (checking it too refused a readable file: a
            // false rejection a 4-minute campaign found).
            var stack: [Any] = objects + Array(top.values)
            while let next = stack.popLast() {
                switch value(next) {
                case .uid(let uid):
                    guard uid < objects.count else { throw Problem("UID \(uid) is not below \(objects.count) objects") }
                case .badDictionary: throw Problem("a dictionary key is not a string")
                case .dictionary(let fields):
                    if let name = fields["$classname"].flatMap({ value($0).string }), !allowedClassNames.contains(name) {
                        throw Problem("class \(name) does not belong in a friend list")
                    }
                    stack += fields.values
                case .array(let elements): stack += elements
                default: continue
                }
            }
        }

        /// What Foundation assumes of every entry of `$objects` without checking: no UID where
        /// an object belongs, every `$class` a class description, a class description with
        /// `$classname` and `$classes`, an archived object's fields UIDs, numbers, booleans,
        /// data or arrays of UIDs, an array's elements never `$null`, an `NSDate`'s time a
        /// finite real.
        func checkObjects() throws(Problem) {
            for (index, entry) in objects.enumerated() {
                let here = "$objects[\(index)]"
                switch value(entry) {
                case .uid: throw Problem("\(here): a UID where an object belongs")
                case .dictionary(let fields):
                    if fields["$class"] != nil {
                        try checkArchivedObject(fields, here)
                    } else if let name = fields["$classname"] {
                        guard value(name).string != nil else { throw Problem("\(here).$classname: not a string") }
                        guard let classes = fields["$classes"], case .array(let list) = value(classes), list.allSatisfy({ value($0).string != nil }) else {
                            throw Problem("\(here).$classes: missing or not an array of strings")
                        }
                    }
                default: continue
                }
            }
        }

        func checkArchivedObject(_ fields: [String: Any], _ here: String) throws(Problem) {
            guard let classField = fields["$class"], case .uid(let uid) = value(classField), uid < objects.count,
                let description = value(objects[Int(uid)]).fields, let nameField = description["$classname"], let name = value(nameField).string
            else {
                throw Problem("\(here).$class: not a class description")
            }
            for (key, field) in fields where key != "$class" {
                switch value(field) {
                case .uid, .integer, .real, .bool, .data: continue
                case .array(let elements):
                    for element in elements {
                        guard case .uid(let uid) = value(element) else { throw Problem("\(here).\(key): an array of something else than UIDs") }
                        // A collection cannot hold nil: Foundation would drop the element without an error.
                        if uid == 0, ["NSArray", "NSMutableArray"].contains(name) { throw Problem("\(here).\(key): an element is $null") }
                    }
                default: throw Problem("\(here).\(key): a value NSKeyedArchiver never writes inline")
                }
            }
            switch name {
            case "NSArray", "NSMutableArray":
                guard let list = fields["NS.objects"], case .array = value(list) else { throw Problem("\(here).NS.objects: missing or not an array") }
            case "NSDate":
                guard let time = fields["NS.time"], case .real(let t) = value(time), t.isFinite else {
                    throw Problem("\(here).NS.time: missing or not a finite real")
                }
            default: break
            }
        }

        /// The friend list's shape, each object of the class its place asks for: a root
        /// FriendList with a version; for a version the loader reads (a newer one is left to
        /// the version switch, which does not read the friends), friends an NSArray of Friend,
        /// each with a name string, an NSDate birthday and (from version 2) perhaps a nickname
        /// string.
        func checkFriendList(readsVersions: ClosedRange<Int>) throws(Problem) {
            guard let list = object(top["root"])?.fields else { throw Problem("$top.root: missing or not an archived object") }
            guard className(list) == "FriendListLoaders.FriendList" else { throw Problem("root: not a FriendList") }
            guard let versionField = list["version"] else { throw Problem("version: missing") }
            // As NSCoder.decodeInteger reads it: a number's integer part, else 0.
            guard let version = (versionField as? NSNumber)?.intValue, readsVersions.contains(version) else { return }
            guard let array = object(list["friends"])?.fields, ["NSArray", "NSMutableArray"].contains(className(array) ?? ""),
                let elements = array["NS.objects"], case .array(let references) = value(elements)
            else {
                throw Problem("friends: missing or not an array")
            }
            var checked: Set<UInt32> = []
            for (index, reference) in references.enumerated() {
                guard case .uid(let uid) = value(reference), checked.insert(uid).inserted else { continue }
                let here = "friends[\(index)]"
                guard let friend = object(reference)?.fields, className(friend) == "FriendListLoaders.Friend" else { throw Problem("\(here): not a Friend") }
                guard object(friend["name"])?.string != nil else { throw Problem("\(here).name: missing or not a string") }
                guard let birthday = object(friend["birthday"])?.fields, className(birthday) == "NSDate" else {
                    throw Problem("\(here).birthday: missing or not a date")
                }
                if version >= 2, let nickname = friend["nickname"], object(nickname)?.string == nil {
                    throw Problem("\(here).nickname: not a string")
                }
            }
        }
    }
}
