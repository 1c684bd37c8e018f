import CorruptFuzzCore
/// How a property list file is encoded.
public enum PlistEncoding: String, Sendable, Hashable, CaseIterable {
    /// `bplist00`.
    case binary
    /// `<?xml …?><!DOCTYPE plist …><plist version="1.0">…</plist>`.
    case xml
}

/// One entry point for property list files in either encoding: both read into the same
/// ``BinaryPlist`` object graph, and either graph writes in either encoding.
public enum PropertyListFile {
    /// The encoding `bytes` claim by their first bytes: `bplist` for binary; for XML, a `<`
    /// after optional whitespace (or a byte-order mark, which the XML reader then refuses with
    /// a message). Nil for anything else.
    public static func encoding(of bytes: [UInt8]) -> PlistEncoding? {
        if bytes.starts(with: Array("bplist".utf8)) { return .binary }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) || bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) { return .xml }
        let first = bytes.first { !XMLPlistParser.isSpace($0) }
        return first == UInt8(ascii: "<") ? .xml : nil
    }

    /// The deepest an object may lie below the top one (depth 0) for Foundation to read the
    /// file: CoreFoundation refuses deeper nesting, in either encoding, with "Too many nested
    /// arrays or dictionaries" (`_CFPropertyListMaxRecursionDepth`: 512 on macOS and Linux; 128
    /// on iOS, tvOS and watchOS).
    public static let maxDepth = 512

    /// Reads a binary or XML property list strictly, as Foundation can read it: no object
    /// deeper than ``maxDepth``.
    /// - Throws: ``Violation`` from ``BinaryPlistReader`` or ``XMLPlistReader``, or saying the
    ///   file is neither, or too deep.
    public static func read(_ bytes: [UInt8]) throws(Violation) -> (plist: BinaryPlist, encoding: PlistEncoding) {
        let result: (plist: BinaryPlist, encoding: PlistEncoding)
        switch encoding(of: bytes) {
        case .binary: result = (try BinaryPlistReader.read(bytes), .binary)
        case .xml: result = (try XMLPlistReader.read(bytes), .xml)
        case nil:
            if bytes.isEmpty { throw Violation(.corrupt, "file: empty") }
            throw Violation(.corrupt, "header: neither a binary property list (bplist) nor an XML one (<)")
        }
        let depth = depth(of: result.plist)
        if depth > maxDepth {
            throw Violation(.corrupt, "nesting: an object \(depth) levels below the top one; Foundation reads \(maxDepth) at most")
        }
        return result
    }

    /// How far below the top object its deepest object lies, along the longest path (a shared
    /// object counts at every depth it is named from, as Foundation reads it). Without recursion;
    /// the graph must be acyclic, as both readers make sure.
    static func depth(of plist: BinaryPlist) -> Int {
        let objects = plist.objects
        // The longest path down from each object, in edges; -1 while not known.
        var height = [Int](repeating: -1, count: objects.count)
        var stack: [(index: Int, refs: [Int], next: Int)] = [(plist.topObject, objects[plist.topObject].references, 0)]
        while let (index, refs, next) = stack.last {
            if next < refs.count {
                stack[stack.count - 1].next += 1
                if height[refs[next]] < 0 { stack.append((refs[next], objects[refs[next]].references, 0)) }
            } else {
                height[index] = refs.reduce(0) { max($0, height[$1] + 1) }
                stack.removeLast()
            }
        }
        return height[plist.topObject]
    }

    /// Writes `plist` in `encoding`. Binary keeps the graph's layout (so an unmutated binary file
    /// writes back byte for byte); XML is Foundation's style (see ``XMLPlistWriter``).
    /// - Throws: ``Violation`` when the graph has no XML form (a cycle, a set, a null, a
    ///   non-string key) or its XML would be larger than `maxXMLBytes`.
    public static func write(_ plist: BinaryPlist, encoding: PlistEncoding, maxXMLBytes: Int = 256 << 20) throws(Violation) -> [UInt8] {
        switch encoding {
        case .binary: BinaryPlistWriter.write(plist)
        case .xml: try XMLPlistWriter.write(plist, maxBytes: maxXMLBytes)
        }
    }
}
