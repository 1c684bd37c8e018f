import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes files whole or not at all: the bytes go to a temporary file in the same folder, which
/// is flushed to the disk (`fsync`) and then renamed over the file's name. A process killed at
/// any moment (SIGKILL, a CI job's timeout) leaves either the old file, or none, or the new one
/// whole, never a part; at worst a temporary file, whose name ``isTemporary(_:)`` tells apart
/// (hidden, `.NAME.partial-PID-RANDOM`), is left beside it.
///
/// Every file of a report folder is written through it, and the regression store's and corpus
/// folders' files too. Foundation's `Data.write(to:options: .atomic)` does the same on Linux
/// (a `.dat.nosync…` file, `fsync`, `rename`), but sets the mode only after the rename (a
/// `replay` script that is there but not yet executable), and on Darwin may write the temporary
/// file in another folder.
package enum AtomicFile {
    /// The part of a temporary file's name between the file's name and the process's number.
    package static let temporaryMarker = ".partial-"

    /// Writes `bytes` to `path` atomically, with the permission bits `mode` (less the umask).
    /// - Throws: ``CorruptFuzzError`` (`reportWriteFailed`) when the folder cannot be written;
    ///   no temporary file is left then.
    package static func write<Bytes: ContiguousBytes>(_ bytes: Bytes, to path: String, mode: mode_t = 0o644) throws(CorruptFuzzError) {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        var temporary = ""
        var fd: Int32 = -1
        // O_EXCL with a random name: a leftover of a killed run is never written into.
        for _ in 0..<16 {
            temporary = (folder as NSString).appendingPathComponent(
                ".\(name.prefix(200))\(temporaryMarker)\(getpid())-\(String(UInt32.random(in: .min ... .max), radix: 16))")
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw failure(path, "cannot create a temporary file in \(folder)") }
        var problem: String?
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = systemWrite(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    problem = "cannot write"
                    return
                }
                offset += n
            }
        }
        // The bytes reach the disk before the name does: after a power cut the file is whole
        // or absent, not an empty file of the right name.
        if problem == nil, fsync(fd) != 0, errno != EINVAL { problem = "cannot flush" }
        let savedErrno = errno
        close(fd)
        if let problem {
            unlink(temporary)
            errno = savedErrno
            throw failure(path, problem)
        }
        if rename(temporary, path) != 0 {
            let savedErrno = errno
            unlink(temporary)
            errno = savedErrno
            throw failure(path, "cannot rename \(temporary) to it")
        }
    }

    /// Writes `text` as UTF-8 to `path` atomically (see ``write(_:to:mode:)``).
    /// - Throws: ``CorruptFuzzError`` (`reportWriteFailed`).
    package static func write(_ text: String, to path: String, mode: mode_t = 0o644) throws(CorruptFuzzError) {
        try write(Data(text.utf8), to: path, mode: mode)
    }

    /// Makes `path` a symbolic link to `destination`, replacing what is there atomically (a
    /// link made under a temporary name, then renamed over it): a reader never finds the name
    /// missing. A folder of that name (an artifact upload turns a link into a copy) is removed
    /// first. Failures are ignored: the link is a convenience.
    package static func link(_ path: String, to destination: String) {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent().appendingPathComponent(
            ".\(url.lastPathComponent)\(temporaryMarker)\(getpid())-\(String(UInt32.random(in: .min ... .max), radix: 16))"
        ).path
        guard symlink(destination, temporary) == 0 else { return }
        if rename(temporary, path) == 0 { return }
        unlink(temporary)
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: destination)
    }

    /// Whether a file name is one of ``write(_:to:mode:)``'s temporary files: a write that did
    /// not finish, to be ignored by whatever reads the folder.
    package static func isTemporary(_ name: String) -> Bool {
        name.hasPrefix(".") && name.contains(temporaryMarker)
    }

    private static func failure(_ path: String, _ what: String) -> CorruptFuzzError {
        CorruptFuzzError(.reportWriteFailed, "cannot write \(path): \(what): \(String(cString: strerror(errno)))")
    }
}

/// write(2) (inside ``AtomicFile`` the name is its own method's).
private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.write(fd, bytes, count)
    #else
        Darwin.write(fd, bytes, count)
    #endif
}
