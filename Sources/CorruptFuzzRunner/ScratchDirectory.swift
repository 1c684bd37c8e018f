import CorruptFuzzCore
import Foundation

/// Where input files are written for targets to read: a new private folder, in memory when the
/// platform has a memory file system at hand (`/dev/shm` on Linux) and `TMPDIR` does not say
/// otherwise. Written once per input, so a disk file system's write-back would cost more than
/// the loader (ext4 flushes a file on close after it was truncated).
enum ScratchDirectory {
    static func make(prefix: String) throws(CorruptFuzzError) -> URL {
        var parent = NSTemporaryDirectory()
        #if os(Linux)
            if ProcessInfo.processInfo.environment["TMPDIR"] == nil, access("/dev/shm", W_OK) == 0 { parent = "/dev/shm" }
        #endif
        var template = Array("\(parent)/\(prefix).XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CorruptFuzzError(.system, "cannot create a temporary directory in \(parent): \(String(cString: strerror(errno)))")
        }
        return URL(fileURLWithPath: String(cString: made))
    }
}
