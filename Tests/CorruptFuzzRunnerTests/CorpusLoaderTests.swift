import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation
import Testing

@Suite("Corpus loading")
struct CorpusLoaderTests {
    func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("corpus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url.appendingPathComponent("sub"), withIntermediateDirectories: true)
        return url
    }

    @Test("reads regular files in name order, recursively, skipping hidden files and READMEs")
    func readsFiles() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data([2]).write(to: dir.appendingPathComponent("b.bin"))
        try Data([1]).write(to: dir.appendingPathComponent("a.bin"))
        try Data([3]).write(to: dir.appendingPathComponent("sub/c.bin"))
        try Data([9]).write(to: dir.appendingPathComponent(".hidden"))
        try Data("notes".utf8).write(to: dir.appendingPathComponent("README.md"))
        let (seeds, warnings) = try CorpusLoader.load(dir.path)
        #expect(seeds.map(\.name) == ["a.bin", "b.bin", "sub/c.bin"])
        #expect(seeds.map(\.bytes) == [[1], [2], [3]])
        #expect(warnings.isEmpty)
    }

    @Test("broken links and FIFOs are skipped with a warning instead of blocking or failing")
    func hostileEntries() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data([1]).write(to: dir.appendingPathComponent("good.bin"))
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("broken.bin").path, withDestinationPath: "/nonexistent/target")
        #expect(mkfifo(dir.appendingPathComponent("pipe.bin").path, 0o600) == 0)
        let (seeds, warnings) = try CorpusLoader.load(dir.path)
        #expect(seeds.map(\.name) == ["good.bin"])
        #expect(warnings.count == 2)
        #expect(warnings.contains { $0.contains("broken.bin") })
        #expect(warnings.contains { $0.contains("pipe.bin") && $0.contains("not a regular file") })
    }

    @Test("a folder with nothing readable is an error that says why")
    func nothingReadable() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("broken.bin").path, withDestinationPath: "/nonexistent/target")
        #expect {
            try CorpusLoader.load(dir.path)
        } throws: { error in
            (error as? CorruptFuzzError)?.message.contains("holds no readable files") == true
        }
        #expect(throws: CorruptFuzzError.self) { try CorpusLoader.load("/nonexistent/corpus") }
    }
}
