import CorruptFuzzExamples
import CorruptFuzzTesting
import Foundation
import NotesLoaders
import Testing

/// The XML example, as a user would test an XML document loader: the notes format brings the
/// hostile-XML catalogue, with a canary file and a loopback listener for external entities.
@Suite("CorruptFuzzTesting: the notes (XML) loaders")
struct NotesLoaderTests {
    @Test("the hardened notes loader survives corruption")
    func hardened() {
        let report = assertLoaderSurvivesCorruption(
            "hardened-notes", format: NotesFormat(),
            options: .init(runs: 300, isolation: .inProcess, regressions: scratchRegressions("hardened-notes"))
        ) { data in
            try HardenedNotesLoader.load([UInt8](data))
        }
        #expect(report.executions >= 300)
    }

    @Test("the naive notes loader's XXE, entity expansion, deep-nesting crash and note without an id are found")
    func naive() {
        let report = verifyLoaderSurvivesCorruption(
            "naive-notes", format: NotesFormat(),
            options: .init(runs: 120, timeout: .milliseconds(500), regressions: scratchRegressions("naive-notes"), jobs: 2)
        ) { data in
            try NaiveNotesLoader.load([UInt8](data))
        }
        let signatures = report.findings.map { "\($0.kind.rawValue): \($0.signature)" }
        #expect(report.kinds.isSuperset(of: [.xxe, .crash, .silentAcceptance]), "\(signatures)")
        // The billion laughs: the loader expands it (a hang or the memory limit) or accepts what
        // libxml2 stopped expanding (the validator's entity-amplification error).
        #expect(
            report.kinds.contains(.hang) || report.kinds.contains(.oom) || signatures.contains { $0.hasSuffix("XML_ERR_ENTITY_LOOP") },
            "billion laughs: \(signatures)")
        #expect(signatures.contains { $0.hasPrefix("xxe: read a local file") }, "\(signatures)")
        #expect(signatures.contains { $0.hasPrefix("xxe: fetched a URL") }, "\(signatures)")
        #expect(signatures.contains { $0.contains("The attribute '…' is required but missing") }, "\(signatures)")
    }

    @Test("1,000 generated notes documents are valid, and the hardened loader reads every note of them")
    func generated() throws {
        let format = NotesFormat()
        var rng = FuzzRNG(seed: 4)
        for round in 0..<1000 {
            let bytes = format.notesMutator.generate(using: &rng)
            #expect(NotesFormat.validate(bytes) == nil, "round \(round): \(String(decoding: bytes, as: UTF8.self))")
            let notes = try HardenedNotesLoader.load(bytes)
            #expect(notes.count == bytes.split(separator: UInt8(ascii: "<")).filter { $0.starts(with: Array("note ".utf8)) }.count)
        }
    }

    @Test("the notes schema is one file: the NotesLoaders resource, which Corpus/schemas/notes.xsd links to")
    func schemaResource() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Corpus/schemas/notes.xsd").path
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: corpus) == "../../Examples/NotesLoaders/notes.xsd")
        let resource = try NotesSchema.bytes.get()
        #expect(resource == [UInt8](try #require(FileManager.default.contents(atPath: corpus))))
        #expect(String(decoding: resource, as: UTF8.self).contains(#"<xs:element name="notes">"#))
    }
}
