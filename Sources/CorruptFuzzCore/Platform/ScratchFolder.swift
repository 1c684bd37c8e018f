import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where input files are written for targets to read: a new private folder, in memory when the
/// platform has a memory file system at hand (`/dev/shm` on Linux) and `TMPDIR` does not say
/// otherwise. Written once per input, so a disk file system's write-back would cost more than
/// the loader (ext4 flushes a file on close after it was truncated).
package struct ScratchFolder {
    /// The folder's path.
    package let path: String

    /// Makes a new folder named `PREFIX.XXXXXX`.
    package init(prefix: String = "corrupt-fuzz") throws(CorruptFuzzError) { path = try Self.make(prefix: prefix).path }

    /// Runs `body` with a new folder and removes the folder afterwards.
    package static func with<T>(prefix: String = "corrupt-fuzz", _ body: (ScratchFolder) throws -> T) throws -> T {
        let folder = try ScratchFolder(prefix: prefix)
        defer { try? FileManager.default.removeItem(atPath: folder.path) }
        return try body(folder)
    }

    /// Makes a new folder named `PREFIX.XXXXXX` and returns its URL.
    package static func make(prefix: String) throws(CorruptFuzzError) -> URL {
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
