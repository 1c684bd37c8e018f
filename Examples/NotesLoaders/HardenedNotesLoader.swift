@preconcurrency internal import CCorruptFuzzLibXML2
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The notes document loaded safely, with libxml2 as an app calls it: no entity substitution
/// (no `XML_PARSE_NOENT`), no DTD loading (no `XML_PARSE_DTDLOAD`), no network
/// (`XML_PARSE_NONET`), libxml2's default limits kept (no `XML_PARSE_HUGE`: 256 levels deep at
/// most), libxml2's error output silenced, no DOCTYPE allowed, a version switch, the notes
/// schema (libxml2's XML Schema validator), and the app's own checks, with a reason for every
/// failure.
public enum HardenedNotesLoader {
    /// The version this build reads; a newer one is `unsupported-version`.
    public static let currentVersion = 1
    /// No notes document is larger: a bigger file is refused before it is read.
    public static let maxFileSize = 16 << 20
    /// The most attributes one tag may have: libxml2 checks a tag's attributes for duplicates
    /// in quadratic time (100,000 attributes take seconds), so more are refused before parsing.
    public static let maxAttributesPerTag = 10_000

    static let parseOptions = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)

    /// The notes schema, compiled once (a compiled schema is read-only and shared; each load
    /// validates with its own context). If the resource cannot be read or compiled, every load
    /// fails with a reason: an app must not trap on its own resources either.
    static let schema: Result<CompiledSchema, NotesLoadError> = NotesSchema.bytes.flatMap(CompiledSchema.compile)

    /// Loads the file at `path`, refusing one over ``maxFileSize`` before reading it.
    public static func load(path: String) throws(NotesLoadError) -> [Note] {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else {
            throw NotesLoadError("not-found", "\(path) does not exist")
        }
        if let size = attributes[.size] as? Int, size > maxFileSize {
            throw NotesLoadError("corrupt", "\(size) bytes is more than a notes document's \(maxFileSize)")
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw NotesLoadError("unreadable", "cannot read \(path)") }
        return try load([UInt8](data))
    }

    public static func load(_ bytes: [UInt8]) throws(NotesLoadError) -> [Note] {
        if bytes.isEmpty { throw NotesLoadError("empty", "the file is empty") }
        if bytes.count > maxFileSize { throw NotesLoadError("corrupt", "\(bytes.count) bytes is more than a notes document's \(maxFileSize)") }
        // libxml2 stops reading at a NUL byte after the root element and calls the rest
        // well-formed: a save cut short by a block of zeros. (A UTF-16 document's characters
        // hold zero bytes; libxml2 reads those.)
        let wide = bytes.count >= 2 && (bytes[0] == 0 || bytes[1] == 0 || (bytes[0] == 0xFE && bytes[1] == 0xFF) || (bytes[0] == 0xFF && bytes[1] == 0xFE))
        if !wide, let offset = bytes.firstIndex(of: 0) {
            throw NotesLoadError("corrupt", "a NUL byte at offset \(offset): not a character XML allows")
        }
        if let line = lineOfTagWithTooManyAttributes(bytes) {
            throw NotesLoadError("corrupt", "line \(line): a tag has more than \(maxAttributesPerTag) attributes")
        }
        _ = libxml2Initialized
        return try withLibXML2Errors { errors throws(NotesLoadError) in
            let document = bytes.withUnsafeBufferPointer { buffer in
                buffer.baseAddress.flatMap { base in
                    base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                        xmlReadMemory($0, Int32(clamping: buffer.count), "notes.xml", nil, parseOptions)
                    }
                }
            }
            guard let document else { throw NotesLoadError("corrupt", "not well-formed: \(errors.first ?? "libxml2 gave no document")") }
            defer { xmlFreeDoc(document) }
            return try notes(in: document, errors: errors)
        }
    }

    /// The checks of a parsed document, in order, then its notes.
    static func notes(in document: xmlDocPtr, errors: ErrorLog) throws(NotesLoadError) -> [Note] {
        // The DTD is where entity bombs and external entities live; a notes document has none.
        if document.pointee.intSubset != nil || document.pointee.extSubset != nil {
            throw NotesLoadError("corrupt", "a notes document has no DOCTYPE")
        }
        guard let root = xmlDocGetRootElement(document) else { throw NotesLoadError("corrupt", "no root element") }
        let rootName = qualifiedName(root)
        guard rootName == "notes" else { throw NotesLoadError("corrupt", "the root element is <\(rootName)>, not <notes>") }
        guard let text = attribute(root, "version") else { throw NotesLoadError("corrupt", "notes: no version") }
        guard let version = Int(text), version >= 1 else { throw NotesLoadError("corrupt", "notes: version '\(text)' is not a positive integer") }
        // Before the schema, which only knows version 1: a newer file is not corrupt.
        guard version <= currentVersion else {
            throw NotesLoadError("unsupported-version", "notes: version \(version) is newer than \(currentVersion)")
        }
        try schema.get().validate(document, errors: errors)

        // The schema holds: <note> elements with text. One level, walked in a loop.
        var notes: [Note] = []
        var ids: Set<String> = []
        var child = root.pointee.children
        while let node = child {
            child = node.pointee.next
            guard node.pointee.type == XML_ELEMENT_NODE else { continue }
            let id = attribute(node, "id")
            if let id, !ids.insert(id).inserted { throw NotesLoadError("corrupt", "note id \(id) appears twice") }
            var text = ""
            var part = node.pointee.children
            while let p = part {
                if p.pointee.type == XML_TEXT_NODE || p.pointee.type == XML_CDATA_SECTION_NODE, let content = p.pointee.content {
                    text += String(cString: content)
                }
                part = p.pointee.next
            }
            notes.append(Note(id: id, created: attribute(node, "created"), text: text))
        }
        return notes
    }

    /// An attribute without a namespace (`xmlGetProp` would also take `x:version`, and a DTD's
    /// defaults).
    static func attribute(_ node: xmlNodePtr, _ name: String) -> String? {
        guard let value = xmlGetNoNsProp(node, name) else { return nil }
        defer { xmlFree(value) }
        return String(cString: value)
    }

    /// `prefix:name`, as the document spells it.
    static func qualifiedName(_ node: xmlNodePtr) -> String {
        let name = node.pointee.name.map { String(cString: $0) } ?? ""
        guard let prefix = node.pointee.ns?.pointee.prefix else { return name }
        return String(cString: prefix) + ":" + name
    }

    /// The line of the first tag with more than ``maxAttributesPerTag`` attributes (`=` signs
    /// outside quoted values), or nil. Text between tags is skipped with `memchr`, so a large
    /// note costs next to nothing.
    static func lineOfTagWithTooManyAttributes(_ bytes: [UInt8]) -> Int? {
        let offset: Int? = bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            let count = buffer.count
            func next(_ byte: UInt8, from index: Int) -> Int? {
                guard index < count, let found = memchr(base + index, Int32(byte), count - index) else { return nil }
                return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            }
            var i = 0
            while let open = next(UInt8(ascii: "<"), from: i) {
                i = open + 1
                var attributes = 0
                tag: while i < count {
                    let byte = base[i]
                    i += 1
                    switch byte {
                    case UInt8(ascii: ">"):
                        break tag
                    case UInt8(ascii: "\""), UInt8(ascii: "'"):
                        guard let close = next(byte, from: i) else { return nil }
                        i = close + 1
                    case UInt8(ascii: "="):
                        attributes += 1
                        if attributes > maxAttributesPerTag { return i }
                    default:
                        break
                    }
                }
            }
            return nil
        }
        return offset.map { offset in 1 + bytes[..<offset].count { $0 == UInt8(ascii: "\n") } }
    }
}

