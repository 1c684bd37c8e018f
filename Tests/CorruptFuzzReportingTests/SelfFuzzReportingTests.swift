import CorruptFuzzCore
import CorruptFuzzReporting
import CorruptFuzzRunner
import SelfFuzzSupport
import Foundation
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

// "Fuzz the engine's own parts with themselves", for the JUnit writer: reports whose every
// string is hostile (control characters, NUL, `]]>`, markup, U+FFFE/U+FFFF, combining marks,
// very long text) and whose captured output is invalid UTF-8 must still render as well-formed
// XML that validates against Jenkins' strict junit-10.xsd (with xmllint, when it is on PATH,
// as `ReportTests` does), and keep their counts consistent.
//
// Cases, seeds and the long mode work as in Tests/CorruptFuzzCoreTests/SelfFuzzTests.swift:
// `CORRUPT_FUZZ_SELF_FUZZ_SECONDS=N` runs each property with fresh seeds for N seconds, and
// `CORRUPT_FUZZ_SELF_FUZZ_SEED=<seed>` replays one case.

// MARK: - Hostile values

extension FuzzRNG {
    fileprivate mutating func hostileScalar() -> Unicode.Scalar {
        func scalar(_ value: Int) -> Unicode.Scalar { Unicode.Scalar(UInt32(value)) ?? "?" }
        switch below(10) {
        case 0: return scalar(0x20 + below(0x5F))
        case 1: return scalar(pick([below(0x20), 0x7F + below(0x21)]))  // C0 (NUL too) and C1 controls
        case 2: return pick(["<", ">", "&", "\"", "'", "]", "[", "!", "-", "?", "=", ";", "#"])
        case 3:
            // Characters XML 1.0 forbids or discourages, and ones that join graphemes.
            return scalar(
                pick([
                    0xFFFE, 0xFFFF, 0xFFFD, 0xFEFF, 0xFDD0, 0xFDEF, 0x1FFFE, 0x10FFFF, 0xE000, 0x85, 0x2028, 0x2029,
                    0x200D, 0x202E, 0x0600, 0x1F1E6 + below(26), 0x1F3FB, 0xD7FF, 0x7F, 0x9F,
                ]))
        case 4: return scalar(0x300 + below(0x70))  // combining marks
        case 5: return pick(["\n", "\r", "\t", " ", "\u{B}", "\u{C}", "\u{0}"])
        case 6:
            let value = below(0x11_0000)
            return (0xD800...0xDFFF).contains(value) ? "\u{FFFD}" : scalar(value)
        case 7: return scalar(0x1F300 + below(0x300))
        case 8: return scalar(0x4E00 + below(0x100))
        default: return scalar(0x80 + below(0x700))
        }
    }

    /// A hostile string: empty now and then, very long now and then.
    fileprivate mutating func hostileString() -> String {
        let fragments = [
            "]]>", "<![CDATA[", "]]", "<!--", "-->", "&amp;", "&#0;", "&#x1;", "&lt;", "\"'", "</testsuite>", "<failure>",
            "\u{0}", "\r\n", "\u{1B}[31m", "\u{FFFE}", "\u{FFFF}", "e\u{301}", "👩‍💻", "\\u{7}", "\\xff", "?>", "<?xml",
        ]
        let count: Int
        var repeats = 1
        switch below(10) {
        case 0: count = 0
        case 1: count = 1
        case 2:
            // Long: a hostile chunk over and over (building it scalar by scalar is slow in debug).
            count = 20 + below(300)
            repeats = oneIn(6) ? 100 + below(300) : 2 + below(10)
        default: count = below(40)
        }
        let text = hostileText(scalars: count, fragments: fragments, fragmentOneIn: 5) { $0.hostileScalar() }
        return repeats > 1 ? String(repeating: text, count: repeats) : text
    }

    fileprivate mutating func maybeHostileString() -> String? { oneIn(3) ? nil : hostileString() }

