import CorruptFuzzCore
import CorruptFuzzXML
import Foundation
import Testing

let xmlCorpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Corpus/xml")

@Suite("XML through libxml2")
struct XMLTests {
    @Test("real XML documents parse, and re-parse to the same tree after writing")
    func realDocumentsRoundTrip() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: xmlCorpus.path).sorted()
        #expect(files.count >= 8)
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: xmlCorpus.appendingPathComponent(file)))
            let tree = try XMLReader.read(bytes)
            let again = try XMLReader.read(XMLWriter.write(tree))
            #expect(again == tree, "\(file)")
        }
    }

    @Test("an attribute over libxml2's limit is refused before parsing; a document of megabytes reads as a small one does")
    func largeDocuments() throws {
        let attribute = Array(#"<a b=""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: XMLReader.maxTextLength + 1) + Array(#""/>"#.utf8)
        do {
            try XMLReader.checkWellFormed(attribute)
            Issue.record("an attribute over the limit was read")
        } catch {
            #expect(error.limitExceeded && error.message.contains("XML_MAX_TEXT_LENGTH"), "\(error)")
        }
        // Of a megabyte or more, libxml2 reads the document a few kilobytes at a time.
        for length in [16, 2 << 20] {
            let text = [UInt8](repeating: UInt8(ascii: "y"), count: length)
            let tree = try XMLReader.read(Array("<a>".utf8) + text + Array("</a>".utf8))
            #expect(tree.root.children == [.text(String(repeating: "y", count: length))])
            do {
                try XMLReader.checkWellFormed(Array("<a>".utf8) + text + Array("</b>".utf8))
                Issue.record("a mismatched end tag was accepted")
            } catch {
                #expect(
                    error.message.hasPrefix("Opening and ending tag mismatch: a line 1 and b") && error.message.hasSuffix("[rule: XML_ERR_TAG_NAME_MISMATCH]"),
                    "\(error)")
                #expect(!error.limitExceeded)
            }
        }
    }

    @Test("entities are never expanded and external ones never loaded when corrupt-fuzz reads seeds")
    func safeReading() throws {
        var laughs = #"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">"#
        for level in 1...9 {
            laughs += "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level == 1 ? "" : String(level - 1));", count: 10) + "\">"
        }
        laughs += "]><lolz>&lol9;</lolz>"
        // libxml2 either keeps the reference unexpanded or refuses the amplification outright;
        // both are safe, and both are fast.
        var outcome: Result<XMLTree, XMLProblem>?
        let cpu = threadCPUTime {
            do throws(XMLProblem) { outcome = .success(try XMLReader.read(Array(laughs.utf8))) } catch { outcome = .failure(error) }
        }
        #expect(cpu < .seconds(1))
        switch outcome {
        case .success(let tree)?: #expect(tree.root.children == [.text("&lol9;")])
        case .failure(let problem)?: #expect(problem.message.contains("entity"), "\(problem)")
        case nil: Issue.record("no outcome")
        }
        let hostname = (try? String(contentsOfFile: "/etc/hostname", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "no-hostname"
        let xxe = #"<?xml version="1.0"?><!DOCTYPE n [<!ENTITY x SYSTEM "file:///etc/hostname">]><n>&x;</n>"#
        let tree = try XMLReader.read(Array(xxe.utf8))
        #expect(tree.root.children == [.text("&x;")])
        #expect(!String(decoding: XMLWriter.write(tree), as: UTF8.self).contains(hostname))
    }

    @Test("XSD validation reports each error with its line and element path")
    func schemaValidation() throws {
        // The one notes schema: Corpus/schemas/notes.xsd.
        let validator = try XMLSchemaValidator(xsd: notesXSD, name: "notes.xsd")
        let valid = #"<notes version="1"><note id="1" created="2026-11-22T10:00:00Z">Milk</note></notes>"#
        #expect(validator.validate(Array(valid.utf8)) == .valid)
        let missingID = """
            <notes version="1">
              <note id="1" created="2026-11-22T10:00:00Z">Milk</note>
              <note created="2026-11-22T11:00:00Z">Eggs</note>
            </notes>
            """
        let problems = validator.problems(in: Array(missingID.utf8))
        #expect(problems.count == 1)
        #expect(problems.first?.line == 3)
        #expect(problems.first?.path == "/notes/note[2]")
        #expect(problems.first?.message.contains("'id' is required") == true, "\(problems)")
        #expect(validator.validate(Array("<notes".utf8)).isValid == false)
        #expect(validator.validate([]) == .invalid(Violation(.empty, "the file is empty")))
    }

    @Test("a NUL byte after the root element is not well-formed (libxml2 alone stops reading there); UTF-16 documents keep their zero bytes")
    func nulAfterRoot() throws {
        let validator = XMLFormat().validator
        let document = Array(#"<?xml version="1.0"?><a>x</a>"#.utf8)
        #expect(validator.validate(document) == .valid)
        for broken in [document + [0], document + [0] + Array("junk".utf8), document + [0x0A, 0, 0x0A]] {
            guard case .invalid(let violation) = validator.validate(broken) else {
                Issue.record("\(broken.suffix(6)) was not refused")
                continue
            }
            #expect(violation.message.hasSuffix("[rule: XML_ERR_INVALID_CHAR]"), "\(violation)")
        }
        // The same document in UTF-16 (little-endian, with a byte-order mark) is read by libxml2.
        let utf16: [UInt8] = [0xFF, 0xFE] + "<a>x</a>".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        #expect(validator.validate(utf16) == .valid)
    }

    @Test("a broken schema is an error")
    func brokenSchema() {
        #expect(throws: XMLProblem.self) {
            try XMLSchemaValidator(xsd: Array("<xs:schema xmlns:xs='http://www.w3.org/2001/XMLSchema'><xs:element/></xs:schema>".utf8))
        }
        #expect(throws: XMLProblem.self) { try XMLSchemaValidator(xsd: Array("not xml".utf8)) }
    }
}

