import CorruptFuzzCore
import CorruptFuzzReporting
import CorruptFuzzRunner
import Foundation
import Testing

/// Runs a checker (`env ARGUMENTS…`) on `data`, written to a temporary file whose path is
/// the last argument: nil when it exits 0, else what it printed.
func checkerErrors(_ data: Data, extension suffix: String, _ arguments: [String]) throws -> String? {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("checked-\(UUID().uuidString).\(suffix)")
    try data.write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments + [file.path]
    let pipe = Pipe()
    process.standardError = pipe
    process.standardOutput = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return process.terminationStatus == 0 ? nil : output
}

/// A file of Resources, beside this one.
func resource(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources/\(name)").path
}

/// Validates XML against the strict Jenkins JUnit schema with xmllint.
func xmllintSchemaErrors(_ xml: String) throws -> String? {
    try checkerErrors(Data(xml.utf8), extension: "xml", ["xmllint", "--noout", "--schema", resource("junit-10.xsd")])
}

func sampleReport(stderr: [UInt8]) -> RunReport {
    var configuration = FuzzConfiguration()
    configuration.seed = 42
    var result = CampaignResult(
        targetName: "naive <loader> & co", targetCommand: "./naive \"quoted\" @@", validatorName: "strict",
        configuration: configuration, seedNames: ["a.habits"])
    result.executions = 12345
    result.fuzzSeconds = 10.123456
    result.totalSeconds = 12.98765
    let input = TestInput(bytes: [0, 1, 2], mutations: ["bit-flip@1.0"], seedName: "a.habits")
    let crash = Finding(
        kind: .crash, signature: "SIGSEGV at parse ← main", detail: "crash", input: input,
        execution: Execution(outcome: .crashed(signal: 11, frames: ["parse"], message: nil), stderr: stderr), verdict: nil)
    let silent = Finding(
        kind: .silentAcceptance, signature: "corrupt: crc#: stored # != computed #", detail: "accepted",
        input: input, execution: Execution(outcome: .accepted(digest: "x")),
        verdict: .invalid(Violation(.corrupt, "crc32: stored 0x1 != computed 0x2")))
    result.findings = [
        FindingRecord(finding: crash, hits: 3, firstExecution: 17, firstSeconds: 0.5, minimized: [1]),
        FindingRecord(finding: silent, hits: 1, firstExecution: 99, firstSeconds: 1.25, minimized: [0, 1]),
    ]
    var suite = RunReport.Suite(
        result: result,
        replay: ReplayDescription(tool: "corrupt-fuzz", targetCommand: "./naive @@", selection: [["--format", "habit-tracker"]], fileExtension: "habits"))
    suite.reproducers = [
        .init(
            minimized: "/r/crash-1/minimized.habits", original: "/r/crash-1/original.habits",
            replayCommand: "corrupt-fuzz replay --target './naive @@' /r/crash-1/minimized.habits"),
        .init(minimized: "/r/silent-acceptance-1/minimized.habits", original: nil, replayCommand: "corrupt-fuzz replay x"),
    ]
    var clean = CampaignResult(targetName: "hardened", targetCommand: "./hardened @@", validatorName: nil, configuration: configuration, seedNames: [])
    clean.totalSeconds = 1
    return RunReport(
        runID: "run", folder: "/r",
        suites: [suite, RunReport.Suite(result: clean, replay: ReplayDescription(tool: "corrupt-fuzz", targetCommand: "./hardened @@"))],
        timestamp: "2026-11-22T12:00:00", hostname: "host")
}

@Suite("Reports")
struct ReportTests {
    @Test("junit.xml validates against the strict JUnit schema even with hostile captured output")
    func junitValidates() throws {
        let hostile: [UInt8] = Array("Fatal error: ]]> <oops> & \u{1}\u{7}\u{1B}[31m".utf8) + [0xFF, 0xFE, 0xC3, 0x28, 0x00, 0x0A] + Array("tail ✓".utf8)
        let xml = JUnitXMLReporter().render(sampleReport(stderr: hostile))
        #expect(try xmllintSchemaErrors(xml) == nil)
        #expect(!xml.contains("]]>"))
        #expect(xml.contains(#"\xff\xfe"#))
        #expect(xml.contains("tail ✓"))
    }

