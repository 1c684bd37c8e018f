import Foundation
import Testing

@Suite("The bundled demo")
struct DemoTests {
    @Test("finds crash, hang and silent acceptance in the naive loader and nothing in the hardened one")
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

        let junit = try String(contentsOf: reports.appendingPathComponent("latest/junit.xml"), encoding: .utf8)
        #expect(junit.contains(#"<testsuite name="habit-loader-naive""#))
        #expect(junit.contains(#"<testsuite name="habit-loader-hardened" tests="6" failures="0""#))
        for finding in findings(of: naive) {
            if let path = finding["reproducer"] as? String {
                #expect(FileManager.default.fileExists(atPath: path))
            }
        }
    }
}