@Suite("XML format: mutations and the hostile catalogue")
struct XMLFormatTests {
    let seed = Array(
        #"<?xml version="1.0" encoding="UTF-8"?><notes version="1"><note id="1" created="2026-11-22T10:00:00Z">Milk</note><note id="2" created="2026-11-22T11:00:00Z">Eggs</note></notes>"#
            .utf8)

    @Test("tree and lexical mutations are deterministic, varied, and keep the reader safe")
    func mutations() {
        let format = XMLFormat()
        func run(_ s: UInt64) -> [String] {
            var rng = FuzzRNG(seed: s)
            return (0..<400).compactMap { _ in format.xmlMutator.mutate(seed, using: &rng)?.name }
        }
        #expect(run(1) == run(1))
        let names = Set(run(1).map { String($0.split(separator: "@").first!.split(separator: " ").first!) })
        for expected in [
            "delete-element", "duplicate-element", "drop-attribute", "boundary-value", "unclosed-tag", "mismatched-tag", "invalid-utf8", "byte-order-mark",
            "nul-byte", "inject", "truncate-in-token",
        ] {
            #expect(names.contains(expected), "\(expected) missing from \(names.sorted())")
        }
        var rng = FuzzRNG(seed: 2)
        var invalid = 0
        for _ in 0..<300 {
            guard let m = format.xmlMutator.mutate(seed, using: &rng) else { continue }
            if !format.validator.validate(m.bytes).isValid { invalid += 1 }
        }
        #expect(invalid > 100)
    }

