import CorruptFuzzExamples
import CorruptFuzzCore
import Foundation
import Testing

@Suite("The bundled demo")
struct DemoTests {
    @Test("finds crash, hang, silent acceptance and wrong reasons in the naive loaders and nothing in the hardened ones")
    func demo() throws {
        try checkDemo(executable: product("corrupt-fuzz"), seconds: 14)
    }

    /// The release build, as users run it: optimized code frees memory at a value's last use,
    /// which the debug build hides (the notes schema was parsed from a freed buffer, and the
    /// release demo trapped in 5 runs of 6). Runs when CORRUPT_FUZZ_RELEASE_PRODUCTS names the
    /// release build's products folder, as .ci/run does.
    @Test(
        "the release build's demo ends with its report, exit 1, and no finding for a hardened loader",
        .enabled(if: releaseProducts != nil, "set CORRUPT_FUZZ_RELEASE_PRODUCTS to the release build's products folder"))
    func releaseDemo() throws {
        let products = try #require(releaseProducts)
        try checkDemo(executable: products.appendingPathComponent("corrupt-fuzz").path, seconds: 14)
    }

    func checkDemo(executable: String, seconds: Int) throws {
        let reports = try temporaryFolder("demo")
        defer { try? FileManager.default.removeItem(at: reports) }
        // The demo's campaigns share the duration: `seconds` each, at least 14 so that a hang's
        // check in a fresh process (5.5 s), when its confirmation was not that check, fits the
        // two fifths a campaign keeps for one check.
        let total = seconds * BundledDemo.campaignCount
        let result = try corruptFuzz(["run", "--duration", "\(total)s", "--reports", reports.path], executable: executable)
        #expect(result.status == 1, "stderr: \(result.stderr)")
        #expect(try schemaErrors(junit: reports.appendingPathComponent("latest/junit.xml").path) == nil)

        let targets = try #require(try summary(in: reports)["targets"] as? [[String: Any]])
        let naive = try #require(targets.first { $0["name"] as? String == "habit-loader-naive" })
        let hardened = try #require(targets.first { $0["name"] as? String == "habit-loader-hardened" })
        #expect(kinds(of: naive).isSuperset(of: ["crash", "hang", "silent-acceptance", "wrong-reason"]), "naive: \(kinds(of: naive))")
        #expect(findings(of: hardened).isEmpty, "hardened: \(findings(of: hardened))")

        let naiveFriends = try #require(targets.first { $0["name"] as? String == "friend-list-naive" })
        let hardenedFriends = try #require(targets.first { $0["name"] as? String == "friend-list-hardened" })
        #expect(kinds(of: naiveFriends).isSuperset(of: ["crash", "silent-acceptance", "wrong-reason"]), "naive friends: \(kinds(of: naiveFriends))")
        let details = findings(of: naiveFriends).compactMap { $0["detail"] as? String }
        #expect(details.contains { $0.contains("version: missing") }, "\(details)")
        #expect(findings(of: hardenedFriends).isEmpty, "hardened friends: \(findings(of: hardenedFriends))")

        let naiveNotes = try #require(targets.first { $0["name"] as? String == "notes-loader-naive" })
        let hardenedNotes = try #require(targets.first { $0["name"] as? String == "notes-loader-hardened" })
        #expect(kinds(of: naiveNotes).isSuperset(of: ["crash", "xxe", "silent-acceptance"]), "naive notes: \(kinds(of: naiveNotes))")
        // Entity expansion: a hang, the memory limit, or a document libxml2 stopped expanding
        // (its amplification error) accepted.
        let expansion = findings(of: naiveNotes).contains { finding in
            ["hang", "oom"].contains(finding["kind"] as? String ?? "") || (finding["signature"] as? String ?? "").hasSuffix("XML_ERR_ENTITY_LOOP")
        }
        #expect(expansion, "entity expansion: \(findings(of: naiveNotes).compactMap { $0["signature"] as? String })")
        // Signatures leave out what a message quotes; the detail keeps it.
        let noteSignatures = findings(of: naiveNotes).compactMap { $0["signature"] as? String }
        #expect(noteSignatures.contains { $0.contains("The attribute '…' is required but missing") }, "\(noteSignatures)")
        let noteDetails = findings(of: naiveNotes).compactMap { $0["detail"] as? String }
        #expect(noteDetails.contains { $0.contains("The attribute 'id' is required but missing") }, "\(noteDetails)")
        #expect(findings(of: hardenedNotes).isEmpty, "hardened notes: \(findings(of: hardenedNotes))")

        let naiveStore = try #require(targets.first { $0["name"] as? String == "note-store-naive" })
        let hardenedStore = try #require(targets.first { $0["name"] as? String == "note-store-hardened" })
        #expect(kinds(of: naiveStore).isSuperset(of: ["crash", "silent-acceptance"]), "naive store: \(kinds(of: naiveStore))")
        let storeSignatures = findings(of: naiveStore).compactMap { $0["signature"] as? String }
        #expect(storeSignatures.contains { $0.contains("the log drops committed transactions") }, "\(storeSignatures)")
        #expect(findings(of: hardenedStore).isEmpty, "hardened store: \(findings(of: hardenedStore))")

        let junit = try String(contentsOf: reports.appendingPathComponent("latest/junit.xml"), encoding: .utf8)
        #expect(junit.contains(#"<testsuite name="habit-loader-naive""#))
        #expect(junit.contains(#"<testsuite name="habit-loader-hardened" tests="\#(FindingKind.campaignChecks.count)" failures="0""#))

        // Versions and writers: version 1 of the friend list against version 2's files and
        // writer, the notes writers through load, save, load.
        func target(_ name: String) throws -> [String: Any] { try #require(targets.first { $0["name"] as? String == name }, "\(name)") }
        #expect(kinds(of: try target("friend-list-naive reads friend-list-v2")) == ["lost-on-downgrade"])
        #expect(findings(of: try target("friend-list-hardened reads friend-list-v2")).isEmpty)
        #expect(findings(of: try target("friend-list-v2 reads friend-list-naive")).isEmpty)
        #expect(findings(of: try target("friend-list-v2 reads friend-list-hardened")).isEmpty)
        #expect(kinds(of: try target("round trip: notes-writer-naive")) == ["writer-corruption"])
        #expect(findings(of: try target("round trip: notes-writer-hardened")).isEmpty)
        // One test case per finding, named by its kind and signature.
        let downgrade = try #require(findings(of: try target("friend-list-naive reads friend-list-v2")).first?["signature"] as? String)
        let escaped = downgrade.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(
            of: ">", with: "&gt;"
        ).replacingOccurrences(of: "\"", with: "&quot;")
        #expect(junit.contains(#"<testcase name="lost-on-downgrade: \#(escaped)" classname="corrupt-fuzz.friend-list-naive reads friend-list-v2""#))
        // The notes migration cut short at every write.
        let naiveMigration = try target("crash points: notes-migrate-naive")
        #expect(
            kinds(of: naiveMigration).isSuperset(of: ["torn-state", "lost-data", "duplicate-data", "stray-file", "held-lock"]), "\(kinds(of: naiveMigration))")
        #expect(findings(of: try target("crash points: notes-migrate-hardened")).isEmpty)
        // A note saved under every I/O fault at every operation.
        let naiveSave = try target("crash points: notes-save-naive")
        #expect(kinds(of: naiveSave).isSuperset(of: ["unreported-io-error", "torn-state", "lost-data"]), "\(kinds(of: naiveSave))")
        #expect(findings(of: try target("crash points: notes-save-hardened")).isEmpty)
        for finding in findings(of: naive) {
            if let path = finding["reproducer"] as? String {
                #expect(FileManager.default.fileExists(atPath: path))
            }
        }
        try replayEveryReproducer(targets)
    }