    /// Captured output: invalid UTF-8 (lone continuation bytes, overlong forms, surrogates,
    /// bytes over F4, sequences cut short), NUL, escapes, `]]>`, and valid UTF-8 of characters
    /// XML forbids.
    fileprivate mutating func hostileBytes() -> [UInt8] {
        let pieces: [[UInt8]] = [
            [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],
            [0xF4, 0x90, 0x80, 0x80], [0xF5], [0xFF], [0xFE], [0xC3], [0xE2, 0x9C], [0xF0, 0x9F, 0x98],
            [0x00], [0x1B, 0x5B, 0x33, 0x31, 0x6D], Array("]]>".utf8), Array("<oops> & \"".utf8), [0x0D, 0x0A], [0x0D],
            [0xEF, 0xBF, 0xBE], [0xEF, 0xBF, 0xBF], [0xC2, 0x85], [0xEF, 0xBB, 0xBF], Array("✓ tail".utf8),
        ]
        let count = [0, 1, below(20), below(200), 200 + below(300)][below(5)]
        var bytes: [UInt8] = []
        while bytes.count < count {
            if oneIn(3) {
                bytes.append(UInt8(truncatingIfNeeded: next()))
            } else {
                bytes += pick(pieces)
            }
        }
        // Longer than the 2 KiB the report keeps, now and then.
        return count >= 200 && oneIn(3) ? Array(repeating: bytes, count: 20).flatMap { $0 } : bytes
    }

    fileprivate mutating func seconds() -> Double {
        switch below(8) {
        case 0: return 0
        case 1: return -Double(below(1000)) / 7
        case 2: return .nan
        case 3: return Double(below(1_000_000_000)) / 1000
        case 4: return 0.0004999
        case 5: return 1e9 + Double(below(1000)) / 3
        default: return Double(below(100_000)) / Double(1 + below(1000))
        }
    }

    fileprivate mutating func outcome() -> Outcome {
        switch below(6) {
        case 0: return .accepted(digest: hostileString())
        case 1: return .acceptedInvalid(message: hostileString())
        case 2: return .rejected(reason: maybeHostileString().map { Reason($0) }, exitCode: Int32(truncatingIfNeeded: next()), message: maybeHostileString())
        case 3: return .crashed(signal: Int32(truncatingIfNeeded: next()), frames: (0..<below(5)).map { _ in hostileString() }, message: maybeHostileString())
        case 4: return .hung(milliseconds: below(1_000_000))
        default: return .outOfMemory(peakKilobytes: Int64(truncatingIfNeeded: next()), message: maybeHostileString())
        }
    }

    fileprivate mutating func execution() -> Execution {
        Execution(outcome: outcome(), stdout: hostileBytes(), stderr: hostileBytes(), microseconds: Int64(truncatingIfNeeded: next()))
    }

    fileprivate mutating func verdict() -> Verdict? {
        switch below(5) {
        case 0: return nil
        case 1: return .valid
        case 2: return .invalid(Violation(maybeHostileString().map { Reason($0) }, hostileString()))
        case 3: return .undecided(hostileString())
        default: return .error(signature: hostileString(), detail: hostileString())
        }
    }

    fileprivate mutating func findingRecord() -> FindingRecord {
        let input = TestInput(
            bytes: oneIn(5) ? nil : hostileBytes(), mutations: (0..<below(4)).map { _ in hostileString() }, seedName: hostileString(),
            expectation: oneIn(2) ? nil : Expectation(reason: Reason(hostileString()), because: hostileString()))
        let finding = Finding(
            kind: pick(FindingKind.allCases), signature: hostileString(), detail: hostileString(), input: input,
            execution: execution(), verdict: verdict())
        return FindingRecord(
            finding: finding, hits: below(1_000_000), firstExecution: below(1_000_000_000), firstSeconds: seconds(),
            minimized: oneIn(2) ? nil : hostileBytes(), minimizedExecution: oneIn(2) ? nil : execution(), minimizationTests: below(10_000))
    }

