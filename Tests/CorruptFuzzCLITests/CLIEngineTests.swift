import Foundation
import Testing

/// The engine's promises, checked against real processes: distinct crashes stay distinct, one
/// bug is one finding, a failing validator is reported as such, the format's mutations work
/// with the app's own validator, and nothing a target starts outlives the campaign.
@Suite("CLI: the engine never merges bugs, never loses processes, and combines formats with app validators")
struct CLIEngineTests {
    /// Runs a campaign and returns its only target's summary.
    func campaign(_ arguments: [String]) throws -> (result: CommandResult, target: [String: Any], reports: URL) {
        let reports = try temporaryFolder("reports")
        let result = try corruptFuzz(["run"] + arguments + ["--reports", reports.path])
        let json = try summary(in: reports)
        let target = try #require((json["targets"] as? [[String: Any]])?.first, "stderr: \(result.stderr)")
        return (result, target, reports)
    }

    /// A `--worker` campaign of the worker fixture in `mode` on a corpus of `seeds`; its corpus
    /// and reports removed after (a reproducer's path is read before).
    func workerCampaign(
        _ mode: String, seeds: [String], runs: Int, timeout: String, _ check: (CommandResult, [String: Any]) throws -> Void
    ) throws {
        let corpus = try temporaryFolder("corpus")
        defer { try? FileManager.default.removeItem(at: corpus) }
        for (index, seed) in seeds.enumerated() { try Data(seed.utf8).write(to: corpus.appendingPathComponent("\(index).txt")) }
        let (result, target, reports) = try campaign([
            "--target", "\(product("WorkerFixture")) \(mode)", "--worker", "--corpus", corpus.path, "--runs", "\(runs)", "--timeout", timeout,
        ])
        defer { try? FileManager.default.removeItem(at: reports) }
        try check(result, target)
    }

    func signatures(_ target: [String: Any], kind: String) -> [String] {
        findings(of: target).filter { $0["kind"] as? String == kind }.compactMap { $0["signature"] as? String }
    }

    @Test("two trap sites in one function of an optimized loader are two crash findings")
    func twoTrapSites() throws {
        let work = try temporaryFolder("two-traps")
        defer { try? FileManager.default.removeItem(at: work) }
        let loader = work.appendingPathComponent("two-trap-sites").path
        let compile = Process()
        compile.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        compile.arguments = ["swiftc", "-O", packageRoot.appendingPathComponent("Tests/Fixtures/TwoTrapSites/main.swift").path, "-o", loader]
        try compile.run()
        compile.waitUntilExit()
        try #require(compile.terminationStatus == 0, "swiftc -O failed")
        let corpus = work.appendingPathComponent("corpus")
        try FileManager.default.createDirectory(at: corpus, withIntermediateDirectories: true)
        try Data([0x48, 0x41, 0x01]).write(to: corpus.appendingPathComponent("a.habits"))
        try Data([0x48, 0x42, 0x00]).write(to: corpus.appendingPathComponent("b.habits"))
        let (result, target, reports) = try campaign([
            "--target", "\(loader) @@", "--corpus", corpus.path, "--runs", "1500", "--seed", "1", "--timeout", "2s",
        ])
        defer { try? FileManager.default.removeItem(at: reports) }
        #expect(result.status == 1, "stderr: \(result.stderr)")
        let crashes = signatures(target, kind: "crash")
        // Without debug info: the function and the trapping instruction (`loadHabits(_:) [two-trap-sites+0x15ae]`).
        let sites = Set(crashes.filter { $0.contains("loadHabits(_:) [two-trap-sites+0x") })
        #expect(sites.count == 2, "crash signatures: \(crashes)")
    }

    @Test("a validator message with hex checksums gives one finding, not one per checksum")
    func hexChecksums() throws {
        let corpus = try temporaryFolder("corpus")
        defer { try? FileManager.default.removeItem(at: corpus) }
        try Data("OK, a valid file with some text".utf8).write(to: corpus.appendingPathComponent("a.txt"))
        let (result, target, reports) = try campaign([
            "--target", "\(product("FixtureTarget")) accept @@", "--validator", "\(product("FixtureTarget")) checksum-validator @@",
            "--corpus", corpus.path, "--runs", "400", "--no-minimize",
        ])
        defer { try? FileManager.default.removeItem(at: reports) }
        #expect(result.status == 1)
        let checksums = signatures(target, kind: "silent-acceptance").filter { $0.contains("checksum mismatch") }
        #expect(checksums == ["corrupt: checksum mismatch: stored #, computed #"])
    }

