import Foundation
import Testing

/// `corrupt-fuzz skew` and `corrupt-fuzz roundtrip` against the bundled programs: version 1 and
/// 2 of the friend list, the notes app's two writers.
@Suite("Version skew and round trips from the command line")
struct CLIDocumentCheckTests {
    @Test("skew: the naive version 1 loses version 2's nicknames, the hardened one says unsupported-version; a replay finds it again")
    func skew() throws {
        let reports = try temporaryFolder("skew")
        defer { try? FileManager.default.removeItem(at: reports) }
        func skew(_ older: String, extra: [String] = []) throws -> CommandResult {
            try corruptFuzz(
                [
                    "skew", "--older", "\(product(older)) @@", "--newer", "\(product("friend-list-v2")) @@",
                    "--newer-writer", "\(product("friend-list-v2")) resave @@ @out", "--newer-format", "friend-list-v2",
                    "--reports", reports.path,
                ] + extra)
        }
        let naive = try skew("friend-list-naive", extra: ["--older-corpus", "Corpus/friend-lists", "--generate", "8", "--worker"])
        #expect(naive.status == 1, "\(naive.stderr)")
        #expect(try schemaErrors(junit: reports.appendingPathComponent("latest/junit.xml").path) == nil)
        let targets = try #require(try summary(in: reports)["targets"] as? [[String: Any]])
        let downgrade = try #require(targets.first { $0["name"] as? String == "friend-list-naive reads friend-list-v2" })
        let upgrade = try #require(targets.first { $0["name"] as? String == "friend-list-v2 reads friend-list-naive" })
        #expect(kinds(of: downgrade) == ["lost-on-downgrade"])
        #expect(findings(of: upgrade).isEmpty, "\(findings(of: upgrade))")
        let finding = try #require(findings(of: downgrade).first)
        #expect(finding["signature"] as? String == "fields of a line lost")
        let reproducer = try #require(finding["reproducer"] as? String)

        // The replay command in the report checks the one file again, in its role.
        let junit = try String(contentsOf: reports.appendingPathComponent("latest/junit.xml"), encoding: .utf8)
        #expect(junit.contains("--newer-corpus \(reproducer)"))
        let replay = try skew("friend-list-naive", extra: ["--newer-corpus", reproducer])
        #expect(replay.status == 1)
        #expect(replay.stdout.contains("lost-on-downgrade: fields of a line lost"), "\(replay.stdout)")

        let hardened = try skew("friend-list-hardened", extra: ["--older-corpus", "Corpus/friend-lists", "--generate", "8"])
        #expect(hardened.status == 0, "\(hardened.stdout)\(hardened.stderr)")
        #expect(hardened.stdout.contains("friend-list-hardened reads friend-list-v2: "), "\(hardened.stdout)")
    }

    @Test("skew: an older loader that calls a newer file corrupt gives a wrong reason; a newer one that refuses an older file, a false rejection")
    func skewReasons() throws {
        let reports = try temporaryFolder("skew-reasons")
        defer { try? FileManager.default.removeItem(at: reports) }
        let folder = try temporaryFolder("skew-files")
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"<notes version="1"/>"#.utf8).write(to: folder.appendingPathComponent("v1.xml"))
        try Data(#"<notes version="2"/>"#.utf8).write(to: folder.appendingPathComponent("v2.xml"))
        // The older app reads version 1 and calls anything else corrupt; the newer one reads
        // only version 2 (its migration of version 1 is missing).
        let older = #"/bin/sh -c 'grep -q "version=.1" "$1" && cat "$1" && exit 0; echo "reason: corrupt" >&2; exit 1' older @@"#
        let newer = #"/bin/sh -c 'grep -q "version=.2" "$1" && cat "$1" && exit 0; echo "reason: corrupt" >&2; exit 1' newer @@"#
        let result = try corruptFuzz([
            "skew", "--older", older, "--newer", newer, "--older-corpus", folder.appendingPathComponent("v1.xml").path,
            "--newer-corpus", folder.appendingPathComponent("v2.xml").path, "--older-name", "v1", "--newer-name", "v2", "--reports", reports.path,
        ])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(try schemaErrors(junit: reports.appendingPathComponent("latest/junit.xml").path) == nil)
        let targets = try #require(try summary(in: reports)["targets"] as? [[String: Any]])
        let downgrade = try #require(targets.first { $0["name"] as? String == "v1 reads v2" })
        let upgrade = try #require(targets.first { $0["name"] as? String == "v2 reads v1" })
        #expect(findings(of: downgrade).map { $0["signature"] as? String } == ["expected unsupported-version, got corrupt"])
        #expect(findings(of: upgrade).map { $0["signature"] as? String } == ["rejects a file of the older version as corrupt"])
    }

    @Test("roundtrip: the naive notes writer saves invalid documents, with the saved file beside the reproducer; the hardened one passes")
    func roundTrip() throws {
        let reports = try temporaryFolder("roundtrip")
        defer { try? FileManager.default.removeItem(at: reports) }
        func roundTrip(_ writer: String) throws -> CommandResult {
            try corruptFuzz([
                "roundtrip", "--loader", "\(product("notes-loader-hardened")) @@", "--writer", "\(product(writer)) @@ @out",
                "--corpus", "Corpus/notes", "--format", "notes", "--generate", "30", "--reports", reports.path, "--worker",
            ])
        }
        let naive = try roundTrip("notes-writer-naive")
        #expect(naive.status == 1, "\(naive.stdout)\(naive.stderr)")
        #expect(try schemaErrors(junit: reports.appendingPathComponent("latest/junit.xml").path) == nil)
        let target = try #require((try summary(in: reports)["targets"] as? [[String: Any]])?.first)
        #expect(kinds(of: target) == ["writer-corruption"])
        let finding = try #require(findings(of: target).first)
        #expect((finding["signature"] as? String)?.hasPrefix("saved an invalid document") == true, "\(finding)")
        let folder = URL(fileURLWithPath: try #require(finding["reproducer"] as? String)).deletingLastPathComponent()
        let saved = try Data(contentsOf: folder.appendingPathComponent("saved-1.xml"))
        #expect(String(decoding: saved, as: UTF8.self).contains("<notes version=\"1\">"))

        let hardened = try roundTrip("notes-writer-hardened")
        #expect(hardened.status == 0, "\(hardened.stdout)\(hardened.stderr)")
    }

    @Test("bad arguments: a writer without @@, a missing corpus, --generate without a format")
    func badArguments() throws {
        let noPlaceholder = try corruptFuzz([
            "roundtrip", "--loader", "/bin/cat @@", "--writer", "/bin/cp", "--corpus", "Corpus/notes", "--reports", NSTemporaryDirectory(),
        ])
        #expect(noPlaceholder.status == 2)
        #expect(noPlaceholder.stderr.contains("needs @@"), "\(noPlaceholder.stderr)")
        let missing = try corruptFuzz(["skew", "--older", "/bin/cat @@", "--newer", "/bin/cat @@", "--older-corpus", "/nonexistent/corpus"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("/nonexistent/corpus does not exist"), "\(missing.stderr)")
        let noFormat = try corruptFuzz(["skew", "--older", "/bin/cat @@", "--newer", "/bin/cat @@", "--generate", "3"])
        #expect(noFormat.status == 2)
        #expect(noFormat.stderr.contains("--generate needs --newer-format"), "\(noFormat.stderr)")
    }
}