// MARK: - libxml2 plumbing

/// libxml2 must be initialized once before threads use it.
private let libxml2Initialized: Void = xmlInitParser()

/// The messages libxml2 reported during one call, in order.
final class ErrorLog {
    var messages: [String] = []
    var first: String? { messages.first }
}

/// Runs `body` with libxml2's errors on this thread going to a fresh log instead of stderr,
/// then puts the thread's previous handler back. libxml2 keeps its error handler per thread,
/// so concurrent loads on other threads are not affected.
func withLibXML2Errors<T>(_ body: (ErrorLog) throws(NotesLoadError) -> T) throws(NotesLoadError) -> T {
    let log = ErrorLog()
    let previousHandler = __xmlStructuredError()?.pointee
    let previousContext = __xmlStructuredErrorContext()?.pointee
    xmlSetStructuredErrorFunc(Unmanaged.passUnretained(log).toOpaque(), recordError)
    defer { xmlSetStructuredErrorFunc(previousContext, previousHandler) }
    return try withExtendedLifetime(log) { () throws(NotesLoadError) -> T in try body(log) }
}

/// libxml2's structured error callback: appends the message's first line, with its line
/// number, to the log.
private let recordError: xmlStructuredErrorFunc = { context, error in
    guard let context, let error else { return }
    let log = Unmanaged<ErrorLog>.fromOpaque(context).takeUnretainedValue()
    let text = error.pointee.message.map { String(cString: $0) } ?? ""
    // The first line: libxml2 adds the offending bytes on a second one.
    let message = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? "libxml2 error \(error.pointee.code)"
    log.messages.append(error.pointee.line > 0 ? "line \(error.pointee.line): \(message)" : message)
}

