import Foundation
import Testing

@Suite("The bundled demo")
struct DemoTests {
    @Test("finds crash, hang, silent acceptance and wrong reasons in the naive loaders and nothing in the hardened ones")
    func demo() throws {
        let reports = try temporaryFolder("demo")
        defer { try? FileManager.default.removeItem(at: reports) }
        let result = try corruptFuzz(["run", "--duration", "12s", "--reports", reports.path])
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
        #expect(!kinds(of: naiveNotes).isDisjoint(with: ["hang", "oom"]), "entity expansion: \(kinds(of: naiveNotes))")
        let noteDetails = findings(of: naiveNotes).compactMap { $0["signature"] as? String }
        #expect(noteDetails.contains { $0.contains("The attribute 'id' is required but missing") }, "\(noteDetails)")
        #expect(findings(of: hardenedNotes).isEmpty, "hardened notes: \(findings(of: hardenedNotes))")

        let junit = try String(contentsOf: reports.appendingPathComponent("latest/junit.xml"), encoding: .utf8)
        #expect(junit.contains(#"<testsuite name="habit-loader-naive""#))
        #expect(junit.contains(#"<testsuite name="habit-loader-hardened" tests="7" failures="0""#))
        for finding in findings(of: naive) {
            if let path = finding["reproducer"] as? String {
                #expect(FileManager.default.fileExists(atPath: path))
            }
        }
    }
}
