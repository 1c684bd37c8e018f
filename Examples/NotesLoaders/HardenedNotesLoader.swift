import CorruptFuzzXML
import Foundation

/// The notes document loaded safely: corrupt-fuzz's safe libxml2 layer (no entity
/// substitution, no DTD loading, no network, libxml2's depth and size limits on), no DOCTYPE
/// allowed, a version switch, the notes schema, and the app's own checks, with a reason for
/// every failure.
public enum HardenedNotesLoader {
    /// The version this build reads; a newer one is `unsupported-version`.
    public static let currentVersion = 1
    /// No notes document is larger: a bigger file is refused before it is read.
    public static let maxFileSize = 16 << 20

    /// The compiled notes schema; if it cannot be compiled, every load fails with a reason
    /// (an app must not trap on its own resources either).
    static let schema = Result { () throws(XMLProblem) in try XMLSchemaValidator(xsd: Array(notesSchema.utf8), name: "notes.xsd") }

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
        let tree: XMLTree
        let doctype: String?
        do {
            (tree, doctype) = try XMLReader.readDocument(bytes)
        } catch {
            throw NotesLoadError("corrupt", "not well-formed: \(error)")
        }
        if doctype != nil { throw NotesLoadError("corrupt", "a notes document has no DOCTYPE") }
        guard tree.root.name == "notes" else { throw NotesLoadError("corrupt", "the root element is <\(tree.root.name)>, not <notes>") }
        guard let text = tree.root.attributes.first(where: { $0.name == "version" })?.value else {
            throw NotesLoadError("corrupt", "notes: no version")
        }
        guard let version = Int(text), version >= 1 else { throw NotesLoadError("corrupt", "notes: version '\(text)' is not a positive integer") }
        guard version <= currentVersion else {
            throw NotesLoadError("unsupported-version", "notes: version \(version) is newer than \(currentVersion)")
        }
        switch schema {
        case .success(let schema):
            if let problem = schema.problems(in: bytes).first { throw NotesLoadError("corrupt", problem.description) }
        case .failure(let problem):
            throw NotesLoadError("unreadable", "the notes schema does not compile: \(problem)")
        }
        var notes: [Note] = []
        var ids: Set<String> = []
        for case .element(let element) in tree.root.children {
            let id = element.attributes.first { $0.name == "id" }?.value
            if let id, !ids.insert(id).inserted { throw NotesLoadError("corrupt", "note id \(id) appears twice") }
            let text = element.children.map { child -> String in
                switch child {
                case .text(let t), .cdata(let t): t
                default: ""
                }
            }.joined()
            notes.append(Note(id: id, created: element.attributes.first { $0.name == "created" }?.value, text: text))
        }
        return notes
    }
}
