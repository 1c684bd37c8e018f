import CorruptFuzzCore
import CorruptFuzzXML
import Foundation
import SelfFuzzSupport
import Testing

// The XML validators against libxml2's own command-line parser: well-formedness (XMLFormat's
// validator) against `xmllint --noout` (reading the file, and with --memory reading it from
// memory as XMLReader does), and the XSD validator against `xmllint --noout --schema`. Every
// disagreement must fall in a class of the allow-list below, each with the reason we differ
// (Docs/Formats.md lists them).
//
//     swift test --filter ValidatorSweep

@Suite("Validator sweep: XML against xmllint")
struct XMLValidatorSweepTests {
    @Test("the well-formedness validator agrees with xmllint --noout, except for the documented classes")
    func wellFormedness() throws {
        let clock = ContinuousClock()
        let start = clock.now
        let inputs = try xmlSweepInputs(generator: nil, mutations: 2_500)
        let validator = XMLFormat().validator
        var tally = SweepTally(format: "xml well-formedness", inputs: inputs.count, allowed: xmlAllowList)
        let decided = decidedVerdicts(inputs, validator, &tally, oracles: ["xmllint", "xmllint --memory"])
        guard let results = try xmllintVerdicts(decided.map { inputs[$0.index] }, modes: ["xmllint", "xmllint-memory"]) else { return }
        for (k, (index, verdict)) in decided.enumerated() {
            compare(verdict, results[0][k], oracle: "xmllint", input: inputs[index], tally: &tally)
            compare(verdict, results[1][k], oracle: "xmllint --memory", input: inputs[index], tally: &tally)
        }
        tally.report(seconds: (clock.now - start).sweepSeconds)
        #expect(tally.agreements["xmllint", default: 0] > inputs.count * 9 / 10)
    }

    @Test("the XSD validator agrees with xmllint --schema, except for the documented classes", arguments: ["notes.xsd", "library.xsd"])
    func schema(name: String) throws {
        let clock = ContinuousClock()
        let start = clock.now
        let xsd = name == "notes.xsd" ? notesXSD : libraryXSD
        let generator = try XSDGenerator(xsd: xsd)
        let inputs = try xmlSweepInputs(generator: generator, mutations: 1_500)
        let schemaFile = FileManager.default.temporaryDirectory.appendingPathComponent("sweep-\(UUID().uuidString)-\(name)")
        try Data(xsd).write(to: schemaFile)
        defer { try? FileManager.default.removeItem(at: schemaFile) }
        let validator = try XMLSchemaValidator(xsd: xsd, name: name)
        var tally = SweepTally(format: "xml against \(name)", inputs: inputs.count, allowed: xmlAllowList)
        let decided = decidedVerdicts(inputs, validator, &tally, oracles: ["xmllint --schema"])
        guard let results = try xmllintVerdicts(decided.map { inputs[$0.index] }, modes: ["xmllint-schema"], extra: [schemaFile.path])?[0] else { return }
        for (k, (index, verdict)) in decided.enumerated() {
            compare(verdict, results[k], oracle: "xmllint --schema", input: inputs[index], tally: &tally)
        }
        tally.report(seconds: (clock.now - start).sweepSeconds)
        // Generated documents are valid, mutations mostly not: both sides are exercised.
        #expect(tally.agreements["xmllint --schema", default: 0] > inputs.count * 9 / 10)
        #expect(tally.verdicts["valid", default: 0] > 200 && tally.verdicts["invalid", default: 0] > 500, "\(tally.verdicts)")
    }

    /// Our verdicts on `inputs`, but for those beyond the safe reader's limits (libxml2's own
    /// depth limit, or more attributes on an element than libxml2 checks in reasonable time):
    /// those are undecided, not compared, and not given to xmllint either (100,000 attributes
    /// take it a minute).
    func decidedVerdicts(_ inputs: [SweepInput], _ validator: any Validator, _ tally: inout SweepTally, oracles: [String]) -> [(index: Int, verdict: Verdict)] {
        var decided: [(index: Int, verdict: Verdict)] = []
        for (index, input) in inputs.enumerated() {
            let verdict = validator.validate(input.bytes)
            guard case .undecided(let why) = verdict else {
                tally.count(verdict.isValid ? "valid" : "invalid")
                decided.append((index, verdict))
                continue
            }
            let limit =
                why.contains("Excessive depth")
                ? "nesting deeper than libxml2's 256 levels" : why.contains("attributes") ? "an element with over 10,000 attributes" : why
            for oracle in oracles { tally.skip(oracle, "undecided by us: beyond the safe reader's limits (\(limit))") }
        }
        return decided
    }