    @Test("one suite per target, one test case per check, failing with reproducer, replay and seed")
    func structure() throws {
        let xml = JUnitXMLReporter().render(sampleReport(stderr: []))
        #expect(xml.components(separatedBy: "<testsuite ").count - 1 == 2)
        let checks = FindingKind.campaignChecks.count
        #expect(xml.components(separatedBy: "<testcase ").count - 1 == 2 * checks)
        #expect(xml.contains(#"<testsuites name="corrupt-fuzz" tests="\#(2 * checks)" failures="2""#))
        #expect(xml.contains("reproducer: /r/crash-1/minimized.habits"))
        #expect(xml.contains("replay: corrupt-fuzz replay --target"))
        #expect(xml.contains("seed: 42"))
        #expect(xml.contains("validator: corrupt: crc32: stored 0x1 != computed 0x2"))
        #expect(xml.contains(#"time="12.988""#))
        // Checks that could not run are skipped, with the reason.
        #expect(xml.contains("no validator"))
    }

    @Test("the target's output in a finding is under a heading that says it is the target's, indented")
    func targetOutputLabelled() throws {
        let stderr = Array("corrupt-fuzz: crashed with signal 4 (SIGILL)\n  #0 parse\nlast line without newline".utf8)
        // As junit.xml's failure text has it, which finding.txt is.
        let body = JUnitXMLReporter().render(sampleReport(stderr: stderr))
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let heading = try #require(lines.firstIndex(of: "The target's standard error (as it printed it, first 2 KiB):"), "\(body)")
        #expect(Array(lines[(heading + 1)...].prefix(2)) == ["    corrupt-fuzz: crashed with signal 4 (SIGILL)", "      #0 parse"], "\(body)")
        // A last line without a newline too (the failure element closes after it).
        #expect(lines[heading + 3].hasPrefix("    last line without newline"), "\(body)")
        // No line of the target's reads as corrupt-fuzz's own.
        #expect(!lines.contains { $0.hasPrefix("corrupt-fuzz:") }, "\(body)")
    }