    fileprivate mutating func suite() -> RunReport.Suite {
        var configuration = FuzzConfiguration()
        configuration.seed = next()
        var result = CampaignResult(
            targetName: hostileString(), targetCommand: hostileString(), validatorName: maybeHostileString(),
            configuration: configuration, seedNames: (0..<below(5)).map { _ in hostileString() })
        result.executions = below(1_000_000_000)
        result.fuzzSeconds = oneIn(4) ? 0 : Double(1 + below(1_000_000)) / 1000
        result.totalSeconds = seconds()
        result.stopReason = pick([.runs, .duration, .interrupted, .error, .completed, .imported, .crashStates(checked: below(1000), operations: below(100))])
        result.targetGivesReasons = oneIn(2)
        result.toolError = maybeHostileString()
        if oneIn(2) {
            result.outsideTraps = OutsideTraps(
                canaryPath: hostileString(), canaryToken: hostileString(), dtdURL: maybeHostileString(), entityURL: maybeHostileString())
        }
        // Sometimes many findings of one kind, so that the "and N more" failure is written.
        let count = [0, 1, below(8), below(30)][below(4)]
        let crowded = pick(FindingKind.allCases)
        result.findings = (0..<count).map { _ in
            var record = findingRecord()
            if oneIn(2) { record.finding.kind = crowded }
            return record
        }
        var suite = RunReport.Suite(
            result: result,
            replay: ReplayDescription(tool: hostileString(), targetCommand: hostileString(), selection: [["--validator", hostileString()]]))
        // Fewer or more reproducers than findings, too.
        suite.reproducers = (0..<max(0, count + below(5) - 2)).map { _ in
            RunReport.SavedReproducer(minimized: maybeHostileString(), original: maybeHostileString(), replayCommand: hostileString())
        }
        return suite
    }

    fileprivate mutating func report() -> RunReport {
        RunReport(
            runID: hostileString(), folder: hostileString(), suites: (0..<[0, 1, 1, 2, 3][below(5)]).map { _ in suite() },
            timestamp: hostileString(), hostname: hostileString())
    }
}

// MARK: - Reading the XML back

/// What XMLParser saw: the elements with their attributes and text, or the parse error.
final class JUnitDocument: NSObject, XMLParserDelegate {
    final class Element {
        let name: String
        let attributes: [String: String]
        var children: [Element] = []
        var text = ""
        init(name: String, attributes: [String: String]) {
            self.name = name
            self.attributes = attributes
        }
        func all(_ name: String) -> [Element] { children.filter { $0.name == name } }
    }

    private(set) var root: Element?
    private var stack: [Element] = []
    private(set) var error: String?

    /// Parses `xml`; nil with `error` set when it is not well-formed.
    static func parse(_ xml: String) -> JUnitDocument {
        let document = JUnitDocument()
        // A stream, not Data: XMLParser(data:) hands libxml2 the whole document at once, and
        // libxml2 then refuses a document over 10 MB ("Huge input lookup", error 1).
        let parser = XMLParser(stream: InputStream(data: Data(xml.utf8)))
        parser.delegate = document
        if !parser.parse() {
            let line = parser.lineNumber, column = parser.columnNumber
            let lines = xml.split(separator: "\n", omittingEmptySubsequences: false)
            let context = line >= 1 && line <= lines.count ? String(reflecting: String(lines[line - 1].prefix(300))) : "?"
            document.error = "not well-formed at line \(line), column \(column): \(parser.parserError.map { "\($0)" } ?? "unknown error"); the line: \(context)"
        }
        return document
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        let element = Element(name: elementName, attributes: attributes)
        if let parent = stack.last { parent.children.append(element) } else { root = element }
        stack.append(element)
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        stack.removeLast()
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        stack.last?.text += string
    }
}