    /// Counts `verdict` against xmllint's `result` in `tally`.
    func compare(_ verdict: Verdict, _ result: [String: Any], oracle: String, input: SweepInput, tally: inout SweepTally) {
        let detail = result["detail"] as? String ?? ""
        guard let theirs = result["ok"] as? Bool else {
            tally.skip(oracle, "xmllint gave no verdict (\(detail))")
            return
        }
        let ours: Bool
        var message = ""
        switch verdict {
        case .valid: ours = true
        case .invalid(let violation):
            ours = false
            message = violation.description
        case .undecided:
            return
        case .error(let signature, let detail):
            tally.disagree(oracle, "validator error", family: signature, "\(input.name): \(detail)", bytes: input.bytes)
            return
        }
        if ours == theirs {
            tally.agree(oracle)
            return
        }
        let name = xmlClass(ours: ours, message: message, xmllint: detail, bytes: input.bytes)
        tally.disagree(
            oracle, name, family: ours ? String(detail.prefix(90)) : xmlRuleFamily(message),
            "\(input.name): ours: \(message.prefix(200)) | xmllint: \(detail.prefix(200))",
            bytes: input.bytes)
    }
}

/// Every class of disagreement the sweep accepts, and why we differ. A class the sweep meets that
/// is not here fails the test; Docs/Formats.md lists the same classes.
let xmlAllowList: [String: String] = [
    "we refuse: a NUL byte in a document of 8-bit units":
        "libxml2 (xmllint too, reading a file or memory) stops at a NUL byte after the root element and calls the document well-formed; a NUL is no XML character anywhere, and an app's save cut short by a zero-filled block ends that way, so the reader refuses it (XMLReader.checkNUL)"
]

/// The class of a disagreement, named as in the allow-list.
func xmlClass(ours: Bool, message: String, xmllint: String, bytes: [UInt8]) -> String {
    if !ours, message.contains("a NUL byte at offset") { return "we refuse: a NUL byte in a document of 8-bit units" }
    return (ours ? "we accept: " : "we refuse: ") + "unexplained"
}

/// A rule of libxml2's message, for counting: its error name when it has one.
func xmlRuleFamily(_ message: String) -> String {
    if let rule = message.firstMatch(of: /\[rule: ([A-Z_0-9]+)\]/) { return String(rule.1) }
    return String(message.replacing(/[0-9]+/, with: "#").prefix(90))
}

// MARK: - Inputs

/// The corpus's documents (without a generator) or documents generated from the schema (with
/// one), then `mutations` mutations of them: the XML mutator's tree and lexical mutations,
/// byte-level havoc, both; and every fourth entry of the catalogues of a few seeds (the hostile
/// documents up to 1 MB, the structure stage). Deterministic.
func xmlSweepInputs(generator: XSDGenerator?, mutations: Int) throws -> [SweepInput] {
    var inputs: [SweepInput] = []
    var rng = FuzzRNG(seed: 29)
    let mutator = XMLMutator(generator: generator)
    if generator == nil {
        for name in try FileManager.default.contentsOfDirectory(atPath: xmlCorpus.path).sorted() {
            inputs.append(SweepInput(name: "xml/\(name)", bytes: [UInt8](try Data(contentsOf: xmlCorpus.appendingPathComponent(name)))))
        }
        let notes = xmlCorpus.deletingLastPathComponent().appendingPathComponent("notes")
        for name in try FileManager.default.contentsOfDirectory(atPath: notes.path).sorted() where name.hasSuffix(".xml") {
            inputs.append(SweepInput(name: "notes/\(name)", bytes: [UInt8](try Data(contentsOf: notes.appendingPathComponent(name)))))
        }
    }
    for index in 0..<(generator == nil ? 40 : 300) {
        inputs.append(SweepInput(name: "generated-\(index)", bytes: mutator.generate(using: &rng)))
    }
    let seeds = inputs
    for index in 0..<mutations {
        inputs.append(.mutation(index, of: seeds, mutators: [mutator], using: &rng))
    }
    for seed in seeds.prefix(6) {
        let entries = mutator.catalogueEntries(of: seed.bytes, context: CatalogueContext(maxInputLength: 1 << 20))
        for (index, entry) in entries.enumerated() where index % 4 == 0 {
            let mutation = entry.mutation()
            inputs.append(SweepInput(name: "catalogue of \(seed.name): \(mutation.name)", bytes: mutation.bytes))
        }
    }
    return inputs
}

/// xmllint's verdicts on `inputs` in each of `modes` (of Scripts/validator-sweep.py); nil, with an
/// issue recorded, when xmllint or python3 is not on PATH.
func xmllintVerdicts(_ inputs: [SweepInput], modes: [String], extra: [String] = []) throws -> [[[String: Any]]]? {
    guard toolOnPath("xmllint") else {
        Issue.record("xmllint is not on PATH (libxml2-utils; Scripts/setup.sh installs it): the XML validators were not compared with libxml2's own parser")
        return nil
    }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("xml-sweep-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let paths = try SweepInput.write(inputs, into: folder, extension: "xml")
    var results: [[[String: Any]]] = []
    for mode in modes {
        guard let result = try runSweepScript(mode, paths, extra: extra) else { return nil }
        results.append(result)
    }
    return results
}
