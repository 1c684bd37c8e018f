internal import CCorruptFuzzLibXML2
import CorruptFuzzCore

/// Validates XML documents against an XML Schema (XSD) with libxml2, reporting each error with
/// its line and element path: the XML format's reference validator.
public final class XMLSchemaValidator: Validator, @unchecked Sendable {
    public let name: String
    private let schema: xmlSchemaPtr

    /// Compiles the schema in `xsd`.
    /// - Throws: ``XMLProblem`` when the schema itself is broken.
    public init(xsd: [UInt8], name: String = "xsd") throws(XMLProblem) {
        self.name = name
        initializeLibXML2()
        // libxml2's memory parser context keeps a pointer to the buffer, not a copy, and reads
        // it in xmlSchemaParse: both calls happen while the buffer is pinned. (An optimized
        // build may free an array right after its last use; parsing the freed buffer later
        // failed at random with "Failed to parse the XML resource 'in_memory_buffer'".)
        let box = ErrorBox()
        let compiled: xmlSchemaPtr? = xsd.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { pointer -> xmlSchemaPtr? in
                guard let parser = xmlSchemaNewMemParserCtxt(pointer, Int32(clamping: buffer.count)) else { return nil }
                defer { xmlSchemaFreeParserCtxt(parser) }
                xmlSchemaSetParserStructuredErrors(parser, collectError, Unmanaged.passUnretained(box).toOpaque())
                return withExtendedLifetime(box) { xmlSchemaParse(parser) }
            }
        }
        guard let compiled else {
            if xsd.isEmpty { throw XMLProblem(line: 0, path: nil, message: "the schema is empty") }
            throw box.problems.first ?? XMLProblem(line: 0, path: nil, message: "the schema does not compile")
        }
        schema = compiled
    }

    deinit { xmlSchemaFree(schema) }

    /// Every error in `bytes` against the schema (empty when valid); a document that is not
    /// well-formed gives its parse error.
    public func problems(in bytes: [UInt8]) -> [XMLProblem] {
        initializeLibXML2()
        do throws(XMLProblem) { try XMLReader.checkLimits(bytes) } catch { return [error] }
        let document = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.flatMap { base in
                base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    cf_xml_read_in_place($0, Int32(clamping: buffer.count), "input.xml", XMLReader.safeOptions)
                }
            }
        }
        guard let document else { return [XMLReader.lastError() ?? XMLProblem(line: 0, path: nil, message: "not well-formed")] }
        defer { xmlFreeDoc(document) }
        guard let context = xmlSchemaNewValidCtxt(schema) else { return [XMLProblem(line: 0, path: nil, message: "no validation context")] }
        defer { xmlSchemaFreeValidCtxt(context) }
        let box = ErrorBox()
        xmlSchemaSetValidStructuredErrors(context, collectError, Unmanaged.passUnretained(box).toOpaque())
        let result = xmlSchemaValidateDoc(context, document)
        if result != 0, box.problems.isEmpty { return [XMLProblem(line: 0, path: nil, message: "invalid (code \(result))")] }
        return box.problems
    }

    public func validate(_ bytes: [UInt8]?) -> Verdict {
        if let violation = Violation.intrinsic(for: bytes) { return .invalid(violation) }
        guard let first = problems(in: bytes ?? []).first else { return .valid }
        if first.limitExceeded { return .undecided("beyond the safe reader's limits: \(first.description)") }
        return .invalid(first.violation)
    }
}

/// Collects libxml2's structured errors.
final class ErrorBox {
    var problems: [XMLProblem] = []
}

/// libxml2's structured error callback: records the message, line and element path.
private let collectError: xmlStructuredErrorFunc = { context, error in
    guard let context, let error else { return }
    let box = Unmanaged<ErrorBox>.fromOpaque(context).takeUnretainedValue()
    let message = error.pointee.message.map { String(cString: $0) }?.trimmingTrailingNewlines() ?? "error \(error.pointee.code)"
    var path: String?
    if let raw = error.pointee.node {
        path = elementPath(raw.assumingMemoryBound(to: xmlNode.self))
    }
    box.problems.append(XMLProblem(line: Int(error.pointee.line), path: path, message: message))
}

/// `/notes/note[2]`: the element's path, with positions among same-named siblings.
func elementPath(_ node: xmlNodePtr) -> String {
    var parts: [String] = []
    var current: xmlNodePtr? = node
    while let n = current, n.pointee.type == XML_ELEMENT_NODE {
        let name = XMLReader.qualifiedName(n)
        var index = 1, same = 0
        var sibling = n.pointee.parent?.pointee.children
        while let s = sibling {
            if s.pointee.type == XML_ELEMENT_NODE, XMLReader.qualifiedName(s) == name {
                same += 1
                if s == n { index = same }
            }
            sibling = s.pointee.next
        }
        parts.append(same > 1 ? "\(name)[\(index)]" : name)
        current = n.pointee.parent
    }
    return "/" + parts.reversed().joined(separator: "/")
}