    /// Every campaign finding's printed replay command, run as printed from the repository root,
    /// must show the finding again: its kind and its signature; or, for a finding a persistent
    /// worker showed and a fresh process did not (`freshProcess: not reproduced`), what the report
    /// says the replay shows instead. (Checks of versions, writers and crash points replay by
    /// their own commands, which their own tests run.)
    func replayEveryReproducer(_ targets: [[String: Any]]) throws {
        var commands: [(command: String, expected: String?)] = []
        var workerOnly: [String] = []
        for target in targets {
            for finding in findings(of: target) {
                guard let command = finding["replay"] as? String, command.contains(" replay --target "),
                    let kind = finding["kind"] as? String, let signature = finding["signature"] as? String
                else { continue }
                if let instead = finding["freshProcessFinding"] as? String {
                    workerOnly.append("\(kind): \(signature) (a fresh process: \(instead))")
                    commands.append((command, instead == "none" ? nil : "finding: \(instead)"))
                } else if finding["freshProcess"] as? String == "site varies" {
                    // A memory fault whose site the report says varies from run to run: the
                    // replay shows the kind, at one of its sites.
                    commands.append((command, "finding: \(kind): "))
                } else {
                    commands.append((command, "finding: \(kind): \(signature)"))
                }
            }
        }
        #expect(commands.count > 20, "\(commands.count) replay commands")
        // A finding that depends on the worker's state is reported as such, but it must stay rare
        // in the demo: most of its loaders keep no state.
        #expect(workerOnly.count <= commands.count / 10, "\(workerOnly.count) findings only a worker showed: \(workerOnly)")
        let results = LockedResults()
        let all = commands
        DispatchQueue.concurrentPerform(iterations: all.count) { index in
            let (command, expected) = all[index]
            let output = (try? shell(command))?.stdout ?? ""
            let replayed = expected.map { output.contains($0) } ?? (!output.isEmpty && !output.contains("finding: "))
            if !replayed { results.add("\(command)\n  expected \(expected ?? "no finding")\n  got: \(output.prefix(600))") }
        }
        #expect(
            results.all.isEmpty,
            "\(results.all.count) of \(commands.count) reproducers did not replay to their finding:\n\(results.all.prefix(5).joined(separator: "\n"))")
    }
}

/// Lines gathered from concurrent replays.
private final class LockedResults: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}