    @Test("a validator that crashes is a validator-error check of its own, and its inputs stay unlabeled")
    func crashingValidator() throws {
        let corpus = try temporaryFolder("corpus")
        defer { try? FileManager.default.removeItem(at: corpus) }
        try Data("OK fine".utf8).write(to: corpus.appendingPathComponent("a.txt"))
        try Data("OK but BOOM".utf8).write(to: corpus.appendingPathComponent("b.txt"))
        let (result, target, reports) = try campaign([
            "--target", "\(product("FixtureTarget")) accept @@", "--validator", "\(product("FixtureTarget")) crashing-validator @@",
            "--corpus", corpus.path, "--runs", "200", "--no-minimize",
        ])
        defer { try? FileManager.default.removeItem(at: reports) }
        #expect(result.status == 1)
        let errors = signatures(target, kind: "validator-error")
        #expect(errors.contains { $0.hasPrefix("validator crash: SIGSEGV") }, "\(errors)")
        // The crashing validator's traceback is not a reason: no silent acceptance made of it.
        #expect(!signatures(target, kind: "silent-acceptance").contains { $0.contains("SIGSEGV") || $0.contains("Thread") })
        let junit = try String(contentsOf: reports.appendingPathComponent("latest/junit.xml"), encoding: .utf8)
        #expect(junit.contains(#"<failure type="validator-error""#))
        #expect(try schemaErrors(junit: reports.appendingPathComponent("latest/junit.xml").path) == nil)
    }

    @Test("validate takes the same format options as run: --format and --xsd")
    func validateWithFormats() throws {
        let archive = packageRoot.appendingPathComponent("Corpus/keyed-archives/bpylist2-date_archive.plist").path
        let habits = packageRoot.appendingPathComponent("Corpus/habits/run-and-read.habits").path
        let mixed = try corruptFuzz(["validate", "--format", "keyed-archive", archive, habits])
        #expect(mixed.status == 1, "\(mixed.stdout)\(mixed.stderr)")
        #expect(mixed.stdout.contains("\(archive): valid"))
        #expect(mixed.stdout.contains("\(habits): corrupt: "))
        let notes = try corruptFuzz(["validate", "--xsd", "Corpus/schemas/notes.xsd", "Corpus/notes/groceries.xml"])
        #expect(notes.status == 0, "\(notes.stdout)\(notes.stderr)")
        #expect(notes.stdout.contains("Corpus/notes/groceries.xml: valid"))
    }

    @Test("nothing a target starts outlives the campaign, even in a session of its own")
    func escapedProcesses() throws {
        let token = "corrupt-fuzz-escapee-\(UInt32.random(in: 0...UInt32.max))"
        let corpus = try temporaryFolder("corpus")
        defer { try? FileManager.default.removeItem(at: corpus) }
        try Data("anything".utf8).write(to: corpus.appendingPathComponent("a.txt"))
        let (result, target, reports) = try campaign([
            "--target", "\(product("FixtureTarget")) escape \(token) @@", "--corpus", corpus.path, "--runs", "12", "--no-minimize",
        ])
        defer { try? FileManager.default.removeItem(at: reports) }
        #expect(result.status == 0 || result.status == 1, "stderr: \(result.stderr)")
        #expect(processes(named: token).isEmpty, "left running: \(processes(named: token))")
        #expect((target["escapedProcessesKilled"] as? Int ?? 0) >= 12)
        for pid in processes(named: token) { kill(pid, SIGKILL) }
    }

    @Test("--worker: a crash inside the worker is one finding with the input that caused it, and the campaign goes on")
    func workerCrash() throws {
        try workerCampaign("strict", seeds: ["OK first", "OK second"], runs: 600, timeout: "2s") { result, target in
            try checkWorkerCrash(result, target)
        }
    }

    func checkWorkerCrash(_ result: CommandResult, _ target: [String: Any]) throws {
        #expect(result.status == 1, "stderr: \(result.stderr)")
        let findings = target["findings"] as? [[String: Any]] ?? []
        let crashes = findings.filter { $0["kind"] as? String == "crash" }
        #expect(crashes.count == 1, "\(findings.map { $0["signature"] ?? "" })")
        // The fork server's children killed with the worker are not processes the target left
        // running.
        #expect(target["escapedProcessesKilled"] as? Int ?? 0 == 0)
        let crash = try #require(crashes.first)
        #expect((crash["signature"] as? String)?.contains("a zero byte at") == true, "\(crash)")
        let reproducer = try #require(crash["reproducer"] as? String)
        #expect(try Data(contentsOf: URL(fileURLWithPath: reproducer)).contains(0))
        #expect((crash["hits"] as? Int ?? 0) >= 1)
        #expect(target["executions"] as? Int == 600)
        let stability = try #require(target["stability"] as? [String: Any])
        #expect(stability["differed"] as? Int == 0)
        #expect((stability["rechecked"] as? Int ?? 0) > 0)
        // The replay command runs the same executable one input at a time.
        let replay = try #require(crash["replay"] as? String)
        #expect(replay.contains("replay") && !replay.contains("--worker"), "\(replay)")
    }

