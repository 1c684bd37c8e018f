import CorruptFuzzCore
import Foundation
import Testing

@testable import CorruptFuzzRunner

@Suite("The regression store holds each input once")
struct RegressionFolderTests {
    @Test("the same bytes saved again, as another kind, keep the first file; other bytes get their own")
    func sameBytesOnce() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("regressions-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = RegressionFolder(root: root.path)
        let first = try store.save(Array("BOOM".utf8), kind: .crash, fileExtension: "txt", for: "loader")
        // A re-run judges the stored input again, maybe as another kind (a hang on a slower day).
        #expect(try store.save(Array("BOOM".utf8), kind: .crash, fileExtension: "txt", for: "loader") == first)
        #expect(try store.save(Array("BOOM".utf8), kind: .hang, fileExtension: "txt", for: "loader") == first)
        let other = try store.save(Array("BOOM!".utf8), kind: .crash, fileExtension: "txt", for: "loader")
        #expect(other != first)
        let files = try FileManager.default.contentsOfDirectory(atPath: URL(fileURLWithPath: first).deletingLastPathComponent().path)
        #expect(files.count == 2, "\(files)")
    }
}
