import CorruptFuzzCore
import CorruptFuzzRunner

/// Writes a run as JUnit XML that CI dashboards read: one test suite per target, one test case
/// per check (crash, hang, oom, silent-acceptance, false-rejection, wrong-reason).
///
/// A check fails with one `<failure>` per new finding: its message is the signature, its text
/// holds the reproducer, the replay command and the seed. Expected findings (a known-findings
/// file lists them, or the regression store reproduced them) do not fail it: a check with only
/// expected findings is `<skipped>` with them listed, and a failing check lists them in its
/// `<system-out>`.
///
/// Valid against Jenkins' strict junit-10.xsd, which allows `file` on a test suite but neither
/// `file` nor `line` on a test case: a suite whose checks come from a schema names it in
/// `file`, and each failure's text ends with `source: FILE:LINE`, the line that declares the
/// broken rule, which reporters such as action-junit-report read as the annotation's line.
/// Times have at most three decimals, every captured byte is made safe for XML.
public struct JUnitXMLReporter: Sendable {
    /// How many findings of one check are written in full; the rest are listed one line each
    /// in a last failure (every one of them is in summary.json and findings/).
    public var maxFullFailuresPerCheck: Int

    public init(maxFullFailuresPerCheck: Int = 20) {
        self.maxFullFailuresPerCheck = max(1, maxFullFailuresPerCheck)
    }

    /// Renders the report.
    public func render(_ report: RunReport) -> String {
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        let tests = report.suites.reduce(0) { $0 + Self.testcases(of: $1.result).count }
        let failures = report.suites.reduce(0) { count, suite in
            count + Set(suite.newFindings.map(\.finding.kind)).count
        }
        let time = report.suites.reduce(0) { $0 + $1.result.totalSeconds }
        let errors = report.suites.filter { $0.result.toolError != nil }.count
        xml += #"<testsuites name="corrupt-fuzz" tests="\#(tests + errors)" failures="\#(failures)" errors="\#(errors)" time="\#(junitTime(time))">"# + "\n"
        for suite in report.suites { renderSuite(suite, report: report, into: &xml) }
        xml += "</testsuites>\n"
        return xml
    }

    private func renderSuite(_ suite: RunReport.Suite, report: RunReport, into xml: inout String) {
        let result = suite.result
        let failing = Set(suite.newFindings.map(\.finding.kind))
        let found = Set(result.findings.map(\.finding.kind))
        let kinds = Self.testcases(of: result)
        let skippedChecks = kinds.filter { kind in
            !failing.contains(kind) && (found.contains(kind) || skipReason(for: kind, result: result) != nil)
        }
        xml += "  <testsuite"
        xml += attribute("name", result.targetName)
        let errors = result.toolError == nil ? 0 : 1
        xml += attribute("tests", "\(kinds.count + errors)")
        xml += attribute("failures", "\(failing.count)")
        xml += attribute("errors", "\(errors)")
        xml += attribute("skipped", "\(skippedChecks.count)")
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
        if let shard = result.configuration.shard { properties.append(("shard", "\(shard)")) }
        for (name, value) in properties {
            xml += "      <property" + attribute("name", name) + attribute("value", value) + "/>\n"
        }
        xml += "    </properties>\n"
        let classname = "corrupt-fuzz." + result.targetName
        for kind in kinds {
            let all = result.findings.indices.filter { result.findings[$0].finding.kind == kind }
            let records = all.filter { suite.expectation(for: result.findings[$0].finding.key) == nil }
            let known = all.filter { suite.expectation(for: result.findings[$0].finding.key) != nil }
            xml +=
                "    <testcase" + attribute("name", kind.rawValue) + attribute("classname", classname)
                + attribute("time", junitTime(result.totalSeconds)) + ">\n"
            if all.isEmpty, let reason = skipReason(for: kind, result: result) {
                xml += "      <skipped" + attribute("message", reason) + "/>\n"
            }
            if !known.isEmpty {
                // Reporters count a test case with a <skipped> as skipped even when it also
                // fails, so expected findings beside new ones go to its output instead.
                let listing = XMLText.escape(known.map { expectedLine(result.findings[$0], suite: suite, index: $0) }.joined(separator: "\n"))
                if records.isEmpty {
                    let message = "\(known.count) expected \(kind.rawValue) finding\(known.count == 1 ? "" : "s") (known, not new)"
                    xml += "      <skipped" + attribute("message", message) + ">" + listing + "</skipped>\n"
                } else {
                    xml += "      <system-out>expected findings of this check (known, not new):\n" + listing + "</system-out>\n"
                }
            }
            for index in records.prefix(maxFullFailuresPerCheck) {
                let record = result.findings[index]
                let saved = index < suite.reproducers.count ? suite.reproducers[index] : nil
                xml +=
                    "      <failure" + attribute("type", kind.rawValue)
                    + attribute("message", record.finding.signature) + ">"
                xml += XMLText.escape(failureBody(record, saved: saved, seed: result.configuration.seed))
                xml += "</failure>\n"
            }
            let rest = records.dropFirst(maxFullFailuresPerCheck)
            if !rest.isEmpty {
                let lines = rest.map { index -> String in
                    let record = result.findings[index]
                    let saved = index < suite.reproducers.count ? suite.reproducers[index] : nil
                    return "\(record.finding.signature) (hit \(record.hits)x)" + (saved?.minimized.map { "; reproducer: \($0)" } ?? "")
                }
                xml +=
                    "      <failure" + attribute("type", kind.rawValue)
                    + attribute(
                        "message",
                        "and \(rest.count) more \(kind.rawValue) finding\(rest.count == 1 ? "" : "s") (listed here; each in full in summary.json and findings/)"
                    ) + ">"
                xml += XMLText.escape(lines.joined(separator: "\n"))
                xml += "</failure>\n"
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

    /// The test cases of a suite: the checks its run made, and the kind of any finding it has
    /// beyond them (a finding is never left out of the report).
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
        if let saved {
            lines.append("reproducer: \(saved.minimized ?? "(a missing file: no file to save)")")
            if let original = saved.original { lines.append("original: \(original)") }
            lines.append("replay: \(saved.replayCommand)")
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
            lines.append("minimized: \(original.count) -> \(minimized.count) bytes in \(record.minimizationTests) executions")
        }
        let execution = record.minimizedExecution ?? finding.execution
        if !execution.stderr.isEmpty {
            lines.append("stderr (first 2 KiB):")
            lines.append(XMLText.decode(execution.stderr.prefix(2048)))
        }
        if !execution.stdout.isEmpty {
            lines.append("stdout (first 1 KiB):")
            lines.append(XMLText.decode(execution.stdout.prefix(1024)))
        }
        // Last, so that a reporter looking for the suite's file in the text finds this line
        // and not a mention in the target's output.
        if let location = saved?.location { lines.append("source: \(location)") }
        return lines.joined(separator: "\n")
    }

    private func attribute(_ name: String, _ value: String) -> String {
        " \(name)=\"\(XMLText.escape(value, attribute: true))\""
    }
}
