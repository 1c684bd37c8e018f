import Foundation
import Testing

@Suite("CLI: campaigns, reports and replay against real processes")
struct CLICampaignTests {
    /// A corpus for the fixture's `file` mode: "OK…" is accepted, BOOM crashes, LOOP hangs.
    func fixtureCorpus() throws -> URL {
        let folder = try temporaryFolder("corpus")
        try Data("OK fine data".utf8).write(to: folder.appendingPathComponent("good.txt"))
        try Data("OK this one goes BOOM eventually".utf8).write(to: folder.appendingPathComponent("crash.txt"))
        try Data("OK and this one will LOOP".utf8).write(to: folder.appendingPathComponent("hang.txt"))
        return folder
    }

    @Test("a campaign finds crash and hang, minimizes, writes a schema-valid report, and replays")
    func campaignAndReplay() throws {
        let corpus = try fixtureCorpus(), reports = try temporaryFolder("reports")
        defer { try? FileManager.default.removeItem(at: corpus); try? FileManager.default.removeItem(at: reports) }
        let target = "\(product("FixtureTarget")) file @@"
        let result = try corruptFuzz([
            "run", "--target", target, "--corpus", corpus.path, "--runs", "300", "--timeout", "300ms",
            "--seed", "3", "--reports", reports.path,
        ])
        #expect(result.status == 1, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("Report: "))
        #expect(try schemaErrors(junit: reports.appendingPathComponent("latest/junit.xml").path) == nil)

        let json = try summary(in: reports)
        let targetJSON = try #require((json["targets"] as? [[String: Any]])?.first)
        #expect(kinds(of: targetJSON).isSuperset(of: ["crash", "hang"]))
        #expect(json["executions"] as? Int == 300)
        let crash = try #require(findings(of: targetJSON).first { $0["kind"] as? String == "crash" })
        let reproducer = try #require(crash["reproducer"] as? String)
        #expect(FileManager.default.contents(atPath: reproducer) == Data("BOOM".utf8))
        #expect((crash["replay"] as? String)?.contains("replay --target") == true)

        let replay = try corruptFuzz(["replay", "--target", target, reproducer])
        #expect(replay.status == 1)
        #expect(replay.stdout.contains("finding: crash"))
        let clean = try corruptFuzz(["replay", "--target", target, corpus.appendingPathComponent("good.txt").path])
        #expect(clean.status == 0, "\(clean.stdout)")
        #expect(clean.stdout.contains("no finding"))
    }

    @Test("replay commands are relative to the folder the run started in, and a finding's replay script works from a copied report")
    func relocatableReplay() throws {
        let corpus = try fixtureCorpus(), reports = try temporaryFolder("reports"), elsewhere = try temporaryFolder("copied")
        defer {
            for folder in [corpus, reports, elsewhere] { try? FileManager.default.removeItem(at: folder) }
        }
        let result = try corruptFuzz([
            "run", "--target", "\(product("FixtureTarget")) file @@", "--corpus", corpus.path, "--runs", "200", "--timeout", "300ms",
            "--seed", "3", "--reports", reports.path,
        ])
        #expect(result.status == 1, "stderr: \(result.stderr)")
        let targetJSON = try #require((try summary(in: reports)["targets"] as? [[String: Any]])?.first)
        let crash = try #require(findings(of: targetJSON).first { $0["kind"] as? String == "crash" })
        let replay = try #require(crash["replay"] as? String)
        // The binaries below the checkout are named relative to it (the run started there).
        #expect(!replay.contains(packageRoot.path), "\(replay)")
        #expect(replay.contains(".build/"), "\(replay)")
        // Copy the run's folder elsewhere, drop the original, and replay from the checkout.
        let run = try #require(try FileManager.default.contentsOfDirectory(atPath: reports.path).first { $0 != "latest" })
        let copy = elsewhere.appendingPathComponent(run)
        try FileManager.default.copyItem(at: reports.appendingPathComponent(run), to: copy)
        try FileManager.default.removeItem(at: reports)
        let targetFolder = try #require(try FileManager.default.contentsOfDirectory(atPath: copy.appendingPathComponent("findings").path).first)
        let findingFolder = copy.appendingPathComponent("findings/\(targetFolder)/crash-1")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [findingFolder.appendingPathComponent("replay").path]
        process.currentDirectoryURL = packageRoot
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1, "\(output)")
        #expect(output.contains("finding: crash"), "\(output)")
        #expect(output.contains(copy.path), "the script replays its own folder's reproducer: \(output)")
    }

    @Test("the same seed and corpus give the same inputs; another seed does not")
    func determinism() throws {
        let corpus = try fixtureCorpus()
        defer { try? FileManager.default.removeItem(at: corpus) }
        func hash(seed: Int) throws -> String {
            let reports = try temporaryFolder("reports")
            defer { try? FileManager.default.removeItem(at: reports) }
            _ = try corruptFuzz([
                "run", "--target", "\(product("FixtureTarget")) file @@", "--corpus", corpus.path, "--runs", "200",
                "--timeout", "200ms", "--seed", "\(seed)", "--no-minimize", "--reports", reports.path,
            ])
            let targets = try #require(try summary(in: reports)["targets"] as? [[String: Any]])
            return try #require(targets.first?["inputSequenceHash"] as? String)
        }
        let first = try hash(seed: 11)
        #expect(try hash(seed: 11) == first)
        #expect(try hash(seed: 12) != first)
    }

    @Test("a loader no one here wrote: a Python one-liner that reads plists")
    func foreignLoader() throws {
        let corpus = try temporaryFolder("plists"), reports = try temporaryFolder("reports")
        defer { try? FileManager.default.removeItem(at: corpus); try? FileManager.default.removeItem(at: reports) }
        let plist =
            #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>name</key><string>Run</string><key>days</key><array><integer>1</integer></array></dict></plist>"#
        try Data(plist.utf8).write(to: corpus.appendingPathComponent("a.plist"))
        let result = try corruptFuzz([
            "run", "--target", #"python3 -c 'import plistlib,sys; plistlib.load(open(sys.argv[1],"rb"))' @@"#,
            "--corpus", corpus.path, "--runs", "150", "--reports", reports.path,
        ])
        #expect([0, 1].contains(result.status), "stderr: \(result.stderr)")
        #expect(try schemaErrors(junit: reports.appendingPathComponent("latest/junit.xml").path) == nil)
        #expect(try summary(in: reports)["executions"] as? Int == 150)
    }
}

