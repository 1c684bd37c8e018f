import CorruptFuzzCore
import CorruptFuzzRunner

/// Writes a run as JUnit XML that CI dashboards read: one test suite per target and, for each
/// check (crash, hang, oom, silent-acceptance, false-rejection, wrong-reason…), one test case
/// per distinct finding, or one passing test case for a check that found nothing.
///
/// A finding's test case is named by its kind and signature (`crash: SIGILL at Parser.swift:51`)
/// and fails with one `<failure>` whose message is the signature and whose text holds the
/// reproducer, the replay command and the seed, so a reporter that shows one failure per test
/// case (dorny/test-reporter) shows every bug. Its time is its reproducer's run; the suite's is
/// the campaign's wall time. Expected findings (a known-findings file lists them, or the
/// regression store reproduced them) are `<skipped>` test cases of their own.
///
/// Valid against Jenkins' strict junit-10.xsd, which allows `file` on a test suite but neither
/// `file` nor `line` on a test case: a suite whose checks come from a schema names it in
/// `file`, and each failure's text ends with `source: FILE:LINE`, the line that declares the
/// broken rule, which reporters such as action-junit-report read as the annotation's line.
/// Times have at most three decimals, every captured byte is made safe for XML.
public struct JUnitXMLReporter: Sendable {
    /// How many new findings of one check get a test case of their own; the rest are listed one
    /// line each in a last failing test case (every one of them is in summary.json and
    /// findings/).
    public var maxFullFailuresPerCheck: Int

    public init(maxFullFailuresPerCheck: Int = 100) {
        self.maxFullFailuresPerCheck = max(1, maxFullFailuresPerCheck)
    }

    /// Renders the report.
    public func render(_ report: RunReport) -> String {
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        let cases = report.suites.map(cases(of:))
        let tests = cases.reduce(0) { $0 + $1.count }
        let failures = cases.reduce(0) { count, suite in count + suite.filter(\.isFailure).count }
        let time = report.suites.reduce(0) { $0 + $1.result.totalSeconds }
        let errors = report.suites.filter { $0.result.toolError != nil }.count
        xml += #"<testsuites name="corrupt-fuzz" tests="\#(tests + errors)" failures="\#(failures)" errors="\#(errors)" time="\#(junitTime(time))">"# + "\n"
        for suite in report.suites { renderSuite(suite, report: report, into: &xml) }
        xml += "</testsuites>\n"
        return xml
    }

    /// One test case of a suite, before it is written.
    struct Case {
        enum Result {
            case passed
            case skipped(message: String, text: String?)
            case failed(type: String, message: String, text: String)
        }
        var name: String
        var seconds: Double
        var result: Result

        var isFailure: Bool {
            if case .failed = result { true } else { false }
        }
        var isSkipped: Bool {
            if case .skipped = result { true } else { false }
        }
    }

    /// The test cases of `suite`: per check, a case per distinct finding (the new ones up to
    /// ``maxFullFailuresPerCheck``, then one listing the rest; the expected ones skipped), or one
    /// case for a check that found nothing (skipped when it could not be made).
    func cases(of suite: RunReport.Suite) -> [Case] {
        let result = suite.result
        var cases: [Case] = []
        for kind in Self.testcases(of: result) {
            let all = result.findings.indices.filter { result.findings[$0].finding.kind == kind }
            guard !all.isEmpty else {
                let skip = skipReason(for: kind, result: result).map { Case.Result.skipped(message: $0, text: nil) }
                cases.append(Case(name: kind.rawValue, seconds: 0, result: skip ?? .passed))
                continue
            }
            let records = all.filter { suite.expectation(for: result.findings[$0].finding.key) == nil }
            for index in records.prefix(maxFullFailuresPerCheck) {
                let record = result.findings[index]
                let saved = index < suite.reproducers.count ? suite.reproducers[index] : nil
                cases.append(
                    Case(
                        name: Self.caseName(kind, record.finding.signature), seconds: Self.seconds(of: record),
                        result: .failed(
                            type: kind.rawValue, message: record.finding.signature,
                            text: failureBody(record, saved: saved, seed: result.configuration.seed))))
            }
            let rest = records.dropFirst(maxFullFailuresPerCheck)
            if !rest.isEmpty {
                let lines = rest.map { index -> String in
                    let record = result.findings[index]
                    let saved = index < suite.reproducers.count ? suite.reproducers[index] : nil
                    return "\(record.finding.signature) (hit \(record.hits)x)" + (saved?.minimized.map { "; reproducer: \($0)" } ?? "")
                }
                let message =
                    "and \(rest.count) more \(kind.rawValue) finding\(rest.count == 1 ? "" : "s") (listed here; each in full in summary.json and findings/)"
                cases.append(
                    Case(
                        name: "\(kind.rawValue): \(rest.count) more", seconds: rest.reduce(0) { $0 + Self.seconds(of: result.findings[$1]) },
                        result: .failed(type: kind.rawValue, message: message, text: lines.joined(separator: "\n"))))
            }
            for index in all where suite.expectation(for: result.findings[index].finding.key) != nil {
                let record = result.findings[index]
                cases.append(
                    Case(
                        name: Self.caseName(kind, record.finding.signature), seconds: Self.seconds(of: record),
                        result: .skipped(message: "expected (known, not new)", text: expectedLine(record, suite: suite, index: index))))
            }
        }
        return cases
    }

