import CorruptFuzzCore
import Foundation
import Testing

@Suite("CLI: a campaign in shards, merged into one report; corpora merged without duplicates")
struct CLIShardTests {
    /// Findings of a summary as (kind, signature) → hits.
    func hits(_ summary: [String: Any]) -> [String: Int] {
        var out: [String: Int] = [:]
        for target in summary["targets"] as? [[String: Any]] ?? [] {
            for finding in target["findings"] as? [[String: Any]] ?? [] {
                out["\(finding["kind"] ?? "")|\(finding["signature"] ?? "")", default: 0] += finding["hits"] as? Int ?? 0
            }
        }
        return out
    }

    @Test("two shards run the deterministic inputs between them, and merge into one valid report with every finding")
    func shardsAndMerge() throws {
        let work = try temporaryFolder("shards")
        defer { try? FileManager.default.removeItem(at: work) }
        let common = [
            "--target", "\(product("habit-loader-naive")) @@", "--schema", "Corpus/schemas/habit-tracker.ksy", "--corpus", "Corpus/habits",
            "--runs", "300", "--jobs", "1", "--no-minimize", "--timeout", "300ms",
        ]
        var shardSummaries: [[String: Any]] = []
        for shard in ["1/2", "2/2"] {
            let reports = work.appendingPathComponent("shard-\(shard.prefix(1))")
            let result = try corruptFuzz(["run"] + common + ["--shard", shard, "--reports", reports.path])
            #expect(result.status == 1, "stderr: \(result.stderr)")
            shardSummaries.append(try summary(in: reports))
        }
        let merged = work.appendingPathComponent("merged")
        let result = try corruptFuzz([
            "merge", work.appendingPathComponent("shard-1/latest").path, work.appendingPathComponent("shard-2/latest").path,
            "--reports", merged.path,
        ])
        #expect(result.status == 1, "stderr: \(result.stderr)")
        let mergedSummary = try summary(in: merged)
        let target = try #require((mergedSummary["targets"] as? [[String: Any]])?.first)
        #expect(target["executions"] as? Int == 600)
        // Every shard's finding is in the merged report, with the hits of both shards added up.
        var expected: [String: Int] = [:]
        for shard in shardSummaries { expected.merge(hits(shard), uniquingKeysWith: +) }
        #expect(hits(mergedSummary) == expected)
        #expect(!expected.isEmpty)
        // Each shard ran inputs of its own.
        let sequences = shardSummaries.compactMap { ($0["targets"] as? [[String: Any]])?.first?["inputSequenceHash"] as? String }
        #expect(sequences.count == 2 && sequences[0] != sequences[1], "\(sequences)")
        if let problem = try schemaErrors(junit: merged.appendingPathComponent("latest/junit.xml").path) { Issue.record("\(problem)") }
        for finding in target["findings"] as? [[String: Any]] ?? [] {
            if let path = finding["reproducer"] as? String { #expect(FileManager.default.fileExists(atPath: path), "\(path)") }
        }
    }

    @Test("merge refuses a folder that is not a report, and merges corpora keeping each file once")
    func corpora() throws {
        let work = try temporaryFolder("corpora")
        defer { try? FileManager.default.removeItem(at: work) }
        let notReport = try corruptFuzz(["merge", work.path, "--reports", work.appendingPathComponent("r").path])
        #expect(notReport.status == 2)
        #expect(notReport.stderr.contains("is not a report folder"), "\(notReport.stderr)")

        let a = work.appendingPathComponent("a"), b = work.appendingPathComponent("b"), out = work.appendingPathComponent("out")
        for folder in [a, b] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        try Data("one".utf8).write(to: a.appendingPathComponent("x.bin"))
        try Data("two".utf8).write(to: a.appendingPathComponent("y.bin"))
        try Data("one".utf8).write(to: b.appendingPathComponent("copy.bin"))
        try Data("three".utf8).write(to: b.appendingPathComponent("x.bin"))
        let result = try corruptFuzz(["merge", a.path, b.path, "--corpus-output", out.path])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
        #expect(names == ["x-2.bin", "x.bin", "y.bin"])
        #expect(try Data(contentsOf: out.appendingPathComponent("x-2.bin")) == Data("three".utf8))
    }
}
