internal import CCorruptFuzzLibXML2
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads XML with libxml2, safely: entities are never expanded, no external DTD or entity is
/// loaded, the network is never touched, and libxml2's own limits on depth and size stay on.
/// This is how corrupt-fuzz reads seed files; the loaders it tests may do otherwise.
public enum XMLReader {
    /// libxml2 options for untrusted input: no network, no entity substitution, no DTD
    /// loading, errors not printed.
    static let safeOptions = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)

    /// Parses `bytes` into a tree.
    /// - Throws: ``XMLProblem`` with libxml2's first error.
    /// The most attributes one element may have: libxml2 checks attributes for duplicates in
    /// quadratic time (100,000 attributes take 16 s), so the reader refuses more up front.
    public static let maxAttributesPerElement = 10_000

    /// libxml2's limit on one text node or attribute value without XML_PARSE_HUGE
    /// (XML_MAX_TEXT_LENGTH): a longer one is refused as over it.
    public static let maxTextLength = 10_000_000

    /// Refuses inputs that would make libxml2 itself slow, or that it would refuse as over its
    /// limits only after copying them, before parsing: more than ``maxAttributesPerElement``
    /// attributes, an attribute value over ``maxTextLength`` bytes. Text between tags is
    /// skipped with `memchr`, so a huge text node costs next to nothing. Also refuses a NUL byte
    /// in a document of 8-bit units (see ``checkNUL(_:)``).
    static func checkLimits(_ bytes: [UInt8]) throws(XMLProblem) {
        try checkNUL(bytes)
        let overLimit: (offset: Int, message: String)? = bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var i = 0
            let n = buffer.count
            while i < n {
                // Outside a tag: jump to the next '<'.
                guard let found = memchr(base + i, Int32(UInt8(ascii: "<")), n - i) else { return nil }
                i = base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
                var quote: UInt8 = 0, attributes = 0
                while i < n {
                    if quote != 0 {
                        // Inside a quoted value: jump to its closing quote.
                        guard let end = memchr(base + i, Int32(quote), n - i) else { return nil }
                        let start = i
                        i = base.distance(to: end.assumingMemoryBound(to: UInt8.self)) + 1
                        quote = 0
                        if i - 1 - start > maxTextLength {
                            return (start, "an attribute value over \(maxTextLength) bytes, libxml2's limit (XML_MAX_TEXT_LENGTH) without XML_PARSE_HUGE")
                        }
                        continue
                    }
                    let byte = base[i]
                    i += 1
                    if byte == UInt8(ascii: ">") {
                        break
                    } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                        quote = byte
                    } else if byte == UInt8(ascii: "=") {
                        attributes += 1
                        if attributes > maxAttributesPerElement { return (i, "an element has more than \(maxAttributesPerElement) attributes") }
                    }
                }
            }
            return nil
        }
        if let (offset, message) = overLimit {
            let line = 1 + bytes[..<offset].lazy.filter { $0 == 0x0A }.count
            throw XMLProblem(line: line, path: nil, message: message, limitExceeded: true)
        }
    }

    /// A NUL byte is no character XML allows, anywhere; but libxml2 reading from memory stops
    /// at one after the root element and calls the document well-formed (`<a/>` and a NUL:
    /// an app's save cut short by a zero-filled block). Documents in UTF-16 or UTF-32 (a
    /// byte-order mark, or a zero in the first two bytes) hold zero bytes in their characters
    /// and are left to libxml2.
    static func checkNUL(_ bytes: [UInt8]) throws(XMLProblem) {
        guard bytes.count >= 2, bytes[0] != 0, bytes[1] != 0, !(bytes[0] == 0xFE && bytes[1] == 0xFF), !(bytes[0] == 0xFF && bytes[1] == 0xFE)
        else { return }
        let found = bytes.withUnsafeBytes { buffer in
            buffer.baseAddress.flatMap { base in memchr(base, 0, buffer.count).map { base.distance(to: UnsafeRawPointer($0)) } }
        }
        guard let offset = found else { return }
        let line = 1 + bytes[..<offset].lazy.filter { $0 == 0x0A }.count
        throw XMLProblem(line: line, path: nil, message: "a NUL byte at offset \(offset): not a character XML allows [rule: XML_ERR_INVALID_CHAR]")
    }

    public static func read(_ bytes: [UInt8]) throws(XMLProblem) -> XMLTree {
        try readDocument(bytes).tree
    }

    /// Parses `bytes` into a tree, and gives the name of its DOCTYPE declaration if it has one
    /// (a document that should have none can then be refused: the DTD is where entity bombs
    /// and external entities live).
    public static func readDocument(_ bytes: [UInt8]) throws(XMLProblem) -> (tree: XMLTree, doctype: String?) {
        try withDocument(bytes) { document, root in
            let doctype = document.pointee.intSubset.map { subset in subset.pointee.name.map { String(cString: $0) } ?? "" }
            return (XMLTree(root: element(root)), doctype)
        }
    }

    /// Whether `bytes` are a well-formed document, as ``read(_:)`` decides, without making its
    /// tree (a validator's question: an 8 MB text node is not copied into a `String`).
    /// - Throws: ``XMLProblem`` with libxml2's first error.
    public static func checkWellFormed(_ bytes: [UInt8]) throws(XMLProblem) {
        try withDocument(bytes) { _, _ in }
    }

    /// Parses `bytes` safely and gives `body` the document and its root element.
    static func withDocument<T>(_ bytes: [UInt8], _ body: (xmlDocPtr, xmlNodePtr) -> T) throws(XMLProblem) -> T {
        initializeLibXML2()
        try checkLimits(bytes)
        let document = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { base in
                base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    cf_xml_read_in_place($0, Int32(clamping: buffer.count), "input.xml", safeOptions)
                }
            } ?? nil
        }
        guard let document else { throw lastError() ?? XMLProblem(line: 0, path: nil, message: "not well-formed") }
        defer { xmlFreeDoc(document) }
        guard let root = xmlDocGetRootElement(document) else { throw XMLProblem(line: 0, path: nil, message: "no root element") }
        return body(document, root)
    }

    /// libxml2's last error on this thread.
    static func lastError() -> XMLProblem? {
        guard let error = xmlGetLastError() else { return nil }
        defer { xmlResetLastError() }
        let message = error.pointee.message.map { String(cString: $0) }?.trimmingTrailingNewlines() ?? "error \(error.pointee.code)"
        // The message names the document's own tags; the error code is the broken rule, so
        // one bug keeps one signature whatever the tag (see Normalize.message).
        // libxml2's own limits (lifted by XML_PARSE_HUGE) are not rules of XML.
        let limit = ["XML_PARSE_HUGE", "huge text node", "length too long", "Huge input lookup"].contains { message.contains($0) }
        return XMLProblem(
            line: Int(error.pointee.line), path: nil, message: message + " [rule: \(LibXML2ErrorNames.name(of: error.pointee.code))]", limitExceeded: limit)
    }

    static func element(_ node: xmlNodePtr) -> XMLTree.Element {
        var result = XMLTree.Element(name: qualifiedName(node))
        var attribute = node.pointee.properties
        while let a = attribute {
            let name = a.pointee.ns.flatMap { $0.pointee.prefix }.map { String(cString: $0) + ":" } ?? ""
            // The value is the attribute's text (and unexpanded entity reference) children.
            var value = ""
            var part = a.pointee.children
            while let p = part {
                if p.pointee.type == XML_ENTITY_REF_NODE {
                    value += "&" + String(cString: p.pointee.name) + ";"
                } else {
                    value += content(p)
                }
                part = p.pointee.next
            }
            result.attributes.append((name + String(cString: a.pointee.name), value))
            attribute = a.pointee.next
        }
        var namespace = node.pointee.nsDef
        while let ns = namespace {
            let prefix = ns.pointee.prefix.map { "xmlns:" + String(cString: $0) } ?? "xmlns"
            result.attributes.append((prefix, ns.pointee.href.map { String(cString: $0) } ?? ""))
            namespace = ns.pointee.next
        }
        var child = node.pointee.children
        while let c = child {
            switch c.pointee.type {
            case XML_ELEMENT_NODE: result.children.append(.element(element(c)))
            case XML_TEXT_NODE: result.children.append(.text(content(c)))
            case XML_CDATA_SECTION_NODE: result.children.append(.cdata(content(c)))
            case XML_COMMENT_NODE: result.children.append(.comment(content(c)))
            case XML_PI_NODE: result.children.append(.processingInstruction(target: String(cString: c.pointee.name), data: content(c)))
            case XML_ENTITY_REF_NODE: result.children.append(.text("&" + String(cString: c.pointee.name) + ";"))
            default: break
            }
            child = c.pointee.next
        }
        return result
    }

    static func qualifiedName(_ node: xmlNodePtr) -> String {
        let prefix = node.pointee.ns.flatMap { $0.pointee.prefix }.map { String(cString: $0) + ":" } ?? ""
        return prefix + String(cString: node.pointee.name)
    }

    static func content(_ node: xmlNodePtr) -> String {
        node.pointee.content.map { String(cString: $0) } ?? ""
    }
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var s = self
        while s.last?.isNewline == true { s.removeLast() }
        return s
    }
}

/// libxml2 must be initialized once before it is used from several threads.
private let libxml2Initialized: Void = { xmlInitParser() }()

/// Initializes libxml2 and silences its error printing on this thread: libxml2 keeps error
/// handlers per thread, and some errors (encoding conversion) ignore XML_PARSE_NOERROR and
/// would land on corrupt-fuzz's own stderr. Errors are still recorded for xmlGetLastError.
func initializeLibXML2() {
    _ = libxml2Initialized
    xmlSetStructuredErrorFunc(nil, silentErrors)
}

private let silentErrors: xmlStructuredErrorFunc = { _, _ in }