@Suite("CLI: schema-aware campaigns")
struct CLISchemaTests {
    let schema = packageRoot.appendingPathComponent("Corpus/schemas/habit-tracker.ksy").path

    @Test("--schema without a corpus generates seeds and finds the naive loader's lies")
    func schemaWithoutCorpus() throws {
        let reports = try temporaryFolder("schema")
        defer { try? FileManager.default.removeItem(at: reports) }
        let result = try corruptFuzz([
            "run", "--target", "\(product("habit-loader-naive")) @@", "--schema", schema, "--runs", "400",
            "--timeout", "300ms", "--no-minimize", "--reports", reports.path,
        ])
        #expect(result.status == 1, "stderr: \(result.stderr)")
        let target = try #require((try summary(in: reports)["targets"] as? [[String: Any]])?.first)
        #expect(kinds(of: target).isSuperset(of: ["crash", "silent-acceptance", "wrong-reason"]), "\(kinds(of: target))")
        let signatures = findings(of: target).compactMap { $0["signature"] as? String }
        #expect(signatures.contains { $0.hasPrefix("unsupported-version:") }, "\(signatures)")
        #expect(try schemaErrors(junit: reports.appendingPathComponent("latest/junit.xml").path) == nil)
    }

    @Test("a broken schema is a configuration error")
    func brokenSchema() throws {
        let folder = try temporaryFolder("ksy")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("broken.ksy").path
        try Data("seq:\n  - id: a\n    type: u7\n".utf8).write(to: URL(fileURLWithPath: path))
        let result = try corruptFuzz(["run", "--target", "/bin/true @@", "--schema", path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("broken schema") && result.stderr.contains("unknown type 'u7'"), "\(result.stderr)")
        let validate = try corruptFuzz(["validate", "--schema", path, "x"])
        #expect(validate.status == 2)
    }

    @Test("generate writes valid files that validate accepts; validate reports violations with paths")
    func generateAndValidate() throws {
        let out = try temporaryFolder("gen")
        defer { try? FileManager.default.removeItem(at: out) }
        let generated = try corruptFuzz(["generate", "--schema", schema, "--count", "20", "--out", out.path, "--seed", "3"])
        #expect(generated.status == 0, "\(generated.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path).map { out.appendingPathComponent($0).path }
        #expect(files.count == 20)
        let valid = try corruptFuzz(["validate", "--schema", schema] + files)
        #expect(valid.status == 0, "\(valid.stdout)")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: files[0])))
        bytes[4] = 2
        let bad = out.appendingPathComponent("future.habits")
        try Data(bytes).write(to: bad)
        let invalid = try corruptFuzz(["validate", "--schema", schema, bad.path])
        #expect(invalid.status == 1)
        #expect(invalid.stdout.contains("unsupported-version: version: 2 is newer than supported 1"), "\(invalid.stdout)")
    }
}

@Suite("CLI: XML with a schema")
struct CLIXMLTests {
    @Test("well-formed is not valid: xmllint --noout silently accepts notes the XSD rejects")
    func xsdSilentAcceptance() throws {
        let reports = try temporaryFolder("xsd")
        defer { try? FileManager.default.removeItem(at: reports) }
        let result = try corruptFuzz([
            "run", "--format", "xml", "--xsd", "Corpus/schemas/notes.xsd", "--corpus", "Corpus/notes",
            "--target", "xmllint --noout @@", "--runs", "400", "--no-minimize", "--timeout", "500ms", "--reports", reports.path,
        ])
        #expect(result.status == 1, "stderr: \(result.stderr)")
        let target = try #require((try summary(in: reports)["targets"] as? [[String: Any]])?.first)
        #expect(kinds(of: target).contains("silent-acceptance"), "\(kinds(of: target))")
        #expect(try schemaErrors(junit: reports.appendingPathComponent("latest/junit.xml").path) == nil)
    }
}
