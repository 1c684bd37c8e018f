// Needs the XML trait (on by default).
#if XML
    import CorruptFuzzCore
    import CorruptFuzzXML
    import NotesLoaders

    /// The notes document as a fuzzing format: XML tree and lexical mutations and the hostile-XML
    /// catalogue (with the campaign's canary file and loopback listener), judged by a reference
    /// validator.
    ///
    /// The validator's checks, in order, with the reason each failure gets: no bytes → `empty`; over
    /// 16 MiB → `corrupt` (no notes document is that large); not well-formed (read safely: no entities, no DTD, no network, libxml2's limits) → `corrupt`; a
    /// DOCTYPE → `corrupt` (a notes document has none: that is where bombs and external entities
    /// live); a root other than `<notes>` → `corrupt`; `version` missing or not a positive integer
    /// → `corrupt`, above 1 → `unsupported-version` (before the schema, which only knows version
    /// 1); the notes schema (`NotesSchema`, the `notes.xsd` resource of `NotesLoaders` that
    /// `Corpus/schemas/notes.xsd` links to: every note has an `id` and a `created`
    /// date-time) → `corrupt` with line and element path; a note id used twice → `corrupt`.
    public struct NotesFormat: FuzzFormat {
        public let fileExtension = "xml"
        public let notesMutator = NotesMutator()

        public init() {}

        public var mutator: (any StructureAwareMutator)? { notesMutator }

        public var validator: any Validator {
            ClosureValidator(name: "notes reference validator") { (bytes: [UInt8]) in
                if case .failure(let problem) = Self.schema { return .undecided("the notes schema does not compile: \(problem)") }
                return Self.validate(bytes).map(Verdict.invalid) ?? .valid
            }
        }

        /// The compiled notes schema; a failure makes the validator undecided, never a trap.
        static let schema = Result { () throws(XMLProblem) in
            switch NotesSchema.bytes {
            case .success(let xsd): try XMLSchemaValidator(xsd: xsd, name: "notes.xsd")
            case .failure(let error): throw XMLProblem(line: 0, path: nil, message: error.message)
            }
        }

        /// What is wrong with a notes document.
        public static func validate(_ bytes: [UInt8]) -> Violation? {
            if let violation = Violation.intrinsic(for: bytes) { return violation }
            if bytes.count > HardenedNotesLoader.maxFileSize {
                return Violation(.corrupt, "\(bytes.count) bytes is more than a notes document's \(HardenedNotesLoader.maxFileSize)")
            }
            let document: (tree: XMLTree, doctype: String?)
            do throws(XMLProblem) {
                document = try XMLReader.readDocument(bytes)
            } catch {
                return error.violation
            }
            if let doctype = document.doctype { return Violation(.corrupt, "DOCTYPE \(doctype): a notes document has none") }
            let root = document.tree.root
            guard root.name == "notes" else { return Violation(.corrupt, "<\(root.name)> is not <notes>", at: "root") }
            guard let text = root.attributes.first(where: { $0.name == "version" })?.value else { return Violation(.corrupt, "missing", at: "/notes/@version") }
            guard let version = Int(text), version >= 1 else { return Violation(.corrupt, "'\(text)' is not a positive integer", at: "/notes/@version") }
            if version > HardenedNotesLoader.currentVersion {
                return Violation(.unsupportedVersion, "\(version) is newer than \(HardenedNotesLoader.currentVersion)", at: "/notes/@version")
            }
            switch schema {
            case .success(let schema):
                if let problem = schema.problems(in: bytes).first { return problem.violation }
            case .failure(let problem):
                return Violation(.corrupt, "the notes schema does not compile, so the document cannot be checked: \(problem)")
            }
            var ids: Set<String> = []
            for case .element(let note) in root.children {
                guard let id = note.attributes.first(where: { $0.name == "id" })?.value else { continue }
                if !ids.insert(id).inserted { return Violation(.corrupt, "the id is used twice", at: "/notes/note[@id=\(id)]") }
            }
            return nil
        }
    }

    /// The notes document's corruptions: every XML mutation and hostile document, plus the
    /// version and id cases whose reason is certain; new documents drawn from the notes schema.
    public struct NotesMutator: StructureAwareMutator {
        let xml = XMLMutator()
        let generator = try? XSDGenerator(xsd: NotesSchema.bytes.get())

        public init() {}

        /// A document drawn from the notes schema, with the rules the schema does not state: a
        /// version, and ids numbered in order.
        public func generate(using rng: inout FuzzRNG) -> [UInt8] {
            guard let generator else { return Array(Self.fallbackDocument.utf8) }
            var root = generator.generate(using: &rng).root
            root.attributes.removeAll { $0.name == "version" }
            root.attributes.insert(("version", "1"), at: 0)
            var id = 0
            for (index, child) in root.children.enumerated() {
                guard case .element(var note) = child else { continue }
                id += 1
                for a in note.attributes.indices where note.attributes[a].name == "id" { note.attributes[a].value = String(id) }
                root.children[index] = .element(note)
            }
            return XMLWriter.write(XMLTree(root: root))
        }
        /// A valid notes document, should the schema's generator be unavailable.
        static let fallbackDocument =
            #"<?xml version="1.0" encoding="UTF-8"?><notes version="1"><note id="1" created="2026-11-22T10:00:00Z">text</note></notes>"#

        public var usesOutsideTraps: Bool { true }
        public func catalogue(of bytes: [UInt8], context: CatalogueContext) -> [StructuredMutation] {
            xml.catalogue(of: bytes, context: context) + versionCatalogue(of: bytes)
        }
        public func catalogueEntries(of bytes: [UInt8], context: CatalogueContext) -> [CatalogueEntry] {
            xml.catalogueEntries(of: bytes, context: context) + versionCatalogue(of: bytes).map(CatalogueEntry.init)
        }
        public func mutate(_ bytes: [UInt8], using rng: inout FuzzRNG) -> StructuredMutation? { xml.mutate(bytes, using: &rng) }

        /// The version made future (`unsupported-version`), 0, negative, not a number and missing
        /// (`corrupt`), and a note without an id (`corrupt`).
        func versionCatalogue(of bytes: [UInt8]) -> [StructuredMutation] {
            guard let tree = try? XMLReader.read(bytes), tree.root.name == "notes" else { return [] }
            var out: [StructuredMutation] = []
            func add(_ name: String, _ reason: Reason, _ because: String, _ change: (inout XMLTree.Element) -> Void) {
                var root = tree.root
                change(&root)
                out.append(
                    StructuredMutation(bytes: XMLWriter.write(XMLTree(root: root)), name: name, expectation: Expectation(reason: reason, because: because)))
            }
            func setVersion(_ value: String?) -> (inout XMLTree.Element) -> Void {
                { root in
                    root.attributes.removeAll { $0.name == "version" }
                    if let value { root.attributes.insert(("version", value), at: 0) }
                }
            }
            add("version=future", .unsupportedVersion, "a file from a newer app version must not be called corrupt", setVersion("2"))
            add("version=0", .corrupt, "version 0 was never written", setVersion("0"))
            add("version=-1", .corrupt, "a negative version was never written", setVersion("-1"))
            add("version=missing", .corrupt, "a notes document without a version cannot be read safely", setVersion(nil))
            if tree.root.children.contains(where: { if case .element = $0 { true } else { false } }) {
                add("note-without-id", .corrupt, "every note has an id") { root in
                    for (index, child) in root.children.enumerated() {
                        guard case .element(var note) = child else { continue }
                        note.attributes.removeAll { $0.name == "id" }
                        root.children[index] = .element(note)
                        return
                    }
                }
            }
            return out
        }
    }
#endif