    /// `crash: SIGILL at Parser.swift:51`, at most 500 characters (a signature made from a
    /// message is 200 at most; a dashboard's row is no place for more).
    package static func caseName(_ kind: FindingKind, _ signature: String) -> String {
        let name = "\(kind.rawValue): \(signature)"
        return name.count <= 500 ? name : String(name.prefix(499)) + "…"
    }

    /// How long a finding's reproducer ran (its minimized input's run when it has one).
    static func seconds(of record: FindingRecord) -> Double {
        Double((record.minimizedExecution ?? record.finding.execution).microseconds) / 1_000_000
    }

    private func renderSuite(_ suite: RunReport.Suite, report: RunReport, into xml: inout String) {
        let result = suite.result
        let cases = cases(of: suite)
        xml += "  <testsuite"
        xml += attribute("name", result.targetName)
        let errors = result.toolError == nil ? 0 : 1
        xml += attribute("tests", "\(cases.count + errors)")
        xml += attribute("failures", "\(cases.filter(\.isFailure).count)")
        xml += attribute("errors", "\(errors)")
        xml += attribute("skipped", "\(cases.filter(\.isSkipped).count)")
        xml += attribute("time", junitTime(result.totalSeconds))
        xml += attribute("timestamp", report.timestamp)
        xml += attribute("hostname", report.hostname)
        if let source = suite.source { xml += attribute("file", source) }
        xml += ">\n"
        xml += "    <properties>\n"
        var properties: [(String, String)] =
            [
                ("target", result.targetCommand),
                ("validator", result.validatorName ?? "(none)"),
                ("seed", "\(result.configuration.seed)"),
                ("corpus", result.seedNames.joined(separator: ", ")),
                ("executions", "\(result.executions)"),
                ("executions-per-second", junitTime(result.executionsPerSecond)),
                ("stop-reason", result.stopReason.description),
                ("report-folder", report.folder),
            ] + result.undecided.sorted { $0.key < $1.key }.map { ("undecided: \($0.key)", "\($0.value) inputs not labeled") }
        if let stability = result.stability {
            let same = "\(stability.rechecked - stability.differed) of \(stability.rechecked) inputs run again had the same outcome"
            properties.append(("stability", same + (stability.example.map { "; \($0)" } ?? "")))
        }
        if let coverage = result.coverage {
            properties.append(("coverage", "\(coverage.edges) edges; \(coverage.inputsKept) inputs kept for reaching new ones"))
        } else if result.checks == nil {
            properties.append(("coverage", result.configuration.coverage ? "none seen (the target is not instrumented)" : "off (--no-coverage)"))
        }
        if let shard = result.configuration.shard { properties.append(("shard", "\(shard)")) }
        for (name, value) in properties {
            xml += "      <property" + attribute("name", name) + attribute("value", value) + "/>\n"
        }
        xml += "    </properties>\n"
        // A target's name is at most 40 characters when corrupt-fuzz makes it; one given whole
        // is cut in the class name, which every test case repeats.
        let classname = "corrupt-fuzz." + (result.targetName.count <= 200 ? result.targetName : String(result.targetName.prefix(199)) + "…")
        for testcase in cases {
            xml += "    <testcase" + attribute("name", testcase.name) + attribute("classname", classname) + attribute("time", junitTime(testcase.seconds))
            switch testcase.result {
            case .passed:
                // Not self-closed: libxml2 refuses a run of start tags with no content between
                // them once they pass 10 MB ("Huge input lookup"), and a target's name is in each.
                xml += ">\n"
            case .skipped(let message, let text):
                xml += ">\n      <skipped" + attribute("message", message)
                xml += text.map { ">" + XMLText.escape($0) + "</skipped>\n" } ?? "/>\n"
            case .failed(let type, let message, let text):
                xml += ">\n      <failure" + attribute("type", type) + attribute("message", message) + ">"
                xml += XMLText.escape(text) + "</failure>\n"
            }
            xml += "    </testcase>\n"
        }
        if let error = result.toolError {
            // corrupt-fuzz itself failed: the campaign ended early; the findings above stand.
            xml +=
                "    <testcase" + attribute("name", "campaign") + attribute("classname", classname)
                + attribute("time", junitTime(result.totalSeconds)) + ">\n"
            xml += "      <error" + attribute("type", "tool-error") + attribute("message", error) + ">"
            xml += XMLText.escape("corrupt-fuzz stopped this campaign after \(result.executions) executions: \(error)")
            xml += "</error>\n    </testcase>\n"
        }
        xml += "  </testsuite>\n"
    }

