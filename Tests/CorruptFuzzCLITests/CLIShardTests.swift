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

    @Test("merge with a target keeps the smallest file of each behaviour and leaves findings out (cmin)")
    func minimizedCorpus() throws {
        let work = try temporaryFolder("cmin")
        defer { try? FileManager.default.removeItem(at: work) }
        // A loader that accepts files starting with "A", rejects others as corrupt (its message
        // names the first byte), and crashes on "C".
        let loader = work.appendingPathComponent("loader.sh")
        try Data(
            """
            #!/bin/sh
            first=$(head -c 1 "$1")
            case "$first" in
              A) echo accepted; exit 0 ;;
              C) kill -SEGV $$ ;;
              *) echo "reason: corrupt" >&2; echo "bad first byte $first" >&2; exit 1 ;;
            esac

            """.utf8
        ).write(to: loader)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: loader.path)
        let a = work.appendingPathComponent("a"), b = work.appendingPathComponent("b"), out = work.appendingPathComponent("out")
        for folder in [a, b] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let files = [
            (a, "accepted-long", "AAAAAAAA"), (a, "accepted-short", "AB"), (b, "accepted-copy", "AB"), (a, "x-long", "XXXXXXX"), (b, "x-short", "XY"),
            (b, "y", "YYYY"), (a, "crash", "CCC"),
        ]
        for (folder, name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
        let result = try corruptFuzz(["merge", a.path, b.path, "--corpus-output", out.path, "--target", "\(loader.path) @@"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("3 files keep the 3 behaviours of 6 distinct files (1 duplicates and 1 findings left out)"), "\(result.stdout)")
        // Accepted, rejected for X, rejected for Y (the messages differ): the smallest of each.
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted() == ["accepted-short", "x-short", "y"])
        // Run again into the same folder: refused, nothing mixed in.
        let again = try corruptFuzz(["merge", a.path, "--corpus-output", out.path, "--target", "\(loader.path) @@"])
        #expect(again.status == 2 && again.stderr.contains("not empty"), "\(again.stderr)")
        // A minimized corpus minimized again is the same.
        let twice = work.appendingPathComponent("twice")
        #expect(try corruptFuzz(["merge", out.path, "--corpus-output", twice.path, "--target", "\(loader.path) @@"]).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: twice.path).sorted() == ["accepted-short", "x-short", "y"])
    }
}