    @Test("the hostile catalogue is built from the seed's root element, and corrupt-fuzz reads it safely")
    func hostileCatalogue() throws {
        let catalogue = XMLMutator().catalogue(of: seed)
        let structureNames = Set(XMLStructureStage(tree: try XMLReader.read(seed)).entries().map(\.name))
        #expect(
            catalogue.map(\.name).filter { !structureNames.contains($0) } == [
                "external-entity-file", "external-dtd",
            ] + XMLMutator.nestingLadder.map { "nesting-\($0)" } + [
                "billion-laughs", "quadratic-blowup",
                "huge-text", "huge-attribute", "attributes-100000",
            ])
        for mutation in catalogue {
            let cpu = threadCPUTime { _ = XMLFormat().validator.validate(mutation.bytes) }
            #expect(cpu < .seconds(5), "\(mutation.name)")
        }
    }

    @Test("the structure stage changes every element, attribute and text of the seed in turn, and is interleaved with the hostile documents")
    func structureStage() throws {
        let entries = XMLMutator().catalogueEntries(of: seed, context: CatalogueContext(maxInputLength: 1 << 20))
        let names = entries.map(\.name)
        // Interleaved: a hostile document, then a structure entry.
        #expect(names.prefix(4) == ["external-entity-file", "drop-attribute /notes/@version", "external-dtd", "duplicate-attribute /notes/@version"])
        for expected in [
            "drop-element /notes/note[2]", "duplicate-element /notes/note[2]", "drop-attribute /notes/@version", "attribute=2 /notes/@version",
            "attribute=0 /notes/@version", "attribute=9223372036854775808 /notes/@version", "drop-attribute /notes/note[1]/@id",
            "duplicate-attribute /notes/note[2]/@id", "attribute=empty /notes/note[1]/@id", "attribute=9999-12-31T23:59:59Z /notes/note[1]/@created",
            "empty-text /notes/note[1]", "nested-markup-257 /notes/note[2]",
        ] {
            #expect(names.contains(expected), "\(expected) missing from \(names)")
        }
        // Each entry is the seed with one change: duplicating the second note gives two notes with id 2.
        let duplicated = try #require(entries.first { $0.name == "duplicate-element /notes/note[2]" }).mutation().bytes
        let tree = try XMLReader.read(duplicated)
        let ids = tree.root.children.compactMap { node -> String? in
            if case .element(let note) = node { return note.attributes.first { $0.name == "id" }?.value }
            return nil
        }
        #expect(ids == ["1", "2", "2"])
        let nested = try #require(entries.first { $0.name == "nested-markup-257 /notes/note[2]" }).mutation().bytes
        #expect(String(decoding: nested, as: UTF8.self).contains(String(repeating: "<b>", count: 257) + "Eggs"))
        #expect(XMLStructureStage.boundaries(of: "7") == ["8", "6", "0", "-1", "2147483648", "9223372036854775808"])
        #expect(XMLStructureStage.boundaries(of: "Milk").isEmpty)
    }

    @Test("with outside traps, the catalogue names the canary file and the listener's URLs, inside the seed's first leaf")
    func catalogueWithTraps() throws {
        let traps = OutsideTraps(
            canaryPath: "/tmp/canary-test/secret.txt", canaryToken: "token",
            dtdURL: "http://127.0.0.1:1/t/external.dtd", entityURL: "http://127.0.0.1:1/t/entity.txt")
        let catalogue = XMLMutator().catalogue(of: seed, context: CatalogueContext(traps: traps))
        let names = catalogue.map(\.name)
        #expect(names.contains("external-entity-url") && names.contains("external-parameter-entity"))
        let file = try #require(catalogue.first { $0.name == "external-entity-file" })
        let text = String(decoding: file.bytes, as: UTF8.self)
        #expect(text.contains(#"<!ENTITY xxe SYSTEM "file:///tmp/canary-test/secret.txt">"#))
        #expect(text.contains("&xxe;</note>"), "\(text)")
        let dtd = try #require(catalogue.first { $0.name == "external-dtd" })
        #expect(String(decoding: dtd.bytes, as: UTF8.self).contains(#"SYSTEM "http://127.0.0.1:1/t/external.dtd""#))
    }
}

/// The CPU time the calling thread spent in `body`: how much work it did, whatever else the
/// machine was doing (its wall-clock time grows with the load).
func threadCPUTime(_ body: () -> Void) -> Duration {
    func now() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
    let start = now()
    body()
    return now() - start
}
