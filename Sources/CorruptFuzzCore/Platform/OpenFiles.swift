import CCorruptFuzzSpawn
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The files a process holds open: this one's (to check that a loader closed its database), or
/// another's with its locks (a target that still holds its input after it answered).
///
/// Linux lists `/proc/self/fd`; Darwin asks each descriptor for its path (`F_GETPATH`).
public enum OpenFiles {
    /// Descriptors of this process open on files inside `folder`, with their paths.
    public static func descriptors(inside folder: String) -> [(descriptor: Int32, path: String)] {
        let prefix = (folder.hasSuffix("/") ? folder : folder + "/")
        return all().filter { $0.path.hasPrefix(prefix) || $0.path == folder }
    }

    /// Every open descriptor with the path it names (descriptors without one are left out).
    public static func all() -> [(descriptor: Int32, path: String)] {
        #if os(Linux)
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return [] }
            return names.compactMap { name in
                guard let descriptor = Int32(name), let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name) else {
                    return nil
                }
                return (descriptor, target.hasSuffix(" (deleted)") ? String(target.dropLast(" (deleted)".count)) : target)
            }
        #elseif canImport(Darwin)
            var out: [(descriptor: Int32, path: String)] = []
            var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN))
            for descriptor in 0..<getdtablesize() where fcntl(descriptor, F_GETPATH, &buffer) != -1 {
                out.append((descriptor, String(cString: buffer)))
            }
            return out
        #else
            return []
        #endif
    }

    /// Which of `paths` process `pid` has open, each with ` (locked)` when it also holds a lock
    /// on the file. A persistent worker's check after its inputs: system calls only (no
    /// Foundation file APIs, no path strings per descriptor).
    public static func held(by pid: pid_t, among paths: Set<String>) -> [String] {
        #if os(Linux)
            guard let directory = opendir("/proc/\(pid)/fd") else { return [] }
            defer { closedir(directory) }
            let descriptors = dirfd(directory)
            var held: [(path: String, inode: UInt64)] = []
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            while let entry = readdir(directory) {
                let found: (path: String, inode: UInt64)? = withUnsafePointer(to: &entry.pointee.d_name) { tuple in
                    tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: tuple.pointee)) { name in
                        guard name[0] != 0x2E else { return nil }  // "." and ".."
                        let n = readlinkat(descriptors, name, &buffer, buffer.count - 1)
                        guard n > 0 else { return nil }
                        let path = buffer.withUnsafeBytes { String(decoding: $0.prefix(n), as: UTF8.self) }
                        let file = path.hasSuffix(" (deleted)") ? String(path.dropLast(10)) : path
                        guard paths.contains(file) else { return nil }
                        var info = stat()
                        return (path, fstatat(descriptors, name, &info, 0) == 0 ? UInt64(info.st_ino) : 0)
                    }
                }
                if let found { held.append(found) }
            }
            guard !held.isEmpty else { return [] }
            let locked = lockedInodes(of: pid)
            return held.map { locked.contains($0.inode) ? "\($0.path) (locked)" : $0.path }.sorted()
        #else
            return []
        #endif
    }

    /// The children of process `pid` (a worker's fork server's children), where the system lists
    /// them (Linux's `/proc/PID/task/PID/children`); empty elsewhere.
    public static func children(of pid: pid_t) -> [pid_t] {
        #if os(Linux)
            let fd = open("/proc/\(pid)/task/\(pid)/children", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return [] }
            defer { close(fd) }
            var text: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(fd, &chunk, chunk.count)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { break }
                text += chunk[0..<n]
            }
            return text.split(whereSeparator: { $0 == 0x20 || $0 == 0x0A }).compactMap { pid_t(String(decoding: $0, as: UTF8.self)) }
        #else
            return []
        #endif
    }

    /// Whether process `pid` is ending or gone (``cf_process_ending``: a zombie, PF_EXITING or
    /// SIGKILL pending on Linux): a fork server's child that crashed is torn down while the next
    /// child serves, and holds its descriptors until late in that. False where unknown.
    public static func isExiting(_ pid: pid_t) -> Bool { cf_process_ending(pid) != 0 }

    /// The inodes `pid` holds a lock on, from /proc/locks (`1: POSIX ADVISORY WRITE 1234 08:01:5678 0 EOF`).
    static func lockedInodes(of pid: pid_t) -> Set<UInt64> {
        guard let text = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return [] }
        var inodes: Set<UInt64> = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // "->" marks a waiter; the pid is the fifth field otherwise.
            guard fields.count >= 6, fields[1] != "->", Int32(fields[4]) == pid,
                let inode = fields[5].split(separator: ":").last.flatMap({ UInt64($0) })
            else { continue }
            inodes.insert(inode)
        }
        return inodes
    }
}
