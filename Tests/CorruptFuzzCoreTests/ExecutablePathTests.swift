import CorruptFuzzCore
import Foundation
import Testing

@Suite("The running executable's path, for replay commands")
struct ExecutablePathTests {
    @Test("names a file that exists, and a path Linux marks as replaced loses the mark")
    func path() {
        #expect(FileManager.default.fileExists(atPath: ExecutablePath.current), "\(ExecutablePath.current)")
        #expect(!ExecutablePath.current.hasSuffix(" (deleted)"))
        #expect(ExecutablePath.undeleted("/work/.build/debug/corrupt-fuzz (deleted)") == "/work/.build/debug/corrupt-fuzz")
        #expect(ExecutablePath.undeleted("/work/.build/debug/corrupt-fuzz") == "/work/.build/debug/corrupt-fuzz")
        #expect(ExecutablePath.undeleted("/tmp/a (deleted) b") == "/tmp/a (deleted) b")
    }
}
