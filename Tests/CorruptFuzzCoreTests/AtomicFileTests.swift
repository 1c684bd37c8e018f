import CorruptFuzzCore
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("AtomicFile: report files are written whole or not at all")
struct AtomicFileTests {
    private func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("corrupt-fuzz-atomic-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("writes the bytes, with the mode asked for, and leaves no temporary file")
    func writes() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/replay"
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try AtomicFile.write(bytes, to: path, mode: 0o755)
        #expect(FileManager.default.contents(atPath: path) == Data(bytes))
        #expect(access(path, X_OK) == 0)
        try AtomicFile.write("", to: dir + "/empty")
        #expect(FileManager.default.contents(atPath: dir + "/empty") == Data())
        #expect(access(dir + "/empty", X_OK) != 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["empty", "replay"])
    }

    @Test("replaces a file by a new one (a rename), never rewriting the old one in place")
    func replacesByRename() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/summary.json"
        try AtomicFile.write("old contents", to: path)
        // A reader that opened the old file (a CI step reading the report as the run rewrites
        // it) keeps reading it whole: written in place (O_TRUNC), it would read the new one or
        // an empty or half-written file.
        let reader = try #require(FileHandle(forReadingAtPath: path))
        defer { try? reader.close() }
        var before = stat()
        #expect(stat(path, &before) == 0)
        try AtomicFile.write("new", to: path)
        #expect(String(decoding: reader.readDataToEndOfFile(), as: UTF8.self) == "old contents")
        #expect(FileManager.default.contents(atPath: path) == Data("new".utf8))
        var after = stat()
        #expect(stat(path, &after) == 0)
        #expect(before.st_ino != after.st_ino)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["summary.json"])
    }

    @Test("a folder that cannot be written is an error that leaves nothing behind; a leftover temporary file is told apart and never written into")
    func failuresAndLeftovers() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(throws: CorruptFuzzError.self) { try AtomicFile.write("x", to: dir + "/missing/report.json") }
        // What a write killed between its temporary file and the rename leaves.
        let leftover = ".report.json\(AtomicFile.temporaryMarker)4242-1a2b"
        try Data("torn".utf8).write(to: URL(fileURLWithPath: dir + "/" + leftover))
        #expect(AtomicFile.isTemporary(leftover))
        #expect(!AtomicFile.isTemporary("report.json"))
        #expect(!AtomicFile.isTemporary("input.partial-1.habits"))
        try AtomicFile.write("whole", to: dir + "/report.json")
        #expect(FileManager.default.contents(atPath: dir + "/report.json") == Data("whole".utf8))
        #expect(FileManager.default.contents(atPath: dir + "/" + leftover) == Data("torn".utf8))
        if getuid() != 0 {
            // Read-only: no temporary file can be made.
            let locked = dir + "/locked"
            try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: true)
            chmod(locked, 0o555)
            defer { chmod(locked, 0o755) }
            #expect(throws: CorruptFuzzError.self) { try AtomicFile.write("x", to: locked + "/junit.xml") }
            #expect(try FileManager.default.contentsOfDirectory(atPath: locked).isEmpty)
        }
    }

    @Test("the latest link is replaced without a moment where it is missing, and a folder in its place is replaced too")
    func link() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let latest = dir + "/latest"
        AtomicFile.link(latest, to: "run-1")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: latest) == "run-1")
        AtomicFile.link(latest, to: "run-2")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: latest) == "run-2")
        try FileManager.default.removeItem(atPath: latest)
        try FileManager.default.createDirectory(atPath: latest, withIntermediateDirectories: true)
        AtomicFile.link(latest, to: "run-3")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: latest) == "run-3")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["latest"])
    }
}