    /// Misses the deadline with inputs that start with SLOW, and finishes them when run again
    /// with the confirmation's longer one.
    struct SlowOnce: Executor {
        let slots = 1
        func execute(_ input: TestInput, slot: Int) -> Execution {
            guard let bytes = input.bytes else { return Execution(outcome: .rejected(reason: "not-found", exitCode: 1, message: nil)) }
            if bytes.isEmpty { return Execution(outcome: .rejected(reason: "empty", exitCode: 1, message: nil)) }
            if bytes.starts(with: Array("SLOW".utf8)) { return Execution(outcome: .hung(milliseconds: 1000)) }
            return Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: nil))
        }
        func confirmHang(_ input: TestInput, slot: Int, margin: Int) -> Execution {
            Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: nil))
        }
    }

    @Test("inputs that missed the deadline once and finished when run again are kept in slow/<target>/, not dropped")
    func slowInputsKept() throws {
        var configuration = FuzzConfiguration()
        configuration.maxRuns = 200
        configuration.jobs = 1
        let result = try Campaign(
            executor: SlowOnce(), targetName: "slow loader", targetCommand: "slow @@", takesPath: true, validator: nil,
            seeds: [Seed(name: "slow.bin", bytes: Array("SLOW and steady".utf8)), Seed(name: "fast.bin", bytes: Array("fast".utf8))],
            configuration: configuration
        ).run()
        #expect(result.findings.isEmpty, "slow is not a hang: \(result.findings.map(\.finding.signature))")
        #expect(result.slowInputs >= 1)
        let kept = try #require(result.slowInputsKept)
        #expect(kept.contains { $0.bytes == Array("SLOW and steady".utf8) && $0.origin == "slow.bin" }, "\(kept.map(\.origin))")
        #expect(kept.allSatisfy { $0.bytes.starts(with: Array("SLOW".utf8)) })
        #expect(kept.count <= CampaignResult.maxSlowInputsKept && Set(kept.map(\.bytes)).count == kept.count)

        let root = FileManager.default.temporaryDirectory.appendingPathComponent("slow-report-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let writer = try ReportWriter(root: root.path, runID: "run")
        var suites = [RunReport.Suite(result: result, replay: ReplayDescription(tool: "corrupt-fuzz", targetCommand: "slow @@", fileExtension: "bin"))]
        try writer.write(&suites)
        let folder = root.appendingPathComponent("run/slow/\(ReportWriter.slug("slow loader"))")
        let first = try Data(contentsOf: folder.appendingPathComponent("slow-1.bin"))
        #expect([UInt8](first) == kept[0].bytes)
        let listing = try String(contentsOf: folder.appendingPathComponent("slow.txt"), encoding: .utf8)
        #expect(listing.contains("slow-1.bin: \(kept[0].bytes.count) bytes; input: \(kept[0].origin); when run again: rejected"), "\(listing)")
        #expect(listing.contains("corrupt-fuzz replay --target 'slow @@' FILE"), "\(listing)")
    }

    @Test("times have at most three decimals and no exponent")
    func times() {
        #expect(junitTime(0) == "0.000")
        #expect(junitTime(1.0005) == "1.001")
        #expect(junitTime(0.00001) == "0.000")
        #expect(junitTime(123456.7) == "123456.700")
    }

    @Test("summary.json has counts, executions, rate, and each finding's first hit")
    func summary() throws {
        let data = try SummaryJSON(sampleReport(stderr: [])).encoded()
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(json["executions"] as? Int == 12345)
        let counts = try #require(json["counts"] as? [String: Int])
        #expect(counts["crash"] == 1 && counts["silent-acceptance"] == 1 && counts["hang"] == 0)
        let targets = try #require(json["targets"] as? [[String: Any]])
        let findings = try #require(targets[0]["findings"] as? [[String: Any]])
        #expect(findings[0]["firstExecution"] as? Int == 17)
        #expect(findings[0]["reproducer"] as? String == "/r/crash-1/minimized.habits")
        #expect((targets[0]["executionsPerSecond"] as? Double).map { abs($0 - 1219.5) < 1 } == true)
    }

    @Test("XML text escaping keeps valid text and makes everything else safe")
    func escaping() {
        #expect(XMLText.escape("a<b>&\"c\"", attribute: true) == "a&lt;b&gt;&amp;&quot;c&quot;")
        #expect(XMLText.escape("bell\u{7}") == "bell\\u{7}")
        #expect(XMLText.decode([0x61, 0xFF, 0x62]) == "a\\xffb")
        #expect(XMLText.decode(Array("é✓😀".utf8)) == "é✓😀")
        #expect(XMLText.decode([0xED, 0xA0, 0x80]) == "\\xed\\xa0\\x80")  // a UTF-16 surrogate is not UTF-8
    }

    @Test("replay commands are formatted from a typed description: the selection, and only the limits that are not the defaults")
    func replayCommand() {
        var replay = ReplayDescription(
            tool: "/opt/corrupt fuzz", targetCommand: "./loader --strict @@", selection: [["--validator", "./check @@"], ["--format", "notes"]])
        #expect(
            replay.command(replaying: "/r/x y.xml")
                == "'/opt/corrupt fuzz' replay --target './loader --strict @@' --validator './check @@' --format notes '/r/x y.xml'")
        replay.limits = ProcessExecutor.Limits(timeoutMilliseconds: 500, memoryLimit: 512 << 20)
        #expect(replay.command(replaying: "/r/a").hasSuffix("--timeout 500ms --memory-limit 512MB /r/a"))
    }

    @Test("the report folder keeps reproducers and the latest link")
    func writer() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("reports-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let writer = try ReportWriter(root: root, runID: "run-1")
        var report = sampleReport(stderr: [])
        try writer.saveReproducers(&report.suites)
        try writer.writeReport(report)
        let crashDir = "\(root)/run-1/findings/naive-loader-co/crash-1"
        #expect(FileManager.default.contents(atPath: "\(crashDir)/minimized.habits") == Data([1]))
        #expect(FileManager.default.contents(atPath: "\(crashDir)/original.habits") == Data([0, 1, 2]))
        #expect(FileManager.default.fileExists(atPath: "\(root)/latest/junit.xml"))
        #expect(
            report.suites[0].reproducers[0].replayCommand == "corrupt-fuzz replay --target './naive @@' --format habit-tracker \(crashDir)/minimized.habits")
    }

    @Test("a finding with many details lists each with its hits, saves each kept input beside the reproducer, and says how minimization ended")
    func variants() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("reports-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let writer = try ReportWriter(root: root, runID: "run-1")
        var report = sampleReport(stderr: [])
        var record = report.suites[0].result.findings[1]
        record.minimizationEnd = .outOfTime
        var keys: [UInt64: Int] = [:]
        for (detail, bytes) in [("accepted at 'body'", [7, 7]), ("accepted at 'body'", [8]), ("accepted at 'tail'", [9])] as [(String, [UInt8])] {
            var other = record.finding
            other.detail = detail
            other.input.bytes = bytes
            record.count(other, keys: &keys)
        }
        report.suites[0].result.findings[1] = record
        try writer.saveReproducers(&report.suites)
        try writer.writeReport(report)
        let dir = "\(root)/run-1/findings/naive-loader-co/silent-acceptance-1"
        // The first detail is the finding's own; 'body' twice is one variant.
        #expect(record.variants?.map(\.hits) == [1, 2, 1])
        #expect(FileManager.default.contents(atPath: "\(dir)/variant-2.habits") == Data([7, 7]))
        #expect(FileManager.default.contents(atPath: "\(dir)/variant-3.habits") == Data([9]))
        let text = try String(contentsOfFile: "\(dir)/finding.txt", encoding: .utf8)
        #expect(text.contains("distinct details: 3"))
        #expect(text.contains("  2x accepted at 'body' [input: \(dir)/variant-2.habits]"), "\(text)")
        #expect(text.contains("(not 1-minimal: minimization ran out of time)"), "\(text)")
        let summary = try JSONDecoder().decode(SummaryJSON.self, from: Data(contentsOf: URL(fileURLWithPath: "\(root)/run-1/summary.json")))
        #expect(summary.targets[0].findings[1].variants?.map(\.hits) == [1, 2, 1])
        #expect(summary.targets[0].findings[1].minimization == "out of time")
    }

    @Test("an unwritable reports folder is a clear error before any fuzzing")
    func unwritable() {
        #expect(throws: CorruptFuzzError.self) { try ReportWriter(root: "/proc/corrupt-fuzz-reports", runID: "x") }
    }
}

