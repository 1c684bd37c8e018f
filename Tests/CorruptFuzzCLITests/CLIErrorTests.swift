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

    @Test("replay and validate of a file that does not exist, or is a folder, exit 2 naming it (a CI step with a typo fails)")
    func missingFiles() throws {
        let folder = try temporaryFolder("missing-files")
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("typo.habits").path
        try expectError(["replay", "--target", "/bin/cat @@", missing], mentions: "reproducer \(missing) does not exist")
        try expectError(["replay", "--target", "/bin/cat @@", folder.path], mentions: "reproducer \(folder.path) is a folder, not a file")
        try expectError(["validate", "--format", "notes", missing], mentions: "file \(missing) does not exist")
        try expectError(["validate", "--schema", "Corpus/schemas/habit-tracker.ksy", folder.path], mentions: "is a folder, not a file")
        // One good file beside the typo does not make it pass.
        try expectError(["replay", "--target", "/bin/cat @@", "Corpus/habits/README.md", missing], mentions: "does not exist")
    }

    @Test("replay --missing-file replays the missing-file input on purpose: a loader that accepts it is a finding")
    func replayMissingFile() throws {
        let accepts = try corruptFuzz(["replay", "--target", "/bin/true @@", "--missing-file"])
        #expect(accepts.status == 1, "\(accepts.stdout)\(accepts.stderr)")
        #expect(accepts.stdout.contains("(a missing file): accepted"), "\(accepts.stdout)")
        #expect(accepts.stdout.contains("finding: silent-acceptance: not-found"), "\(accepts.stdout)")
        let rejects = try corruptFuzz(["replay", "--target", "/bin/cat @@", "--missing-file"])
        #expect(rejects.status == 0, "\(rejects.stdout)\(rejects.stderr)")
        #expect(rejects.stdout.contains("no finding"), "\(rejects.stdout)")
    }

    @Test("a .ksy whose type contains itself with nothing to end it is an error naming the file and the cycle, in every command")
    func recursiveSchema() throws {
        let folder = try temporaryFolder("recursive-ksy")
        defer { try? FileManager.default.removeItem(at: folder) }
        let schema = folder.appendingPathComponent("self.ksy")
        try
            "meta: {id: selfref}\nseq:\n  - id: head\n    type: node\ntypes:\n  node:\n    seq:\n      - id: tag\n        type: u1\n      - id: child\n        type: node\n"
            .write(to: schema, atomically: true, encoding: .utf8)
        let file = folder.appendingPathComponent("in.bin")
        try Data([1, 0]).write(to: file)
        let message = "\(schema.path): types.node contains itself with nothing that can end it: node.child (type node) → node"
        try expectError(["validate", "--schema", schema.path, file.path], mentions: message)
        try expectError(["generate", "--schema", schema.path, "--out", folder.appendingPathComponent("out").path], mentions: message)
        try expectError(
            ["run", "--target", "/bin/cat @@", "--schema", schema.path, "--runs", "50", "--reports", folder.appendingPathComponent("reports").path],
            mentions: message)
    }
}