    /// The checks of a suite: the ones its run made, and the kind of any finding it has beyond
    /// them (a finding is never left out of the report).
    static func testcases(of result: CampaignResult) -> [FindingKind] {
        let found = Set(result.findings.map(\.finding.kind))
        return FindingKind.allCases.filter { result.checkedKinds.contains($0) || found.contains($0) }
    }

    /// Why a check could not be made, if it could not.
    func skipReason(for kind: FindingKind, result: CampaignResult) -> String? {
        switch kind {
        case .silentAcceptance, .falseRejection:
            return result.validatorName == nil
                ? "no validator: only the built-in expectations (missing and empty files) were checked" : nil
        case .wrongReason:
            return result.targetGivesReasons ? nil : "the target never printed a 'reason: WORD' line, so reasons could not be compared"
        case .xxe:
            return result.outsideTraps == nil ? "the format names no external resources, so no canary file or loopback listener was set" : nil
        case .validatorError:
            return result.validatorName == nil ? "no validator ran" : nil
        default:
            // Every other check needs nothing it could lack: a new kind is made where it is found.
            return nil
        }
    }

    /// One expected finding, in a line: signature, hits, why it is expected, reproducer.
    func expectedLine(_ record: FindingRecord, suite: RunReport.Suite, index: Int) -> String {
        var text = "\(record.finding.signature) (hit \(record.hits)x): \(suite.expectation(for: record.finding.key) ?? "expected")"
        if index < suite.reproducers.count, let path = suite.reproducers[index].minimized { text += "; reproducer: \(path)" }
        return text
    }

