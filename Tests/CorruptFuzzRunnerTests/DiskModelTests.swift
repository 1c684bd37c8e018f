import CorruptFuzzCore
import Foundation
import Testing

@testable import CorruptFuzzRunner

@Suite("The disk model of crash points and I/O faults")
struct DiskModelTests {
    func operation(_ index: Int, _ kind: FileOperation.Kind, _ path: String, offset: Int64 = 0, flags: Int32 = 0, bytes: String = "") -> FileOperation {
        FileOperation(index: index, pid: 1, kind: kind, fd: 3, offset: offset, flags: flags, path: path, path2: nil, bytes: Array(bytes.utf8))
    }

    @Test("after a failed fsync the writes it was to make durable are gone, and a later fsync does not bring them back")
    func failedSync() {
        var model = DiskModel(FolderState(files: ["a.txt": Array("old".utf8)]))
        model.apply(operation(0, .open, "a.txt", flags: O_WRONLY | O_TRUNC))
        model.apply(operation(1, .write, "a.txt", bytes: "new data"))
        #expect(model.current.files["a.txt"] == Array("new data".utf8))
        model.apply(operation(2, .fsyncFailed, "a.txt"))
        model.apply(operation(3, .fsync, "a.txt"))
        #expect(model.current.files["a.txt"] == Array("old".utf8))
        #expect(model.durable.files["a.txt"] == Array("old".utf8))
        // What is written after the failure lands on what was left.
        model.apply(operation(4, .write, "a.txt", offset: 3, bytes: "!"))
        #expect(model.current.files["a.txt"] == Array("old!".utf8))
    }

    @Test("a failed fsync of the folder loses its unsynced names: a rename not yet durable is undone")
    func failedFolderSync() {
        var model = DiskModel(FolderState(files: ["a.txt": Array("old".utf8)]))
        model.apply(operation(0, .open, "a.tmp", flags: O_WRONLY | O_CREAT))
        model.apply(operation(1, .write, "a.tmp", bytes: "new"))
        model.apply(operation(2, .fsync, "a.tmp"))
        var rename = operation(3, .rename, "a.tmp")
        rename.path2 = "a.txt"
        model.apply(rename)
        #expect(model.current.files == ["a.txt": Array("new".utf8)])
        model.apply(operation(4, .fsyncFailed, "."))
        #expect(model.current.files == ["a.txt": Array("old".utf8)])
    }

    @Test("the fault log's lines: the index, the faults that apply, the operation and its file")
    func faultLog() {
        let points = FaultPoint.parse(Array("FP 0 1 create notes.tsv\nFP 1 31 write notes.tsv\nFP 2 20 read my file.txt\nnoise\n".utf8))
        #expect(points.map(\.index) == [0, 1, 2])
        #expect(points[0].faults == [.enospc])
        #expect(points[1].faults == IOFault.allCases)
        #expect(points[2].faults == [.eio, .eintr] && points[2].name == "read" && points[2].path == "my file.txt")
    }
}
