import CorruptFuzzCore
import CorruptFuzzReporting
import CorruptFuzzRunner
import Foundation
import Testing

/// The package checkout.
private let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

@Suite("Nightly reports: known findings, source locations, libFuzzer logs")
struct NightlyReportTests {
    @Test("a known-findings file: KIND: SIGNATURE lines, * patterns, [TARGET] sections, clear errors")
    func knownFindings() throws {
        let text = """
            # comment
            crash: SIGSEGV at *
            [naive*]
            *
            [hardened]
            silent-acceptance: corrupt: crc#: stored # != computed #
            """
        let known = try KnownFindings(parsing: text, file: "k.txt")
        let crash = FindingKey(kind: .crash, signature: "SIGSEGV at parse ← main")
        #expect(known.entry(for: crash, target: "anything")?.location == "k.txt:2")
        #expect(known.entry(for: FindingKey(kind: .hang, signature: "no exit within the timeout"), target: "naive <loader> & co")?.location == "k.txt:4")
        let silent = FindingKey(kind: .silentAcceptance, signature: "corrupt: crc#: stored # != computed #")
        #expect(known.entry(for: silent, target: "hardened")?.location == "k.txt:6")
        #expect(known.entry(for: FindingKey(kind: .silentAcceptance, signature: "corrupt: crc#: other"), target: "hardened") == nil)
        #expect(known.entry(for: FindingKey(kind: .oom, signature: "over the memory limit"), target: "hardened") == nil)
        #expect(throws: CorruptFuzzError.self) { try KnownFindings(parsing: "crashes: x", file: "bad.txt") }
        #expect(throws: CorruptFuzzError.self) { try KnownFindings(parsing: "[unclosed", file: "bad.txt") }
    }