/// What a string reads as once it is in the XML: XMLText replaces the characters XML 1.0
/// cannot hold (C0 controls other than tab, LF and CR; C1 controls; U+FFFE and U+FFFF) by
/// `\u{…}` escapes and keeps everything else.
private func readBack(_ text: String) -> String {
    var out = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        let v = scalar.value
        if (v < 0x20 && v != 0x9 && v != 0xA && v != 0xD) || (0x7F...0x9F).contains(v) || v == 0xFFFE || v == 0xFFFF {
            out.append(contentsOf: "\\u{\(String(v, radix: 16))}".unicodeScalars)
        } else {
            out.append(scalar)
        }
    }
    return String(out)
}

/// Whether `scalar` is a character XML 1.0 allows.
private func isXMLChar(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
    default: false
    }
}

private func sameBytes(_ a: String, _ b: String) -> Bool { Array(a.utf8) == Array(b.utf8) }

private func holds(_ text: String, _ part: String) -> Bool { Oracle.occurs(Array(part.utf8), in: Array(text.utf8)) || part.isEmpty }

/// Validates many documents against junit-10.xsd with one xmllint run; returns the names of
/// the files that fail, with xmllint's messages. Nil when xmllint is not on PATH.
private func xmllintFailures(_ documents: [(name: String, xml: String)]) throws -> [String: String]? {
    guard xmllintPath != nil, !documents.isEmpty else { return xmllintPath == nil ? nil : [:] }
    let schema = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/junit-10.xsd").path
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("selffuzz-junit-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    var paths: [String: String] = [:]
    for (name, xml) in documents {
        let file = folder.appendingPathComponent("\(name).xml")
        try Data(xml.utf8).write(to: file)
        paths[file.path] = name
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["xmllint", "--noout", "--schema", schema] + paths.keys.sorted()
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("selffuzz-xmllint-\(UUID().uuidString).txt")
    _ = FileManager.default.createFile(atPath: output.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: output) }
    let handle = try FileHandle(forWritingTo: output)
    process.standardError = handle
    process.standardOutput = handle
    try process.run()
    process.waitUntilExit()
    try handle.close()
    let text = String(decoding: (try? Data(contentsOf: output)) ?? Data(), as: UTF8.self)
    var failures: [String: String] = [:]
    for (path, name) in paths {
        let mentions = text.split(separator: "\n").filter { $0.hasPrefix(path) }
        if !mentions.contains(where: { $0.hasSuffix(" validates") }) {
            failures[name] = mentions.prefix(5).map { String($0.prefix(400)) }.joined(separator: "\n")
        }
    }
    if process.terminationStatus != 0, failures.isEmpty { failures["xmllint"] = "exit \(process.terminationStatus): \(text.prefix(2000))" }
    return failures
}

private let xmllintPath: String? = {
    for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let path = "\(folder)/xmllint"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}()

// MARK: - The properties

@Suite("SelfFuzz: the JUnit writer under hostile reports")
struct SelfFuzzReportingTests {
    @Test("junit.xml from hostile reports is well-formed, valid against junit-10.xsd, and consistent")
    func junitFromHostileReports() throws {
        var pending: [(name: String, xml: String, seed: UInt64)] = []
        var validated = 0
        SelfFuzz.run("junit", iterations: 300, batch: 100) { rng, seed, v in
            let report = rng.report()
            let reporter = JUnitXMLReporter(maxFullFailuresPerCheck: [Int.min, -1, 0, 1, 2, 5, 20][rng.below(7)])
            let xml = reporter.render(report)
            check(xml, report: report, reporter: reporter, &v)
            if !v.failed { pending.append((name: "seed-\(seed)", xml: xml, seed: seed)) }
        } flush: {
            defer { pending.removeAll() }
            do {
                guard let failures = try xmllintFailures(pending.map { ($0.name, $0.xml) }) else { return [] }
                validated += pending.count
                return pending.compactMap { document in
                    failures[document.name].map { (seed: document.seed, message: "not valid against junit-10.xsd:\n\($0)") }
                } + (failures["xmllint"].map { [(seed: 0, message: "xmllint failed: \($0)")] } ?? [])
            } catch {
                return [(seed: pending.first?.seed ?? 0, message: "could not run xmllint: \(error)")]
            }
        }
        if xmllintPath == nil {
            print("self-fuzz: junit: xmllint is not on PATH: well-formedness checked, schema validation skipped")
        } else {
            print("self-fuzz: junit: \(validated) documents validated with xmllint")
        }
    }

    @Test("junit.xml with every string set to the same hostile text, one text at a time")
    func junitFixedHostileTexts() throws {
        let texts = [
            "", "]]>", "]]]]>>", "<![CDATA[x]]>", "\u{0}", "\u{1}\u{7}\u{8}\u{B}\u{C}\u{1B}\u{1F}", "\u{7F}\u{80}\u{85}\u{9F}",
            "\u{FFFE}\u{FFFF}\u{FFFD}", String(String.UnicodeScalarView([0xFDD0, 0xFDEF, 0x1FFFE, 0x10FFFF].compactMap(Unicode.Scalar.init))), "\r\n\r\t\n",
            "&amp;&#0;&lt;<>\"'", "</testsuites>",
            "e\u{301}\u{302}\u{303}", String(repeating: "\u{301}", count: 10_000), String(repeating: "]]>", count: 3000),
            String(repeating: "]]>", count: 20_000),
            String(repeating: "x", count: 1 << 20), "\u{202E}\u{200D}\u{FEFF}", "--><!--", "?><?xml version=\"1.0\"?>",
        ]
        var documents: [(name: String, xml: String)] = []
        var v = SelfFuzz.Violations()
        for (i, text) in texts.enumerated() {
            // Long texts go in the target name only (it is repeated in every test case's
            // classname), or the document grows to hundreds of megabytes.
            let other = text.utf8.count > 10_000 ? "x" : text
            var configuration = FuzzConfiguration()
            configuration.seed = .max
            var result = CampaignResult(targetName: text, targetCommand: other, validatorName: other, configuration: configuration, seedNames: [other, other])
            result.toolError = other
            result.totalSeconds = 1.5
            let bytes = Array(other.utf8) + [0xFF, 0x00, 0xC0, 0x80, 0xED, 0xA0, 0x80, 0xEF, 0xBF, 0xBE]
            let input = TestInput(bytes: bytes, mutations: [other], seedName: other, expectation: Expectation(reason: Reason(other), because: other))
            result.findings = FindingKind.allCases.flatMap { kind in
                (0..<3).map { _ in
                    FindingRecord(
                        finding: Finding(
                            kind: kind, signature: other, detail: other, input: input,
                            execution: Execution(outcome: .crashed(signal: 11, frames: [other], message: other), stdout: bytes, stderr: bytes),
                            verdict: .invalid(Violation(Reason(other), other))),
                        hits: 2, firstExecution: 1, firstSeconds: 0.5, minimized: bytes,
                        minimizedExecution: Execution(outcome: .acceptedInvalid(message: other), stdout: bytes, stderr: bytes))
                }
            }
            var suite = RunReport.Suite(result: result, replay: ReplayDescription(tool: other, targetCommand: other, selection: [["--format", other]]))
            suite.reproducers = result.findings.map { _ in .init(minimized: other, original: other, replayCommand: other) }
            let report = RunReport(runID: other, folder: other, suites: [suite], timestamp: other, hostname: other)
            let reporter = JUnitXMLReporter(maxFullFailuresPerCheck: 2)
            let xml = reporter.render(report)
            check(xml, report: report, reporter: reporter, &v)
            #expect(!v.failed, "text #\(i) \(String(reflecting: String(text.prefix(80)))): \(v.messages.joined(separator: "\n"))")
            v = .init()
            documents.append((name: "fixed-\(i)", xml: xml))
        }
        if let failures = try xmllintFailures(documents) {
            #expect(failures.isEmpty, "not valid against junit-10.xsd: \(failures.sorted { $0.key < $1.key })")
        }
    }

    @Test("XMLText: escape leaves only XML 1.0 characters and no markup; decode keeps valid UTF-8 and escapes the rest")
    func xmlText() {
        SelfFuzz.run("xml-text", iterations: 400) { rng, _, v in
            let text = rng.hostileString()
            for attribute in [false, true] {
                let escaped = XMLText.escape(text, attribute: attribute)
                v.check(
                    escaped.unicodeScalars.allSatisfy(isXMLChar),
                    "escape(attribute: \(attribute)) left a character XML 1.0 forbids: \(String(reflecting: escaped.prefix(200)))")
                v.check(
                    !escaped.unicodeScalars.contains { $0 == "<" || $0 == ">" || $0 == "\r" },
                    "escape(attribute: \(attribute)) left markup: \(String(reflecting: escaped.prefix(200)))")
                if attribute {
                    v.check(
                        !escaped.unicodeScalars.contains { $0 == "\"" || $0 == "\n" || $0 == "\t" }, "escape(attribute: true) left a quote or a raw line break")
                }
            }
            // Valid UTF-8 decodes to itself.
            v.check(sameBytes(XMLText.decode(Array(text.utf8)), text), "decode changed valid UTF-8: \(String(reflecting: text.prefix(200)))")
            // Any bytes: the result only holds the valid scalars of the input and \xNN escapes;
            // each invalid byte becomes exactly one escape.
            let bytes = rng.hostileBytes()
            let decoded = XMLText.decode(bytes)
            v.check(
                !decoded.unicodeScalars.contains("\u{FFFD}") || Oracle.occurs([0xEF, 0xBF, 0xBD], in: bytes),
                "decode produced U+FFFD from bytes that hold none: \(bytes.prefix(64))")
            v.check(
                decoded.unicodeScalars.count >= String(decoding: bytes, as: UTF8.self).unicodeScalars.count,
                "decode lost bytes: \(bytes.prefix(64))")
        }
    }

    /// The properties of one rendered report.
    private func check(_ xml: String, report: RunReport, reporter: JUnitXMLReporter, _ v: inout SelfFuzz.Violations) {
        // Searched for as bytes: Foundation's contains(_:) misses "]]>" when a combining mark follows.
        v.check(!holds(xml, "]]>"), "the XML holds ]]>")
        v.check(xml.unicodeScalars.allSatisfy(isXMLChar), "the XML holds a character XML 1.0 forbids")
        let document = JUnitDocument.parse(xml)
        if let error = document.error {
            v.check(false, error)
            return
        }
        guard let root = document.root, root.name == "testsuites" else {
            v.check(false, "the root element is \(document.root?.name ?? "missing"), not testsuites")
            return
        }
        let suites = root.all("testsuite")
        v.check(suites.count == report.suites.count, "\(suites.count) testsuite elements for \(report.suites.count) suites")
        var totalTests = 0, totalFailures = 0, totalErrors = 0
        for (element, suite) in zip(suites, report.suites) {
            let result = suite.result
            let cases = element.all("testcase")
            let failing = cases.filter { !$0.all("failure").isEmpty }.count
            let erring = cases.filter { !$0.all("error").isEmpty }.count
            let skipped = cases.filter { !$0.all("skipped").isEmpty }.count
            totalTests += cases.count
            totalFailures += failing
            totalErrors += erring
            let name = "suite \(String(reflecting: String(result.targetName.prefix(60))))"
            v.check(
                element.attributes["tests"] == "\(cases.count)", "\(name): tests=\(element.attributes["tests"] ?? "-") but \(cases.count) testcase elements")
            v.check(
                element.attributes["failures"] == "\(failing)", "\(name): failures=\(element.attributes["failures"] ?? "-") but \(failing) failing testcases")
            v.check(element.attributes["errors"] == "\(erring)", "\(name): errors=\(element.attributes["errors"] ?? "-") but \(erring) testcases with an error")
            v.check(element.attributes["skipped"] == "\(skipped)", "\(name): skipped=\(element.attributes["skipped"] ?? "-") but \(skipped) skipped testcases")
            // A test case per check the run made, and per kind of finding it has beyond them.
            let expectedKinds = FindingKind.allCases.filter { kind in
                result.checkedKinds.contains(kind) || result.findings.contains { $0.finding.kind == kind }
            }
            v.check(cases.count >= expectedKinds.count, "\(name): \(cases.count) testcases, fewer than one per check")
            // Attributes read back as the strings they were made from.
            for (attribute, expected) in [("name", result.targetName), ("hostname", report.hostname), ("timestamp", report.timestamp)] {
                v.check(
                    sameBytes(element.attributes[attribute] ?? "", readBack(expected)),
                    "\(name): attribute \(attribute) reads \(String(reflecting: (element.attributes[attribute] ?? "-").prefix(120))), not \(String(reflecting: readBack(expected).prefix(120)))"
                )
            }
            let properties = Dictionary(
                element.all("properties").flatMap { $0.all("property") }.map { ($0.attributes["name"] ?? "", $0.attributes["value"] ?? "") },
                uniquingKeysWith: { a, _ in a })
            for (property, expected) in [("target", result.targetCommand), ("stop-reason", result.stopReason.description), ("report-folder", report.folder)] {
                v.check(sameBytes(properties[property] ?? "", readBack(expected)), "\(name): property \(property) does not read back")
            }
            // Each new finding of a check is a failing test case of its own, up to the limit, and
            // the rest share one more; each expected one is a skipped case; a check without
            // findings is one case named by its kind.
            for kind in expectedKinds {
                let records = result.findings.filter { $0.finding.kind == kind }
                let new = records.filter { suite.expectation(for: $0.finding.key) == nil }
                // By bytes: a signature that starts with a combining mark joins the space before it.
                let ofKind = cases.filter { Array(($0.attributes["name"] ?? "").utf8).starts(with: Array((kind.rawValue + ": ").utf8)) }
                guard !records.isEmpty else {
                    v.check(cases.contains { $0.attributes["name"] == kind.rawValue }, "\(name): no testcase for \(kind.rawValue)")
                    continue
                }
                let limit = reporter.maxFullFailuresPerCheck
                let expected = min(new.count, limit) + (new.count > limit ? 1 : 0)
                let failing = ofKind.filter { !$0.all("failure").isEmpty }
                v.check(
                    failing.count == expected, "\(name): \(kind.rawValue) has \(failing.count) failing cases for \(new.count) new findings (limit \(limit))")
                let skippedCases = ofKind.filter { !$0.all("skipped").isEmpty }
                v.check(
                    skippedCases.count == records.count - new.count,
                    "\(name): \(kind.rawValue) has \(skippedCases.count) skipped cases for \(records.count - new.count) expected findings")
                for (testcase, record) in zip(failing, new.prefix(limit)) {
                    v.check(
                        sameBytes(testcase.attributes["name"] ?? "", readBack(JUnitXMLReporter.caseName(kind, record.finding.signature))),
                        "\(name): a \(kind.rawValue) case is not named by its signature")
                    let failure = testcase.all("failure").first
                    v.check(
                        holds(failure?.text ?? "", readBack("\(kind.rawValue): \(record.finding.signature)")),
                        "\(name): a \(kind.rawValue) failure does not name its signature")
                    v.check(
                        holds(failure?.attributes["message"] ?? "", readBack(record.finding.signature)),
                        "\(name): a \(kind.rawValue) failure message does not name its signature")
                }
            }
        }
        v.check(root.attributes["tests"] == "\(totalTests)", "testsuites tests=\(root.attributes["tests"] ?? "-") but \(totalTests) testcases")
        v.check(
            root.attributes["failures"] == "\(totalFailures)",
            "testsuites failures=\(root.attributes["failures"] ?? "-") but \(totalFailures) failing testcases")
        v.check(
            root.attributes["errors"] == "\(totalErrors)", "testsuites errors=\(root.attributes["errors"] ?? "-") but \(totalErrors) testcases with an error")
    }
}
