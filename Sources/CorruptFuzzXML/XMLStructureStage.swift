import CorruptFuzzCore

/// The deterministic stage of one XML document, for the rules an app adds to the parser's
/// ("every note has an id", "ids are unique", "a newer version is unsupported", "no markup in a
/// note's text"): every element dropped, duplicated and moved; every attribute dropped,
/// duplicated, emptied and set to the boundaries of its value (a number ±1, 0, -1, 2^31, 2^63;
/// a date far in the past or future, or impossible); every text emptied, and nested in markup
/// at the depth ladder inside its element. A campaign runs it early, interleaved with the
/// hostile catalogue: random tree mutations reach these one in hundreds.
package struct XMLStructureStage {
    let tree: XMLTree

    package init(tree: XMLTree) { self.tree = tree }

    /// Depths of the markup nested inside an element's text: below and at the limits a
    /// recursive walker (or libxml2, 256 without XML_PARSE_HUGE) has.
    static let textNestingLadder = [8, 64, 255, 256, 257, 1_000]

    /// The most entries one document gives, spread evenly over all of them.
    static let maxEntries = 512

    /// The entries, each made when due.
    package func entries() -> [CatalogueEntry] {
        var all: [(name: String, change: @Sendable (inout XMLTree.Element) -> Void)] = []
        for path in tree.root.elementPaths() {
            guard let element = tree.root.element(at: path) else { continue }
            let where_ = Self.describe(path, in: tree.root)
            if let index = path.last {
                let parent = Array(path.dropLast())
                all.append(("drop-element \(where_)", { root in root.update(at: parent) { $0.children.remove(at: index) } }))
                all.append(
                    ("duplicate-element \(where_)", { root in root.update(at: parent) { $0.children.insert($0.children[index], at: index) } }))
                if path.count >= 2 {
                    // To its grandparent, first: out of the parent that gives it meaning.
                    let grandparent = Array(parent.dropLast())
                    all.append(
                        (
                            "move-element-up \(where_)",
                            { root in
                                var moved: XMLTree.Node?
                                root.update(at: parent) { moved = $0.children.remove(at: index) }
                                if let moved { root.update(at: grandparent) { $0.children.insert(moved, at: 0) } }
                            }
                        ))
                }
            }
            for (a, attribute) in element.attributes.enumerated() {
                let at = "\(where_)/@\(attribute.name)"
                all.append(("drop-attribute \(at)", { root in root.update(at: path) { $0.attributes.remove(at: a) } }))
                all.append(("duplicate-attribute \(at)", { root in root.update(at: path) { $0.attributes.insert($0.attributes[a], at: a + 1) } }))
                for value in [""] + Self.boundaries(of: attribute.value) {
                    let label = value.isEmpty ? "empty" : value
                    all.append(("attribute=\(label) \(at)", { root in root.update(at: path) { $0.attributes[a].value = value } }))
                }
            }
            let text = element.children.compactMap { child -> String? in
                if case .text(let value) = child { return value }
                return nil
            }.joined()
            if !text.allSatisfy(\.isWhitespace) {
                all.append(
                    ("empty-text \(where_)", { root in root.update(at: path) { $0.children.removeAll { if case .text = $0 { true } else { false } } } }))
                for depth in Self.textNestingLadder {
                    all.append(
                        (
                            "nested-markup-\(depth) \(where_)",
                            { root in
                                root.update(at: path) { element in
                                    var node = XMLTree.Node.text(text)
                                    for _ in 0..<depth { node = .element(XMLTree.Element(name: "b", attributes: [], children: [node])) }
                                    element.children = [node]
                                }
                            }
                        ))
                }
            }
        }
        let step = max(1, (all.count + Self.maxEntries - 1) / Self.maxEntries)
        let tree = self.tree
        return stride(from: 0, to: all.count, by: step).map { index in
            let (name, change) = all[index]
            return CatalogueEntry(name: name) {
                var root = tree.root
                change(&root)
                return XMLWriter.write(XMLTree(root: root))
            }
        }
    }

    /// The values at the edges of what `value` is: for an integer, one more (the next version),
    /// one less, 0, -1, 2^31 and 2^63; for another number, 0, -1, NaN and 1e999; for a date,
    /// the year 1 and 9999 and an impossible day; nothing else for text (emptied already).
    package static func boundaries(of value: String) -> [String] {
        let trimmed = String(value.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        var out: [String]
        if let number = Int(trimmed) {
            out = [String(number &+ 1), String(number &- 1), "0", "-1", "2147483648", "9223372036854775808"]
        } else if Double(trimmed) != nil, trimmed.contains(where: \.isNumber) {
            out = ["0", "-1", "NaN", "1e999"]
        } else if trimmed.count >= 10, trimmed.prefix(4).allSatisfy(\.isNumber), trimmed.dropFirst(4).first == "-" {
            out = ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-02-30T25:61:00Z"]
        } else {
            out = []
        }
        var seen: Set<String> = [value]
        return out.filter { seen.insert($0).inserted }
    }

    /// `/notes/note[2]`: each step's name, with its position among siblings of that name when
    /// it has any.
    static func describe(_ path: [Int], in root: XMLTree.Element) -> String {
        var text = "/" + root.name
        var element = root
        for index in path {
            guard case .element(let child) = element.children[index] else { break }
            let same = element.children.filter { if case .element(let e) = $0 { e.name == child.name } else { false } }
            if same.count > 1 {
                let position = element.children[..<index].filter { if case .element(let e) = $0 { e.name == child.name } else { false } }.count + 1
                text += "/\(child.name)[\(position)]"
            } else {
                text += "/\(child.name)"
            }
            element = child
        }
        return text
    }
}
