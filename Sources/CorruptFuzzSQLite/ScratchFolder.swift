import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A private temporary folder, removed when done: where generation builds a database and the
/// validator opens its copy of one (on Linux in `/dev/shm`, which never touches a disk).
struct ScratchFolder {
    let path: String

    init() throws {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        var template = Array((base.hasSuffix("/") ? base : base + "/").utf8CString.dropLast()) + Array("corrupt-fuzz-sqlite-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot create a temporary folder in \(base)"])
        }
        path = String(cString: made)
    }

    /// Runs `body` with a new folder and removes the folder afterwards.
    static func with<T>(_ body: (ScratchFolder) throws -> T) throws -> T {
        let folder = try ScratchFolder()
        defer { try? FileManager.default.removeItem(atPath: folder.path) }
        return try body(folder)
    }
}
