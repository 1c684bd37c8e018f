import Foundation
import Testing

@Suite("corrupt-fuzz with SQLite databases")
struct CLISQLiteTests {
    @Test("generate --format sqlite --schema app.sql writes byte-identical databases twice; validate calls them valid")
    func generate() throws {
        let folder = try temporaryFolder("sqlite-generate")
        defer { try? FileManager.default.removeItem(at: folder) }
        let schema = packageRoot.appendingPathComponent("Corpus/schemas/note-store.sql").path
        for run in ["a", "b"] {
            let result = try corruptFuzz([
                "generate", "--format", "sqlite", "--schema", schema, "--count", "4", "--seed", "9", "--out", folder.appendingPathComponent(run).path,
            ])
            #expect(result.status == 0, "\(result.stderr)")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("a").path).sorted()
        #expect(names == ["note-store-0.sqlite", "note-store-1.sqlite", "note-store-2.sqlite", "note-store-3.sqlite"])
        for name in names {
            let a = try Data(contentsOf: folder.appendingPathComponent("a/\(name)"))
            let b = try Data(contentsOf: folder.appendingPathComponent("b/\(name)"))
            #expect(a == b && a.starts(with: Array("SQLite format 3\0".utf8)), "\(name)")
        }
        let validated = try corruptFuzz(["validate", "--format", "sqlite", "--schema", schema] + names.map { folder.appendingPathComponent("a/\($0)").path })
        #expect(validated.status == 0, "\(validated.stdout)\(validated.stderr)")
        // WAL mode: bundles of the database and its log.
        let wal = try corruptFuzz(["generate", "--format", "sqlite-wal", "--count", "1", "--out", folder.appendingPathComponent("wal").path])
        #expect(wal.status == 0, "\(wal.stderr)")
        let bundle = try Data(contentsOf: folder.appendingPathComponent("wal/sqlite-wal-0.sqlite.tar"))
        #expect(bundle[257..<262].elementsEqual("ustar".utf8))
    }

    @Test(
        "a SQL description needs --format sqlite; a broken one is a usage error with the reason",
        arguments: [
            (["generate", "--format", "xml", "--schema", "x.sql", "--out", "/tmp/never"], "needs --format sqlite or sqlite-wal, not xml"),
            (["validate", "--format", "notes", "--schema", "x.sql", "f"], "needs --format sqlite or sqlite-wal"),
        ])
    func misuse(arguments: [String], message: String) throws {
        let result = try corruptFuzz(arguments)
        #expect(result.status == 2 || result.status == 64, "\(result.status)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test("a broken description is refused with SQLite's message")
    func brokenDescription() throws {
        let folder = try temporaryFolder("sqlite-broken")
        defer { try? FileManager.default.removeItem(at: folder) }
        let schema = folder.appendingPathComponent("bad.sql")
        try Data("CREATE TABLE t (x INTEGER,".utf8).write(to: schema)
        let result = try corruptFuzz(["generate", "--format", "sqlite", "--schema", schema.path, "--out", folder.appendingPathComponent("out").path])
        #expect(result.status == 2)
        #expect(result.stderr.contains("SQLite cannot create the schema"), "\(result.stderr)")
    }
}