    @Test("expected findings do not fail their check: skipped when alone, listed beside new ones, still valid JUnit")
    func expectedInJUnit() throws {
        var report = sampleReport(stderr: [])
        report.suites[0].markExpected(by: try KnownFindings(parsing: "crash: SIGSEGV*", file: "known.txt"))
        #expect(report.newFindingCount == 1)
        let xml = JUnitXMLReporter().render(report)
        #expect(try xmllintSchemaErrors(xml) == nil)
        #expect(xml.contains(#"failures="1""#))
        #expect(
            xml.contains(
                #"<testcase name="crash: SIGSEGV at parse ← main" classname="corrupt-fuzz.naive &lt;loader&gt; &amp; co" time="0.000">"# + "\n"
                    + #"      <skipped message="expected (known, not new)">SIGSEGV at parse ← main (hit 3x): listed in known.txt:1"#))
        #expect(xml.contains(#"<failure type="silent-acceptance" message="corrupt: crc#: stored # != computed #">"#))
        let summary = try #require(try JSONSerialization.jsonObject(with: try SummaryJSON(report).encoded()) as? [String: Any])
        #expect(summary["newFindings"] as? Int == 1)
        // A check with a new and an expected finding: a failing case and a skipped one.
        var both = sampleReport(stderr: [])
        both.suites[0].result.findings[1].finding.kind = .crash
        both.suites[0].markExpected(by: try KnownFindings(parsing: "crash: SIGSEGV*", file: "known.txt"))
        let mixed = JUnitXMLReporter().render(both)
        #expect(try xmllintSchemaErrors(mixed) == nil)
        #expect(mixed.contains(#"<testcase name="crash: corrupt: crc#: stored # != computed #""#))
        #expect(mixed.contains(#"<skipped message="expected (known, not new)">SIGSEGV at parse"#))
        #expect(mixed.contains(#"failures="1""#))
    }

    @Test("a finding the regression store reproduced is expected, and stays so through a merge")
    func regressionStore() throws {
        var shard1 = sampleReport(stderr: [])
        shard1.suites[0].result.findings[0].finding.input = TestInput(bytes: [1], mutations: ["regression"], seedName: "Corpus/regressions/x/crash-1")
        shard1.suites[0].markExpected(by: nil)
        #expect(shard1.suites[0].expectation(for: shard1.suites[0].result.findings[0].finding.key)?.contains("Corpus/regressions/x/crash-1") == true)
        var shard2 = sampleReport(stderr: [])
        shard2.suites[0].markExpected(by: nil)
        #expect(shard2.newFindingCount == 2)
        let merged = ReportMerge.suites(of: [shard2, shard1])
        let suite = try #require(merged.first)
        #expect(suite.newFindings.count == 1)
        #expect(suite.newFindings.first?.finding.kind == .silentAcceptance)
    }

    @Test("a finding from a schema points at the line that declares the broken rule")
    func sourceLocations() throws {
        let ksy = try String(contentsOf: packageRoot.appendingPathComponent("Corpus/schemas/habit-tracker.ksy"), encoding: .utf8)
        func finding(_ path: String, _ message: String = "x") -> Finding {
            Finding(
                kind: .silentAcceptance, signature: "s", detail: "", input: TestInput(bytes: [1], seedName: "a"),
                execution: Execution(outcome: .accepted(digest: "")), verdict: .invalid(Violation(.corrupt, message, at: path)))
        }
        let lines = ksy.split(separator: "\n", omittingEmptySubsequences: false)
        let line = try #require(SourceLocator.line(of: finding("habits[2].num_dates"), file: "h.ksy", text: ksy))
        #expect(lines[line - 1].contains("- id: num_dates"))
        #expect(SourceLocator.line(of: finding("trailing"), file: "h.ksy", text: ksy) == nil)
        let xsd = """
            <xs:schema>
              <xs:element name="notes">
                <xs:element name="note">
                  <xs:attribute name="id" use="required"/>
            """
        #expect(SourceLocator.line(of: finding("/notes/note[2]", "Element 'note': The attribute 'id' is required but missing."), file: "n.xsd", text: xsd) == 4)
        #expect(SourceLocator.line(of: finding("/notes/note[2]"), file: "n.xsd", text: xsd) == 3)
    }

    @Test("a libFuzzer log tells each saved input's kind and signature, the bridge's first")
    func libFuzzerLog() {
        let silentInput: [UInt8] = Array("HBTS\u{1}\u{0}".utf8)
        let sha = SHA1.hex(silentInput)
        let log = """
            INFO: Seed: 1
            ==corrupt-fuzz== finding: silent-acceptance
            ==corrupt-fuzz== signature: corrupt: crc#: needs # bytes, # left
            ==corrupt-fuzz== target: habit-loader-naive
            ==corrupt-fuzz== detail: accepted, but the validator says: crc32: needs 4 bytes, 0 left
            ==corrupt-fuzz== input: \(sha)
            ==1== ERROR: libFuzzer: deadly signal
            artifact_prefix='./'; Test unit written to ./crash-\(sha)
            Fatal error: Index out of range at 12
            ==2== ERROR: libFuzzer: deadly signal
            artifact_prefix='./'; Test unit written to ./crash-abc
            ==3== ERROR: libFuzzer: timeout after 5 seconds
            artifact_prefix='./'; Test unit written to ./timeout-def
            """
        let parsed = LibFuzzerLog(parsing: log)
        let silent = parsed.artifact(named: "crash-\(sha)", bytes: silentInput)
        #expect(silent.kind == .silentAcceptance && silent.target == "habit-loader-naive")
        #expect(silent.signature == "corrupt: crc#: needs # bytes, # left")
        #expect(parsed.artifact(named: "crash-abc", bytes: [9]).signature == "Fatal error: Index out of range at #")
        #expect(parsed.artifact(named: "timeout-def", bytes: [8]).kind == .hang)
        // In a -fork run the artifact's own lines are lost; the SHA-1 still finds the report.
        let forked = LibFuzzerLog(parsing: log.split(separator: "\n").prefix(6).joined(separator: "\n"))
        #expect(forked.artifact(named: "crash-\(sha)", bytes: silentInput).kind == .silentAcceptance)
        #expect(LibFuzzerLog.describe(name: "leak-1").signature == "memory leak (LeakSanitizer)")
        #expect(SHA1.hex(Array("abc".utf8)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(SHA1.hex([]) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }

    @Test("the nightly's targets exist and its known-findings file parses")
    func nightlyConfiguration() throws {
        let nightly = packageRoot.appendingPathComponent(".github/nightly")
        _ = try KnownFindings(contentsOf: nightly.appendingPathComponent("known-findings.txt").path)
        let manifest = try String(contentsOf: packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let lines = try String(contentsOf: nightly.appendingPathComponent("targets.txt"), encoding: .utf8).split(separator: "\n")
        let targets = lines.filter { !$0.hasPrefix("#") && !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        #expect(targets.count >= 6)
        for line in targets {
            let fields = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(fields.count == 4)
            // The demo's programs are executable targets without products (SwiftPM names each
            // executable after its target).
            #expect(manifest.contains(#"name: "\#(fields[1])""#), "\(fields[1]) is not an executable target of the package")
            #expect(FileManager.default.fileExists(atPath: packageRoot.appendingPathComponent(fields[3]).path))
            for word in fields[2].split(separator: " ") where word.hasSuffix(".ksy") {
                #expect(FileManager.default.fileExists(atPath: packageRoot.appendingPathComponent(String(word)).path))
            }
        }
    }
}
