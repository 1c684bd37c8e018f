import CorruptFuzzCore
import Foundation
import Testing

@Suite("CLI: known findings, the regression store, libFuzzer imports")
struct CLINightlyTests {
    let common = [
        "--target", "\(product("habit-loader-naive")) @@", "--schema", "Corpus/schemas/habit-tracker.ksy", "--corpus", "Corpus/habits",
        "--runs", "200", "--jobs", "1", "--no-minimize", "--timeout", "300ms",
    ]

    func write(_ text: String, to url: URL) throws { try text.write(to: url, atomically: true, encoding: .utf8) }

    @Test("findings a known-findings file lists are reported as expected; the exit status is 1 only for new ones")
    func knownFindings() throws {
        let work = try temporaryFolder("known")
        defer { try? FileManager.default.removeItem(at: work) }
        let all = work.appendingPathComponent("all.txt")
        try write("[habit-loader-naive]\n*\n", to: all)
        let known = try corruptFuzz(["run"] + common + ["--known-findings", all.path, "--reports", work.appendingPathComponent("r1").path])
        #expect(known.status == 0, "\(known.stdout)\(known.stderr)")
        #expect(known.stdout.contains("0 new findings"))
        let first = try summary(in: work.appendingPathComponent("r1"))
        #expect(first["newFindings"] as? Int == 0)
        let crashes = work.appendingPathComponent("crashes.txt")
        try write("crash: *\n", to: crashes)
        let some = try corruptFuzz(["run"] + common + ["--known-findings", crashes.path, "--reports", work.appendingPathComponent("r2").path])
        #expect(some.status == 1)
        let broken = try corruptFuzz(["run"] + common + ["--known-findings", work.appendingPathComponent("missing.txt").path])
        #expect(broken.status == 2 && broken.stderr.contains("known-findings"))
    }

    @Test("an input of the regression store runs first; the finding it reproduces is expected, others are new")
    func regressionStore() throws {
        let work = try temporaryFolder("regressions")
        defer { try? FileManager.default.removeItem(at: work) }
        let store = work.appendingPathComponent("store/habit-loader-naive")
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        // A header and a habit count, nothing else: the naive loader reads past the end.
        try Data(Array("HBTS".utf8) + [1, 0, 1, 0, 0, 0]).write(to: store.appendingPathComponent("crash-1.habits"))
        let result = try corruptFuzz(
            ["run"] + common + ["--regressions", work.appendingPathComponent("store").path, "--reports", work.appendingPathComponent("r").path])
        #expect(result.status == 1)
        let target = try #require((try summary(in: work.appendingPathComponent("r"))["targets"] as? [[String: Any]])?.first)
        let findings = try #require(target["findings"] as? [[String: Any]])
        let expected = findings.filter { ($0["expected"] as? String)?.contains("regression store") == true }
        #expect(expected.count == 1)
        #expect(expected.first?["kind"] as? String == "crash")
        #expect(target["newFindings"] as? Int == findings.count - 1)
    }

    @Test("import turns libFuzzer's saved inputs and the bridge's report into findings and regression-store entries")
    func importArtifacts() throws {
        let work = try temporaryFolder("import")
        defer { try? FileManager.default.removeItem(at: work) }
        let artifacts = work.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: artifacts, withIntermediateDirectories: true)
        let silent: [UInt8] = Array("HBTS".utf8) + [2, 0, 0, 0, 0, 0]
        let sha = SHA1.hex(silent)
        try Data(silent).write(to: artifacts.appendingPathComponent("crash-\(sha)"))
        try Data([0x48, 0x42]).write(to: artifacts.appendingPathComponent("timeout-0123"))
        try Data([1]).write(to: artifacts.appendingPathComponent("fuzz-0.log"))
        let log = work.appendingPathComponent("fuzz.log")
        try write(
            """
            ==corrupt-fuzz== finding: silent-acceptance
            ==corrupt-fuzz== signature: unsupported-version: version: # is newer than supported #
            ==corrupt-fuzz== target: habit-loader-naive
            ==corrupt-fuzz== detail: accepted, but the validator says: version: 2 is newer than supported 1
            ==corrupt-fuzz== input: \(sha)
            artifact_prefix='./'; Test unit written to ./crash-\(sha)
            ==9== ERROR: libFuzzer: timeout after 5 seconds
            artifact_prefix='./'; Test unit written to ./timeout-0123
            """, to: log)
        let store = work.appendingPathComponent("store")
        let result = try corruptFuzz([
            "import", artifacts.path, "--log", log.path, "--file-extension", "habits", "--regressions", store.path,
            "--reports", work.appendingPathComponent("r").path, "--fuzzer", "/bin/fuzzer",
        ])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let saved = try FileManager.default.contentsOfDirectory(atPath: store.appendingPathComponent("habit-loader-naive").path).sorted()
        #expect(saved.count == 2)
        #expect(saved.contains { $0.hasPrefix("silent-acceptance-") && $0.hasSuffix(".habits") })
        #expect(saved.contains { $0.hasPrefix("hang-") })
        let junit = try String(contentsOf: work.appendingPathComponent("r/latest/junit.xml"), encoding: .utf8)
        #expect(junit.contains(#"message="unsupported-version: version: # is newer than supported #""#))
        #expect(junit.contains("replay: /bin/fuzzer "))
    }
}
