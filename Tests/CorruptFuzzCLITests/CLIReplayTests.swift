import CorruptFuzzCore
import Foundation
import Testing

@Suite("Replay judges as the campaign judged")
struct CLIReplayTests {
    @Test("a finding whose input is a missing file replays with --missing-file: its printed command and its replay script show it again")
    func missingFileFinding() throws {
        let reports = try temporaryFolder("replay-missing-file")
        defer { try? FileManager.default.removeItem(at: reports) }
        let run = try corruptFuzz(["run", "--target", "/bin/true @@", "--corpus", "Corpus/habits", "--runs", "20", "--reports", reports.path])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let target = try #require((try summary(in: reports)["targets"] as? [[String: Any]])?.first)
        let missing = try #require(
            findings(of: target).first { ($0["signature"] as? String)?.hasPrefix("not-found") == true }, "\(findings(of: target))")
        let replay = try #require(missing["replay"] as? String)
        #expect(replay.hasSuffix(" --missing-file"), "\(replay)")
        let again = try shell(replay)
        #expect(again.status == 1, "\(again.stdout)\(again.stderr)")
        #expect(again.stdout.contains("(a missing file): accepted"), "\(again.stdout)")
        let folder = try FileManager.default.contentsOfDirectory(atPath: reports.appendingPathComponent("latest/findings").path)
        let script = try #require(
            try folder.flatMap { target in
                try FileManager.default.contentsOfDirectory(atPath: reports.appendingPathComponent("latest/findings/\(target)").path).map {
                    reports.appendingPathComponent("latest/findings/\(target)/\($0)/replay").path
                }
            }.first { (try? String(contentsOfFile: $0, encoding: .utf8))?.contains("--missing-file") == true })
        let scripted = try shell(script)
        #expect(scripted.status == 1, "\(scripted.stdout)\(scripted.stderr)")
        #expect(scripted.stdout.contains("(a missing file): accepted"), "\(scripted.stdout)")
    }

    /// Reproducers as an `xxe` campaign saves them: they name the canary folder and the
    /// listener of a run that is over (its folder is gone, its port closed).
    static let documents: [(name: String, text: String, signature: String)] = [
        (
            "canary.xml",
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE notes [<!ENTITY xxe SYSTEM "file:///tmp/corrupt-fuzz-traps-gone1234/secret.txt">]>
            <notes version="1"><note id="1" created="2026-11-20T08:30:00Z">&xxe;</note></notes>
            """, "read a local file through an external entity"
        ),
        ("listener.xml", #"<?l?><!DOCTYPEs SYSTEM "http://127.0.0.1:9/">"#, "fetched a URL the document named"),
        (
            "listener-folder.xml",
            """
            <?xml version="1.0"?>
            <!DOCTYPE notes SYSTEM "http://127.0.0.1:9/corrupt-fuzz-traps-gone1234/external.dtd">
            <notes version="1"/>
            """, "fetched a URL the document named"
        ),
    ]

    @Test("an xxe reproducer replays as xxe: replay sets traps of its own and points the saved input at them")
    func xxeReplays() throws {
        let folder = try temporaryFolder("replay-xxe")
        defer { try? FileManager.default.removeItem(at: folder) }
        for document in Self.documents {
            let path = folder.appendingPathComponent(document.name).path
            try Data(document.text.utf8).write(to: URL(fileURLWithPath: path))
            let naive = try corruptFuzz(["replay", "--target", product("notes-loader-naive") + " @@", "--format", "notes", path])
            #expect(naive.status == 1, "\(document.name): \(naive.stdout) \(naive.stderr)")
            #expect(naive.stdout.contains("finding: xxe: \(document.signature)"), "\(document.name): \(naive.stdout)")
            // The hardened loader reads no external entity: the same file is no xxe finding.
            let hardened = try corruptFuzz(["replay", "--target", product("notes-loader-hardened") + " @@", "--format", "notes", path])
            #expect(!hardened.stdout.contains("finding: xxe"), "\(document.name): \(hardened.stdout)")
        }
    }
}
