import Foundation
import Testing

@Suite("CLI: usage and configuration errors exit 2 with a clear message")
struct CLIErrorTests {
    func expectError(_ arguments: [String], mentions text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try corruptFuzz(arguments)
        #expect(result.status == 2, "exit status \(result.status); stderr: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(text), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
    }

    @Test("a target that does not exist")
    func missingTarget() throws {
        try expectError(["run", "--target", "/nonexistent/loader @@", "--corpus", "Corpus/habits"], mentions: "target not found")
    }

    @Test("a target that is not executable")
    func notExecutable() throws {
        try expectError(["run", "--target", "Corpus/habits/README.md @@", "--corpus", "Corpus/habits"], mentions: "not an executable")
    }

    @Test("a corpus folder that does not exist")
    func missingCorpus() throws {
        try expectError(["run", "--target", "\(product("FixtureTarget")) file @@", "--corpus", "/nonexistent/corpus"], mentions: "corpus folder not found")
    }

    @Test("an empty corpus folder")
    func emptyCorpus() throws {
        let folder = try temporaryFolder("empty")
        defer { try? FileManager.default.removeItem(at: folder) }
        try expectError(["run", "--target", "\(product("FixtureTarget")) file @@", "--corpus", folder.path], mentions: "holds no files")
    }

    @Test("a target that needs a path but got no @@")
    func needsPath() throws {
        let reports = try temporaryFolder("reports")
        defer { try? FileManager.default.removeItem(at: reports) }
        try expectError(
            ["run", "--target", "\(product("FixtureTarget")) file", "--corpus", "Corpus/habits", "--runs", "50", "--reports", reports.path],
            mentions: "put @@ where the path goes")
    }

    @Test("an unwritable reports folder")
    func unwritableReports() throws {
        try expectError(
            ["run", "--target", "\(product("FixtureTarget")) file @@", "--corpus", "Corpus/habits", "--reports", "/proc/corrupt-fuzz"],
            mentions: "cannot write to the reports folder")
    }

    @Test(
        "bad option values and combinations",
        arguments: [
            (["run", "--duration", "soon"], "The value 'soon' is invalid for '--duration"),
            (["run", "--target", "/bin/true @@"], "--target needs --corpus"),
            (["run", "--schema", "x.ksy"], "need --target"),
            (
                ["run", "--target", "/bin/true @@", "--corpus", "Corpus/notes", "--format", "notes", "--xsd", "Corpus/schemas/notes.xsd"],
                "needs --format xml, not notes"
            ),
            (["roundtrip", "--loader", "/bin/true @@", "--writer", "/bin/true", "--corpus", "Corpus/notes", "--format", "nope"], "unknown format 'nope'"),
            (["crashpoints", "--target", "/bin/true @@", "--data", "Corpus/notes", "--format", "x.txt"], "unknown format 'x.txt'"),
            (["skew", "--older", "/bin/true @@", "--newer", "/bin/true @@", "--older-corpus", "Corpus/notes", "--newer-format", "nope"], "unknown format"),
            (["run", "--schema", "a.ksy", "--xsd", "b.xsd"], "not both"),
            (["run", "--memory-limit", "lots"], "The value 'lots' is invalid for '--memory-limit"),
            (["run", "--runs", "0"], "--runs must be positive"),
            (["run", "--format", "nope"], "unknown format"),
            (["replay", "x"], "replay needs --target"),
        ])
    func badOptions(arguments: [String], message: String) throws {
        try expectError(arguments, mentions: message)
    }
}