    func failureBody(_ record: FindingRecord, saved: RunReport.SavedReproducer?, seed: UInt64) -> String {
        let finding = record.finding
        var lines = [
            "\(finding.kind.rawValue): \(finding.signature)",
            "what happened: \(finding.detail)",
        ]
        if case .invalid? = finding.verdict, let verdict = finding.verdict {
            lines.append("validator: \(verdict)")
        }
        if let expectation = finding.input.expectation {
            lines.append("expected: rejected as \(expectation.reason) (\(expectation.because))")
        }
        lines.append("input: \(finding.input.origin)")
        lines.append("seed: \(seed) (rerun with --seed \(seed))")
        lines.append("first hit: execution \(record.firstExecution), after \(junitTime(record.firstSeconds)) s; hits: \(record.hits)")
        lines += Self.variantLines(record, saved: saved)
        if let saved {
            lines.append("reproducer: \(saved.minimized ?? "(a missing file: no file to save)")")
            if let original = saved.original { lines.append("original: \(original)") }
            lines.append("replay: \(saved.replayCommand)")
            if let fresh = record.freshProcess { lines.append("fresh process: \(fresh)") }
            if let path = saved.minimized, let slash = path.lastIndex(of: "/") {
                let folder = path[..<slash]
                let attachments = finding.attachments ?? []
                for attachment in attachments.prefix(20) {
                    let name = attachment.name.split(separator: "/").map { ReportWriter.slug(String($0)) }.joined(separator: "/")
                    lines.append("\(attachment.name): \(folder)/\(name)")
                }
                if attachments.count > 20 { lines.append("… and \(attachments.count - 20) more files in \(folder)") }
            }
        }
        if let minimized = record.minimized, let original = finding.input.bytes {
            let end = record.minimizationEnd.map { $0 == .oneMinimal ? " (1-minimal)" : " (not 1-minimal: minimization ran \($0))" } ?? ""
            lines.append("minimized: \(original.count) -> \(minimized.count) bytes in \(record.minimizationTests) executions\(end)")
        }
        // The target's own output, under a heading that says whose it is and indented: the
        // crash reporter corrupt-fuzz preloads into targets prints its header and frames
        // there, in the target's process.
        let execution = record.minimizedExecution ?? finding.execution
        if case .crashed = execution.outcome {
            // The crash reporter gives modules and offsets: the frames as corrupt-fuzz named them.
            let raw = CrashSignature.rawFrames(in: String(decoding: execution.stderr, as: UTF8.self))
            let named = Symbolizer.shared.symbolize(raw)
            if !named.isEmpty {
                lines.append("The crashed thread's frames, named by corrupt-fuzz:")
                for (index, frame) in named.prefix(40).enumerated() {
                    let line = frame.sourceLine.map { " at " + $0 } ?? ""
                    let inlined = frame.inlined ? " [inlined]" : ""
                    lines.append("    #\(index) \(frame.name)\(line)\(inlined) (\(frame.moduleName)+0x\(String(frame.offset, radix: 16)))")
                }
            }
        }
        if !execution.stderr.isEmpty {
            lines.append("The target's standard error (as it printed it, first 2 KiB):")
            lines += Self.indented(XMLText.decode(execution.stderr.prefix(2048)))
        }
        if !execution.stdout.isEmpty {
            lines.append("The target's standard output (as it printed it, first 1 KiB):")
            lines += Self.indented(XMLText.decode(execution.stdout.prefix(1024)))
        }
        // Last, so that a reporter looking for the suite's file in the text finds this line
        // and not a mention in the target's output.
        if let location = saved?.location { lines.append("source: \(location)") }
        return lines.joined(separator: "\n")
    }

    /// `text`'s lines, each indented by four spaces (a line the target left unfinished too).
    static func indented(_ text: String) -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }
        if text.hasSuffix("\n") { lines.removeLast() }
        return lines
    }

    /// The distinct details of a finding with many (``FindingRecord/variants``): one line each,
    /// with its hits and the file of its first input when the report saved one.
    static func variantLines(_ record: FindingRecord, saved: RunReport.SavedReproducer?) -> [String] {
        guard let variants = record.variants, variants.count > 1 else { return [] }
        var lines = [
            "distinct details: \(variants.count)\(record.uncountedVariantHits.map { " counted, and \($0) hits with details after those" } ?? "") (one signature; each detail counted, the first is this finding's):"
        ]
        for (index, variant) in variants.enumerated().prefix(20) {
            let detail = variant.detail.split(whereSeparator: \.isNewline).first.map { String($0.prefix(300)) } ?? ""
            let file = index == 0 ? saved?.original : saved?.variantInputs?[index]
            lines.append("  \(variant.hits)x \(detail)" + (file.map { " [input: \($0)]" } ?? ""))
        }
        if variants.count > 20 { lines.append("  … and \(variants.count - 20) more in summary.json") }
        return lines
    }

    private func attribute(_ name: String, _ value: String) -> String {
        " \(name)=\"\(XMLText.escape(value, attribute: true))\""
    }
}
