import CorruptFuzzCore

/// Structure-aware corruption of XML documents: tree mutations (elements deleted, duplicated,
/// swapped, moved; attributes dropped, duplicated, changed; boundary values), lexical mutations
/// (unclosed and mismatched tags, invalid UTF-8, byte-order marks, NUL bytes, CDATA, comment
/// and processing-instruction injection, truncation inside a token, a different encoding
/// declaration) and a catalogue of hostile documents (billion laughs, quadratic blow-up, an
/// external entity and an external DTD, nesting from 64 to 100,000 levels, a huge text node,
/// a huge attribute, 100,000 attributes).
public struct XMLMutator: StructureAwareMutator {
    /// Draws valid documents from an XML Schema; nil: a small generic document.
    let generator: XSDGenerator?

    public init(generator: XSDGenerator? = nil) {
        self.generator = generator
    }

    /// A document valid against the schema; without one, a small generic document (a root
    /// with a few attributed items), for campaigns with neither corpus nor schema.
    public func generate(using rng: inout FuzzRNG) -> [UInt8] {
        if let generator { return XMLWriter.write(generator.generate(using: &rng)) }
        let items = (0..<(1 + rng.below(3))).map { index in
            XMLTree.Node.element(
                XMLTree.Element(name: "item", attributes: [("id", String(index + 1))], children: [.text("value \(rng.below(1000))")]))
        }
        return XMLWriter.write(XMLTree(root: XMLTree.Element(name: "document", attributes: [("version", "1")], children: items)))
    }

    // MARK: - Catalogue

    /// Uses the campaign's canary file and loopback listener for its external-entity and
    /// external-DTD documents.
    public var usesOutsideTraps: Bool { true }

    public func catalogue(of bytes: [UInt8], context: CatalogueContext) -> [StructuredMutation] {
        catalogueEntries(of: bytes, context: context).map { $0.mutation() }.filter { context.allows($0.bytes.count) }
    }

    /// The hostile documents and the structure stage (``XMLStructureStage``: every element,
    /// attribute and text of the seed changed in turn), interleaved, each made when it is due.
    public func catalogueEntries(of bytes: [UInt8], context: CatalogueContext) -> [CatalogueEntry] {
        guard let tree = try? XMLReader.read(bytes) else { return [] }
        let hostile = hostileCatalogue(of: tree, traps: context.traps, maxLength: context.maxInputLength)
        return CatalogueEntry.interleaved(hostile, XMLStructureStage(tree: tree).entries())
    }

    /// The length of the huge attribute's value: 12 MiB, over libxml2's 10,000,000 bytes.
    public static let hugeAttributeLength = 12 << 20

    /// Nesting depths the hostile catalogue tries.
    public static let nestingLadder = [64, 128, 200, 255, 256, 257, 512, 1_000, 10_000, 100_000]

