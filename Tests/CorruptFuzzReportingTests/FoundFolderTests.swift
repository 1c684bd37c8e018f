import CorruptFuzzCore
import CorruptFuzzReporting
import CorruptFuzzRunner
import Foundation
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

@Suite("found/: each finding on disk as it is found, read back by merge from a run killed before its report")
struct FoundFolderTests {
    /// A report folder with the sample report's first suite's findings saved as they were found
    /// (no report written), and its writer.
    private func savedAsFound() throws -> (root: String, writer: ReportWriter, suite: RunReport.Suite) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("found-\(UUID().uuidString)").path
        let writer = try ReportWriter(root: root, runID: "run-1", workingDirectory: root)
        let suite = sampleReport(stderr: []).suites[0]
        let found = FoundFolder(writer: writer)
        for record in suite.result.findings { found.save(record, of: suite) }
        #expect(found.error == nil)
        return (root, writer, suite)
    }

    /// The folders of the saved findings of the sample's target.
    private func findingFolders(_ writer: ReportWriter) throws -> [String] {
        let target = writer.folder.appendingPathComponent("found/naive-loader-co").path
        return try FileManager.default.contentsOfDirectory(atPath: target).filter { $0 != FoundFolder.campaignFile }.sorted().map {
            "\(target)/\($0)"
        }
    }

    @Test("each finding's input, record and replay script are saved at once, and read back as the report's findings")
    func savesAndReads() throws {
        let (root, writer, suite) = try savedAsFound()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folders = try findingFolders(writer)
        #expect(folders.count == 2)
        for folder in folders {
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["finding.json", "input.habits", "replay"])
            #expect(FileManager.default.contents(atPath: "\(folder)/input.habits") == Data([0, 1, 2]))
            #expect(access("\(folder)/replay", X_OK) == 0)
            let record = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(folder)/finding.json"))) as? [String: Any])
            // Relative to the folder the run started in.
            #expect(
                record["replayCommand"] as? String
                    == "corrupt-fuzz replay --target './naive @@' --format habit-tracker run-1/found/naive-loader-co/\(URL(fileURLWithPath: folder).lastPathComponent)/input.habits"
            )
        }
        // `latest` names the run before any report is written.
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "\(root)/latest") == "run-1")

        let (report, notes) = try ReportWriter.readRun(in: writer.folder.path)
        #expect(notes.count == 1, "\(notes)")
        let read = try #require(report.suites.first)
        #expect(read.result.targetName == suite.result.targetName)
        #expect(read.result.findings.map(\.finding.key) == suite.result.findings.map(\.finding.key))
        #expect(read.result.findings.map(\.finding.input.bytes) == [[0, 1, 2], [0, 1, 2]])
        #expect(read.result.findings.map(\.hits) == [3, 1])
        #expect(read.result.stopReason == .interrupted)
        #expect(read.result.toolError?.contains("ended before its report") == true)
    }

    @Test("a finding left half-saved, a missing input, a torn record or report.json, and temporary files are skipped or read around, never fatal")
    func tornFolders() throws {
        let (root, writer, _) = try savedAsFound()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folders = try findingFolders(writer)
        let target = URL(fileURLWithPath: folders[0]).deletingLastPathComponent().path
        // The second finding's input is gone; a third finding's record was never written; a
        // write was killed before its rename.
        try FileManager.default.removeItem(atPath: "\(folders[1])/input.habits")
        try FileManager.default.createDirectory(atPath: "\(target)/crash-ffff", withIntermediateDirectories: true)
        try Data([9]).write(to: URL(fileURLWithPath: "\(target)/crash-ffff/input.habits"))
        try Data("{\"kind\": \"cra".utf8).write(to: URL(fileURLWithPath: "\(target)/crash-ffff/.finding.json\(AtomicFile.temporaryMarker)1-2"))
        try Data("{\"kind\": \"cra".utf8).write(to: URL(fileURLWithPath: "\(target)/.campaign.json\(AtomicFile.temporaryMarker)1-2"))
        // A report.json cut short (not one corrupt-fuzz wrote: its writes are whole).
        try Data("{\"runID\": \"run-1\", \"suites\": [".utf8).write(to: writer.folder.appendingPathComponent("report.json"))

        let (report, notes) = try ReportWriter.readRun(in: writer.folder.path)
        #expect(report.suites.count == 1)
        #expect(report.suites.first?.result.findings.count == 1)
        #expect(notes.contains { $0.contains("crash-ffff") && $0.contains("finding.json") }, "\(notes)")
        #expect(notes.contains { $0.contains("input.habits is missing") }, "\(notes)")
        #expect(notes.contains { $0.contains("report.json") }, "\(notes)")

        // Without its campaign.json, a target's findings cannot be told apart: skipped, noted.
        try FileManager.default.removeItem(atPath: "\(target)/\(FoundFolder.campaignFile)")
        try FileManager.default.removeItem(atPath: writer.folder.appendingPathComponent("report.json").path)
        #expect(throws: CorruptFuzzError.self) { try ReportWriter.readRun(in: writer.folder.path) }
        #expect(FoundFolder.read(in: writer.folder.path).notes.contains { $0.contains(FoundFolder.campaignFile) })
    }

    @Test("merge of a folder a killed run left gives a whole report with its findings' reproducers")
    func mergeKilledRun() throws {
        let (root, writer, suite) = try savedAsFound()
        defer { try? FileManager.default.removeItem(atPath: root) }
        var notes: [String] = []
        let merged = try ReportMerge.merge([writer.folder.path], into: root + "/merged", known: nil, note: { notes.append($0) })
        #expect(merged.suites.first?.result.findings.map(\.finding.key) == suite.result.findings.map(\.finding.key))
        #expect(merged.newFindingCount == 2)
        #expect(notes.contains { $0.contains("ended before its report") }, "\(notes)")
        for reproducer in merged.suites.first?.reproducers ?? [] {
            #expect(FileManager.default.contents(atPath: try #require(reproducer.original)) == Data([0, 1, 2]))
            #expect(FileManager.default.fileExists(atPath: try #require(reproducer.minimized)))
        }
        let folder = URL(fileURLWithPath: merged.folder)
        for name in ["summary.json", "report.json", "results.sarif"] {
            #expect(throws: Never.self) { try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(name))) }
        }
        #expect(XMLParser(contentsOf: folder.appendingPathComponent("junit.xml"))?.parse() == true)
        // A report that saw the campaign end is read as it is: found/ adds nothing to it.
        var whole = sampleReport(stderr: [])
        whole.suites[0].result.findings.removeLast()
        try writer.saveReproducers(&whole.suites)
        try writer.writeReport(whole)
        let (report, _) = try ReportWriter.readRun(in: writer.folder.path)
        #expect(report.suites.map(\.result.findings.count) == [1, 0])
    }
}
