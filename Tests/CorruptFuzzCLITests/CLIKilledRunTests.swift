import CorruptFuzzCore
import Foundation
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("CLI: a campaign killed with SIGKILL (a CI job's timeout) leaves every finding found so far")
struct CLIKilledRunTests {
    /// The folder of a crash saved with its input in `found/` under `reports`, once its record
    /// (written last) is there.
    func savedCrash(in reports: URL) -> URL? {
        let files = FileManager.default
        for run in (try? files.contentsOfDirectory(atPath: reports.path)) ?? [] where run != "latest" {
            let found = reports.appendingPathComponent("\(run)/found")
            for target in (try? files.contentsOfDirectory(atPath: found.path)) ?? [] {
                for entry in (try? files.contentsOfDirectory(atPath: found.appendingPathComponent(target).path)) ?? [] where entry.hasPrefix("crash-") {
                    let folder = found.appendingPathComponent("\(target)/\(entry)")
                    guard let data = files.contents(atPath: folder.appendingPathComponent("finding.json").path),
                        let record = try? JSONSerialization.jsonObject(with: data) as? [String: Any], record["input"] is String
                    else { continue }
                    return folder
                }
            }
        }
        return nil
    }

    /// Kills the processes whose environment holds `marker`: the targets a killed corrupt-fuzz
    /// left running (each in a process group of its own, so the kill did not reach them).
    func killLeftovers(marked marker: String) {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), pid != getpid(), let environ = FileManager.default.contents(atPath: "/proc/\(entry)/environ") else { continue }
            if environ.split(separator: 0).contains(where: { String(decoding: $0, as: UTF8.self) == marker }) { kill(pid, SIGKILL) }
        }
    }

    /// Every file below `folder`, as paths relative to it.
    func files(below folder: URL) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        var out: [String] = []
        while let path = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent(path).path, isDirectory: &isDirectory), !isDirectory.boolValue {
                out.append(path)
            }
        }
        return out.sorted()
    }

    /// Whether every JSON file (`.json`, `.sarif`) below `folder` parses, and every `.xml`.
    func checkParses(below folder: URL) throws -> Int {
        var checked = 0
        for path in files(below: folder) where !URL(fileURLWithPath: path).lastPathComponent.hasPrefix(".") {
            let url = folder.appendingPathComponent(path)
            if path.hasSuffix(".json") || path.hasSuffix(".sarif") {
                #expect(throws: Never.self, "\(path)") { try JSONSerialization.jsonObject(with: Data(contentsOf: url)) }
                checked += 1
            } else if path.hasSuffix(".xml") {
                let parser = try #require(XMLParser(contentsOf: url))
                #expect(parser.parse(), "\(path): \(String(describing: parser.parserError))")
                checked += 1
            }
        }
        return checked
    }

    @Test("killed after its first crash: its input is on disk and replays, every file parses, merge reads the folder", .timeLimit(.minutes(10)))
    func killedAfterFirstCrash() throws {
        let work = try temporaryFolder("killed")
        defer { try? FileManager.default.removeItem(at: work) }
        let reports = work.appendingPathComponent("reports")
        let marker = "CORRUPT_FUZZ_KILLED_RUN_TEST=\(UUID().uuidString)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: product("corrupt-fuzz"))
        // Far longer than the test waits: fuzzing is still going on when it is killed, so no
        // report has been written.
        process.arguments = [
            "run", "--target", "\(product("habit-loader-naive")) @@", "--schema", "Corpus/schemas/habit-tracker.ksy", "--corpus", "Corpus/habits",
            "--duration", "60m", "--jobs", "1", "--seed", "7", "--reports", reports.path,
        ]
        process.currentDirectoryURL = packageRoot
        var environment = ProcessInfo.processInfo.environment
        environment[String(marker.prefix { $0 != "=" })] = String(marker.drop { $0 != "=" }.dropFirst())
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let log = work.appendingPathComponent("stderr.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: log)
        defer { try? logHandle.close() }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = logHandle
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            killLeftovers(marked: marker)
        }

        // The outcome polled for: a crash's record in found/. The bound is only against a
        // campaign that never finds one (it takes well under a second on an idle machine).
        var crash: URL?
        let giveUp = Date().addingTimeInterval(300)
        while crash == nil, process.isRunning, Date() < giveUp {
            crash = savedCrash(in: reports)
            if crash == nil { usleep(20_000) }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        killLeftovers(marked: marker)
        let stderr = String(decoding: (try? Data(contentsOf: log)) ?? Data(), as: UTF8.self)
        let folder = try #require(crash, "no crash's input was saved in found/ while the campaign ran: \(files(below: reports)) \(stderr)")
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL, "\(stderr)")
        let run = folder.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        // Killed while fuzzing: no report was written; found/ is all there is.
        #expect(!FileManager.default.fileExists(atPath: run.appendingPathComponent("report.json").path))

        // The crash's input is there, whole, and replays as a crash: with its record's command,
        // and with the script beside it.
        let record = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("finding.json"))) as? [String: Any])
        let input = folder.appendingPathComponent(try #require(record["input"] as? String))
        #expect(FileManager.default.fileExists(atPath: input.path))
        let replayCommand = try #require(record["replayCommand"] as? String)
        let replayed = try shell(replayCommand)
        #expect(replayed.status == 1, "\(replayCommand): \(replayed.stdout) \(replayed.stderr)")
        #expect(replayed.stdout.contains("finding: crash: "), "\(replayed.stdout)")
        let script = try runProcess("/bin/sh", [folder.appendingPathComponent("replay").path], in: packageRoot)
        #expect(script.stdout.contains("finding: crash: "), "\(script.stdout) \(script.stderr)")

        // Every JSON and XML file parses; nothing is half-written: each name is a report
        // file, or a write's hidden temporary file that readers skip.
        #expect(try checkParses(below: run) >= 2)
        let expected = ["campaign.json", "finding.json", "replay", "input.habits"]
        for path in files(below: run) {
            let name = URL(fileURLWithPath: path).lastPathComponent
            #expect(expected.contains(name) || AtomicFile.isTemporary(name), "\(path)")
        }

        // merge reads the folder: every finding saved in found/ is in its report, with a
        // reproducer that is there, and its files parse.
        let savedFindings = files(below: run).filter { $0.hasSuffix("/finding.json") }.count
        let merged = work.appendingPathComponent("merged")
        let merge = try corruptFuzz(["merge", run.path, "--reports", merged.path])
        #expect(merge.status == 1, "\(merge.stdout) \(merge.stderr)")
        #expect(merge.stderr.contains("the run ended before its report"), "\(merge.stderr)")
        let target = try #require((try summary(in: merged)["targets"] as? [[String: Any]])?.first)
        #expect(findings(of: target).count == savedFindings)
        #expect(kinds(of: target).contains("crash"))
        for finding in findings(of: target) {
            if let path = finding["reproducer"] as? String { #expect(FileManager.default.fileExists(atPath: path), "\(path)") }
        }
        #expect(try checkParses(below: merged) >= 4)
        if let problem = try schemaErrors(junit: merged.appendingPathComponent("latest/junit.xml").path) { Issue.record("\(problem)") }
    }
}
