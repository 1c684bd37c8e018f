@preconcurrency internal import CCorruptFuzzLibXML2

/// The notes document loaded the way a hurried developer writes it with libxml2: entities
/// substituted (`XML_PARSE_NOENT`), external DTDs loaded, the network allowed, no limits
/// (`XML_PARSE_HUGE`), no schema check, a recursive walk without a depth limit, every failure
/// called `corrupt`.
public enum NaiveNotesLoader {
    public static func load(_ bytes: [UInt8]) throws(NotesLoadError) -> [Note] {
        let options = Int32(XML_PARSE_NOENT.rawValue | XML_PARSE_DTDLOAD.rawValue | XML_PARSE_HUGE.rawValue)
        let document = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.flatMap { base in
                base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    xmlReadMemory($0, Int32(clamping: buffer.count), "notes.xml", nil, options)
                }
            }
        }
        guard let document, let root = xmlDocGetRootElement(document) else {
            throw NotesLoadError("corrupt", "not a notes document")
        }
        defer { xmlFreeDoc(document) }
        var notes: [Note] = []
        collect(root, into: &notes)
        return notes
    }

    /// Every `<note>` below `node`, at any depth.
    static func collect(_ node: xmlNodePtr, into notes: inout [Note]) {
        var child = node.pointee.children
        while let c = child {
            if c.pointee.type == XML_ELEMENT_NODE {
                if String(cString: c.pointee.name) == "note" {
                    notes.append(Note(id: property(c, "id"), created: property(c, "created"), text: text(c)))
                }
                collect(c, into: &notes)
            }
            child = c.pointee.next
        }
    }

    static func property(_ node: xmlNodePtr, _ name: String) -> String? {
        guard let value = xmlGetProp(node, name) else { return nil }
        defer { xmlFree(value) }
        return String(cString: value)
    }

    static func text(_ node: xmlNodePtr) -> String {
        guard let value = xmlNodeGetContent(node) else { return "" }
        defer { xmlFree(value) }
        return String(cString: value)
    }
}