/// Validates a SARIF log against the SARIF 2.1.0 schema (OASIS, vendored in Resources) with
/// Python's jsonschema; nil when valid, else its error.
func sarifSchemaErrors(_ data: Data) throws -> String? {
    let script = """
        import json, sys, jsonschema
        schema = json.load(open(sys.argv[1]))
        errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(json.load(open(sys.argv[2]))), key=str)
        print("\\n".join(e.message + " at " + "/".join(map(str, e.absolute_path)) for e in errors[:5]))
        sys.exit(1 if errors else 0)
        """
    return try checkerErrors(data, extension: "sarif", ["python3", "-c", script, resource("sarif-schema-2.1.0.json")])
}

@Suite("SARIF")
struct SARIFTests {
    @Test("results.sarif is valid SARIF 2.1.0: a result per finding, a stable fingerprint per bug, the schema line as location, expected findings as notes")
    func sarif() throws {
        var report = sampleReport(stderr: Array("]]> \u{1} \"quoted\"".utf8))
        report.suites[0].reproducers[1].location = "Corpus/schemas/habit-tracker.ksy:31"
        report.suites[0].markExpected(by: try KnownFindings(parsing: "crash: SIGSEGV*", file: "known.txt"))
        let data = try SARIFReporter().render(report)
        #expect(try sarifSchemaErrors(data) == nil)
        let log = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(log["version"] as? String == "2.1.0")
        let run = try #require((log["runs"] as? [[String: Any]])?.first)
        let results = try #require(run["results"] as? [[String: Any]])
        #expect(results.count == 2)
        #expect(results.map { $0["ruleId"] as? String } == ["crash", "silent-acceptance"])
        #expect(results.map { $0["level"] as? String } == ["note", "error"])
        let location = try #require((results[1]["locations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any])
        #expect((location["artifactLocation"] as? [String: Any])?["uri"] as? String == "Corpus/schemas/habit-tracker.ksy")
        #expect((location["region"] as? [String: Any])?["startLine"] as? Int == 31)
        #expect(results[0]["locations"] == nil)
        #expect((results[1]["message"] as? [String: Any])?["text"] as? String == nil ? false : true)
        // The same bug on another night (other hits, inputs and times) has the same fingerprint;
        // another bug has another.
        func fingerprints(_ data: Data) throws -> [String] {
            let log = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let results = try #require(((log["runs"] as? [[String: Any]])?.first?["results"]) as? [[String: Any]])
            return results.compactMap { ($0["partialFingerprints"] as? [String: String])?["corruptFuzzFinding/v1"] }
        }
        var tomorrow = sampleReport(stderr: [])
        tomorrow.suites[0].result.findings[0].hits = 99
        tomorrow.suites[0].result.findings[0].finding.input = TestInput(bytes: [9, 9], seedName: "other")
        tomorrow.runID = "another-night"
        let first = try fingerprints(data), second = try fingerprints(try SARIFReporter().render(tomorrow))
        #expect(first.count == 2 && first == second && first[0] != first[1])
    }
}
