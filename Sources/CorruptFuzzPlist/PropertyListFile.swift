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

    /// Reads a binary or XML property list strictly.
    /// - Throws: ``Violation`` from ``BinaryPlistReader`` or ``XMLPlistReader``, or saying the
    ///   file is neither.
    public static func read(_ bytes: [UInt8]) throws(Violation) -> (plist: BinaryPlist, encoding: PlistEncoding) {
        switch encoding(of: bytes) {
        case .binary: return (try BinaryPlistReader.read(bytes), .binary)
        case .xml: return (try XMLPlistReader.read(bytes), .xml)
        case nil:
            if bytes.isEmpty { throw Violation(.corrupt, "file: empty") }
            throw Violation(.corrupt, "header: neither a binary property list (bplist) nor an XML one (<)")
        }
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