    /// The hostile documents, built around the seed so they reach the loader's code: bombs,
    /// external entities and DTDs (naming the canary file and the listener's URLs when the
    /// campaign set them), deep nesting, a huge text node, 100,000 attributes.
    /// Each is made when it is due; one known to be over `maxLength` bytes is left out.
    func hostileCatalogue(of tree: XMLTree, traps: OutsideTraps?, maxLength: Int = .max) -> [CatalogueEntry] {
        let root = tree.root.name
        var out: [CatalogueEntry] = []
        /// `rootOnly`: the document depends on the seed's root element alone.
        func add(
            _ name: String, atLeast size: Int = 0, rootOnly: Bool = false, _ text: @escaping @Sendable @autoclosure () -> String,
            _ expectation: Expectation? = nil
        ) {
            guard size <= maxLength else { return }
            out.append(
                CatalogueEntry(name: name, expectation: expectation, minimumLength: size, identity: rootOnly ? "\(name) <\(root)>" : nil) {
                    Array(text().utf8)
                })
        }
        /// The seed with `reference` (an entity reference) as the text of its first leaf
        /// element, after `doctype`.
        @Sendable func seed(doctype: String, reference: String) -> String {
            var element = tree.root
            Self.placeReference(reference, in: &element)
            let body = String(decoding: XMLWriter.write(XMLTree(root: element)), as: UTF8.self)
            let withoutDeclaration = body.drop { $0 != "\n" }.dropFirst()
            return #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n" + doctype + "\n" + withoutDeclaration
        }
        // Cheap and telling first (external references, nesting), then the bombs, which cost a
        // deadline each in a loader that expands them, then the huge documents.
        let canary = traps?.canaryPath ?? "/etc/hostname"
        add("external-entity-file", seed(doctype: #"<!DOCTYPE \#(root) [<!ENTITY xxe SYSTEM "file://\#(canary)">]>"#, reference: "&xxe;"))
        let dtdURL = traps?.dtdURL ?? "http://127.0.0.1:9/corrupt-fuzz.dtd"
        add("external-dtd", seed(doctype: #"<!DOCTYPE \#(root) SYSTEM "\#(dtdURL)">"#, reference: ""))
        if let entityURL = traps?.entityURL {
            add("external-entity-url", seed(doctype: #"<!DOCTYPE \#(root) [<!ENTITY xxe SYSTEM "\#(entityURL)">]>"#, reference: "&xxe;"))
            add("external-parameter-entity", seed(doctype: #"<!DOCTYPE \#(root) [<!ENTITY % remote SYSTEM "\#(entityURL)"> %remote;]>"#, reference: ""))
        }
        // A ladder of depths around common limits: an app's recursive walker may give up (or
        // overflow its stack) below the parser's own limit (libxml2 refuses more than 256 levels
        // without XML_PARSE_HUGE), and deeper documents never reach the app's code.
        for depth in Self.nestingLadder {
            add(
                "nesting-\(depth)", rootOnly: true,
                "<\(root)>" + String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth) + "</\(root)>")
        }
        // Well-formed XML: a loader that never expands entities may accept it (the validator
        // decides); one that expands them runs out of time or memory, which is the finding.
        let bomb = Expectation(
            reason: .corrupt, because: "expanding its entities would take gigabytes: reject it as corrupt, or read it without expanding them",
            mayBeAccepted: true)
        var laughs = #"<!DOCTYPE \#(root) [<!ENTITY lol "lol">"#
        for level in 1...9 {
            laughs += "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level == 1 ? "" : String(level - 1));", count: 10) + "\">"
        }
        let laughsDoctype = laughs + "]>"
        add("billion-laughs", seed(doctype: laughsDoctype, reference: "&lol9;"), bomb)
        let big = String(repeating: "a", count: 50_000)
        add("quadratic-blowup", seed(doctype: #"<!DOCTYPE \#(root) [<!ENTITY a "\#(big)">]>"#, reference: String(repeating: "&a;", count: 50_000)), bomb)
        // Made as bytes: a string of 100 million characters takes a second to build and copy.
        @Sendable func repeated(_ head: String, _ count: Int, _ tail: String) -> [UInt8] {
            // Filled by the standard library's own (optimized) initializer: appending a
            // `repeatElement` went through the generic collection path one byte at a time, which
            // in a debug build (`swift run`) took seconds for the 12 MiB entry.
            let head = Array(head.utf8), tail = Array(tail.utf8)
            var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: head.count + count + tail.count)
            bytes.replaceSubrange(0..<head.count, with: head)
            bytes.replaceSubrange((bytes.count - tail.count)..., with: tail)
            return bytes
        }
        // A text node under libxml2's limit on one (XML_MAX_TEXT_LENGTH, 10,000,000 bytes), so a
        // loader reads all of it; an attribute over it, which a parser without XML_PARSE_HUGE
        // refuses and one with it reads whole. Anything larger finds nothing more in a loader
        // whose memory grows with the document (the target's limit is 1 GB by default), and
        // costs the campaign its size in memory and a write of it for every root element: the
        // attribute was 100 MB, and an XML campaign of 20 seeds peaked at 400 MB.
        for (name, head, count, tail) in [
            ("huge-text", "<\(root)>", 8 << 20, "</\(root)>"), ("huge-attribute", "<\(root) a=\"", Self.hugeAttributeLength, "\"/>"),
        ] where count <= maxLength {
            out.append(CatalogueEntry(name: name, minimumLength: count, identity: "\(name) <\(root)>") { repeated(head, count, tail) })
        }
        add("attributes-100000", atLeast: 1 << 20, rootOnly: true, "<\(root) " + (0..<100_000).map { "a\($0)=\"1\"" }.joined(separator: " ") + "/>")
        return out
    }

    /// Puts `reference` as the only text of the first element without child elements
    /// (`<note>` in a notes document); an empty reference leaves the tree alone.
    private static func placeReference(_ reference: String, in element: inout XMLTree.Element) {
        guard !reference.isEmpty else { return }
        for (index, child) in element.children.enumerated() {
            if case .element(var inner) = child {
                placeReference(reference, in: &inner)
                element.children[index] = .element(inner)
                return
            }
        }
        element.children = [.text(reference)]
    }

    // MARK: - Random mutations

    public func mutate(_ bytes: [UInt8], using rng: inout FuzzRNG) -> StructuredMutation? {
        if rng.oneIn(2), let tree = try? XMLReader.read(bytes), let mutated = treeMutation(tree, rng: &rng) {
            return mutated
        }
        return lexicalMutation(bytes, rng: &rng)
    }

    func treeMutation(_ tree: XMLTree, rng: inout FuzzRNG) -> StructuredMutation? {
        let paths = tree.root.elementPaths()
        let path = paths[rng.below(paths.count)]
        var root = tree.root
        let name: String
        let boundary = [
            "", "0", "-1", "2147483648", "9223372036854775808", "NaN", "1e999", "0000-00-00T00:00:00Z",
            String(repeating: "A", count: 70_000), "\u{202E}evil", "&amp;&lt;", "null", "true",
        ]
        switch rng.below(7) {
        case 0 where !path.isEmpty:
            root.update(at: Array(path.dropLast())) { $0.children.remove(at: path.last!) }
            name = "delete-element"
        case 1 where !path.isEmpty:
            root.update(at: Array(path.dropLast())) { $0.children.insert($0.children[path.last!], at: path.last!) }
            name = "duplicate-element"
        case 2 where path.count >= 2 && rng.oneIn(2):
            // Move: the element leaves its parent for its grandparent's first child's place.
            var moved: XMLTree.Node?
            root.update(at: Array(path.dropLast())) { moved = $0.children.remove(at: path.last!) }
            if let moved { root.update(at: Array(path.dropLast(2))) { $0.children.insert(moved, at: 0) } }
            name = "move-element"
        case 2 where !path.isEmpty:
            root.update(at: Array(path.dropLast())) {
                let j = rng.below($0.children.count)
                $0.children.swapAt(path.last!, j)
            }
            name = "swap-elements"
        case 3:
            root.update(at: path) { element in
                guard !element.attributes.isEmpty else { return }
                element.attributes.remove(at: rng.below(element.attributes.count))
            }
            name = "drop-attribute"
        case 4:
            root.update(at: path) { element in
                guard let first = element.attributes.first else { return }
                element.attributes.append(first)
            }
            name = "duplicate-attribute"
        case 5:
            let value = boundary[rng.below(boundary.count)]
            root.update(at: path) { element in
                if element.attributes.isEmpty {
                    element.children = [.text(value)]
                } else {
                    element.attributes[rng.below(element.attributes.count)].value = value
                }
            }
            name = "boundary-value"
        default:
            let value = boundary[rng.below(boundary.count)]
            root.update(at: path) { $0.children = [.text(value)] }
            name = "boundary-text"
        }
        return StructuredMutation(bytes: XMLWriter.write(XMLTree(root: root)), name: name)
    }

    func lexicalMutation(_ bytes: [UInt8], rng: inout FuzzRNG) -> StructuredMutation? {
        guard !bytes.isEmpty else { return nil }
        var b = bytes
        let at = rng.below(b.count)
        let tags = b.indices.filter { b[$0] == UInt8(ascii: "<") }
        switch rng.below(9) {
        case 0:
            // Truncate inside a token: just after a '<' or in the middle of a name.
            let cut = tags.isEmpty ? at : min(b.count, tags[rng.below(tags.count)] + 1 + rng.below(4))
            return StructuredMutation(bytes: Array(b.prefix(cut)), name: "truncate-in-token@\(cut)")
        case 1:
            guard let close = b.indices.reversed().first(where: { b[$0] == UInt8(ascii: "/") && $0 > 0 && b[$0 - 1] == UInt8(ascii: "<") }) else { return nil }
            b.removeSubrange((close - 1)...)
            return StructuredMutation(bytes: b, name: "unclosed-tag")
        case 2:
            guard let close = b.indices.first(where: { b[$0] == UInt8(ascii: "/") && $0 > 0 && b[$0 - 1] == UInt8(ascii: "<") }),
                close + 1 < b.count
            else { return nil }
            b[close + 1] = UInt8(ascii: "Z")
            return StructuredMutation(bytes: b, name: "mismatched-tag")
        case 3:
            b.insert(contentsOf: [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80]][rng.below(4)], at: at)
            return StructuredMutation(bytes: b, name: "invalid-utf8@\(at)")
        case 4:
            let boms: [[UInt8]] = [[0xEF, 0xBB, 0xBF], [0xFE, 0xFF], [0xFF, 0xFE], [0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF]]
            return StructuredMutation(bytes: boms[rng.below(boms.count)] + b, name: "byte-order-mark")
        case 5:
            b.insert(0, at: at)
            return StructuredMutation(bytes: b, name: "nul-byte@\(at)")
        case 6:
            let injections = ["<![CDATA[<notes>]]>", "<!-- -- -->", "<?php evil ?>", "<![CDATA[", "<!--", "]]>", "<?xml version=\"1.0\"?>"]
            let injection = injections[rng.below(injections.count)]
            let place = tags.isEmpty ? at : tags[rng.below(tags.count)]
            b.insert(contentsOf: Array(injection.utf8), at: place)
            return StructuredMutation(bytes: b, name: "inject \(injection.prefix(12))")
        case 7:
            let text = String(decoding: b, as: UTF8.self)
            let declarations = ["UTF-16", "ISO-8859-1", "EBCDIC", "nonsense", "UTF-32"]
            let declared = declarations[rng.below(declarations.count)]
            guard let range = text.firstRange(of: "UTF-8") ?? text.firstRange(of: "utf-8") else {
                return StructuredMutation(bytes: Array("<?xml version=\"1.0\" encoding=\"\(declared)\"?>".utf8) + b, name: "encoding=\(declared)")
            }
            var replaced = text
            replaced.replaceSubrange(range, with: declared)
            return StructuredMutation(bytes: Array(replaced.utf8), name: "encoding=\(declared)")
        default:
            let text = String(decoding: b, as: UTF8.self)
            guard let range = text.firstRange(of: "xmlns") else {
                return StructuredMutation(bytes: b + Array("<x:y/>".utf8), name: "undeclared-prefix")
            }
            var replaced = text
            replaced.replaceSubrange(range, with: "xmlns:bad")
            return StructuredMutation(bytes: Array(replaced.utf8), name: "namespace-changed")
        }
    }
}