    #if os(Linux)
        @Test("--worker: a lock a trap left held (the child lived through it) makes no hang, and no slow input, only the crash")
        func lockLeftByATrap() throws {
            try workerCampaign("locking", seeds: ["OK first"], runs: 80, timeout: "300ms") { result, target in
                #expect(result.status == 1, "stderr: \(result.stderr)")
                let findings = target["findings"] as? [[String: Any]] ?? []
                // (The fixture rejects an empty file as corrupt: a wrong reason, beside the point.)
                let kinds = findings.compactMap { $0["kind"] as? String }.filter { $0 != "wrong-reason" }
                #expect(kinds == ["crash"], "\(findings.map { ($0["kind"] ?? "", $0["signature"] ?? "") })")
                #expect(target["slowInputs"] as? Int ?? -1 == 0)
                #expect(target["executions"] as? Int == 80)
            }
        }
    #endif

    @Test("--worker with a command that is not a worker stops with an error that says what to do")
    func notAWorker() throws {
        let corpus = try temporaryFolder("corpus")
        defer { try? FileManager.default.removeItem(at: corpus) }
        try Data("OK".utf8).write(to: corpus.appendingPathComponent("a.txt"))
        let result = try corruptFuzz([
            "run", "--target", "\(product("FixtureTarget")) accept @@", "--worker", "--corpus", corpus.path, "--runs", "10",
            "--reports", corpus.appendingPathComponent("reports").path,
        ])
        #expect(result.status == 2)
        #expect(result.stderr.contains("is not a corrupt-fuzz worker"), "stderr: \(result.stderr)")
    }

    /// Pids of processes whose command line holds `name`.
    func processes(named name: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> Int32? in
            guard let pid = Int32(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            return String(decoding: data, as: UTF8.self).contains(name) ? pid : nil
        }
    }

    /// Two campaigns of a naive loader with a format: once with the hardened loader as the app's
    /// validator, once with the format alone. Returns both targets' summaries.
    func withAndWithoutAppValidator(
        loader: String, validator: String, format: String, corpus: String
    ) throws -> (withApp: [String: Any], formatOnly: [String: Any]) {
        let common = [
            "--target", "\(product(loader)) @@", "--format", format, "--corpus", packageRoot.appendingPathComponent(corpus).path,
            "--runs", "300", "--no-minimize", "--timeout", "2s",
        ]
        let (withApp, target, reports) = try campaign(common + ["--validator", "\(product(validator)) @@"])
        defer { try? FileManager.default.removeItem(at: reports) }
        #expect(withApp.status == 1, "stderr: \(withApp.stderr)")
        let (_, formatOnly, formatReports) = try campaign(common)
        defer { try? FileManager.default.removeItem(at: formatReports) }
        return (target, formatOnly)
    }

    @Test("--format xml with the app's own validator finds app-rule bugs the format alone cannot judge")
    func xmlFormatWithAppValidator() throws {
        let (target, formatOnly) = try withAndWithoutAppValidator(
            loader: "notes-loader-naive", validator: "notes-loader-hardened", format: "xml", corpus: "Corpus/notes")
        let appRules = signatures(target, kind: "silent-acceptance").filter { $0.contains("version") || $0.contains("id") }
        #expect(!appRules.isEmpty, "silent acceptances: \(signatures(target, kind: "silent-acceptance"))")
        // The format's own verdict is reported beside the app's.
        let details = findings(of: target).compactMap { $0["detail"] as? String }
        #expect(details.contains { $0.contains("the format's own validator") })
        let formatRules = signatures(formatOnly, kind: "silent-acceptance").filter { $0.contains("version") }
        #expect(formatRules.isEmpty, "the XML format knows no notes version rule: \(formatRules)")
    }

    @Test("--format keyed-archive with the app's own validator finds app-rule bugs the format alone cannot judge")
    func keyedArchiveWithAppValidator() throws {
        let (target, formatOnly) = try withAndWithoutAppValidator(
            loader: "friend-list-naive", validator: "friend-list-hardened", format: "keyed-archive", corpus: "Corpus/friend-lists")
        let silent = signatures(target, kind: "silent-acceptance") + signatures(target, kind: "wrong-reason")
        let formatSilent = signatures(formatOnly, kind: "silent-acceptance") + signatures(formatOnly, kind: "wrong-reason")
        // Findings only the app's rules can show (the friend list's version, names, birthdays).
        let appOnly = Set(silent).subtracting(formatSilent)
        #expect(!appOnly.isEmpty, "with the app's validator: \(silent); format alone: \(formatSilent)")
    }
}
