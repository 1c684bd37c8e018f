internal import CCorruptFuzzLibXML2
import CorruptFuzzCore

/// An XML document as a tree of Swift values: what corrupt-fuzz reads seeds into, mutates and
/// writes back.
public struct XMLTree: Sendable, Hashable {
    /// One node.
    public indirect enum Node: Sendable, Hashable {
        case element(Element)
        case text(String)
        case cdata(String)
        case comment(String)
        case processingInstruction(target: String, data: String)
    }

    /// An element: its qualified name, attributes in document order, children.
    public struct Element: Sendable, Hashable {
        public var name: String
        public var attributes: [(name: String, value: String)]
        public var children: [Node]

        public init(name: String, attributes: [(name: String, value: String)] = [], children: [Node] = []) {
            self.name = name
            self.attributes = attributes
            self.children = children
        }

        public static func == (a: Element, b: Element) -> Bool {
            a.name == b.name && a.attributes.map(\.name) == b.attributes.map(\.name)
                && a.attributes.map(\.value) == b.attributes.map(\.value) && a.children == b.children
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(name)
            for attribute in attributes {
                hasher.combine(attribute.name)
                hasher.combine(attribute.value)
            }
            hasher.combine(children)
        }
    }

    public var root: Element

    public init(root: Element) { self.root = root }
}

/// Why XML could not be read or validated: libxml2's message, line and element path.
public struct XMLProblem: Error, Sendable, Hashable, CustomStringConvertible {
    public var line: Int
    /// `/notes/note[2]`, when libxml2 names the node.
    public var path: String?
    public var message: String
    /// Whether the document broke one of the safe reader's limits (depth, text or attribute
    /// size, attribute count) rather than a rule of XML: well-formed, but too costly to read.
    public var limitExceeded: Bool

    public init(line: Int, path: String?, message: String, limitExceeded: Bool = false) {
        self.line = line
        self.path = path
        self.message = message
        self.limitExceeded = limitExceeded
    }

    public var description: String { violation.description }

    /// The problem as a document's violation (`corrupt`), located by line and element path.
    public var violation: Violation {
        Violation(.corrupt, message, at: "line \(line)" + (path.map { " \($0)" } ?? ""))
    }
}

extension XMLTree.Element {
    /// The path of every element in this one's tree, this one's (`[]`) first, each as child
    /// indices from here, in document order.
    func elementPaths() -> [[Int]] {
        var paths: [[Int]] = []
        func collect(_ element: XMLTree.Element, _ path: [Int]) {
            paths.append(path)
            for (i, child) in element.children.enumerated() {
                if case .element(let e) = child { collect(e, path + [i]) }
            }
        }
        collect(self, [])
        return paths
    }

    /// The element at `path` (child indices from here), if there is one.
    func element(at path: [Int]) -> XMLTree.Element? {
        var element = self
        for index in path {
            guard index < element.children.count, case .element(let child) = element.children[index] else { return nil }
            element = child
        }
        return element
    }

    /// Applies `change` to the element at `path`; nothing when there is none.
    mutating func update(at path: [Int], _ change: (inout XMLTree.Element) -> Void) {
        guard let first = path.first else { return change(&self) }
        guard first < children.count, case .element(var child) = children[first] else { return }
        child.update(at: Array(path.dropFirst()), change)
        children[first] = .element(child)
    }
}