/// The notes schema compiled by libxml2.
final class CompiledSchema: @unchecked Sendable {
    // Sendable: libxml2 never changes a compiled schema; each validation has its own context.
    let schema: xmlSchemaPtr

    private init(_ schema: xmlSchemaPtr) { self.schema = schema }

    deinit { xmlSchemaFree(schema) }

    static func compile(_ xsd: [UInt8]) -> Result<CompiledSchema, NotesLoadError> {
        _ = libxml2Initialized
        return Result { () throws(NotesLoadError) in
            try withLibXML2Errors { errors throws(NotesLoadError) in
                // The memory parser context keeps a pointer to the buffer, not a copy, and reads
                // it in xmlSchemaParse: both happen while the buffer is pinned.
                let compiled: xmlSchemaPtr? = xsd.withUnsafeBufferPointer { buffer in
                    guard let base = buffer.baseAddress else { return nil }
                    return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { pointer -> xmlSchemaPtr? in
                        guard let parser = xmlSchemaNewMemParserCtxt(pointer, Int32(clamping: buffer.count)) else { return nil }
                        defer { xmlSchemaFreeParserCtxt(parser) }
                        xmlSchemaSetParserStructuredErrors(parser, recordError, Unmanaged.passUnretained(errors).toOpaque())
                        return xmlSchemaParse(parser)
                    }
                }
                guard let compiled else {
                    throw NotesLoadError("unreadable", "the notes schema does not compile: \(errors.first ?? "no schema")")
                }
                return CompiledSchema(compiled)
            }
        }
    }

    /// Throws `corrupt` with the first error when `document` breaks the schema.
    func validate(_ document: xmlDocPtr, errors: ErrorLog) throws(NotesLoadError) {
        guard let context = xmlSchemaNewValidCtxt(schema) else { throw NotesLoadError("unreadable", "no schema validation context") }
        defer { xmlSchemaFreeValidCtxt(context) }
        let before = errors.messages.count
        xmlSchemaSetValidStructuredErrors(context, recordError, Unmanaged.passUnretained(errors).toOpaque())
        let result = xmlSchemaValidateDoc(context, document)
        guard result != 0 else { return }
        let message = errors.messages.count > before ? errors.messages[before] : "invalid (libxml2 code \(result))"
        throw NotesLoadError("corrupt", "schema: \(message)")
    }
}
