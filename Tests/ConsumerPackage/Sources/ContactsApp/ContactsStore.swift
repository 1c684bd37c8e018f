import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The app's contacts in its data folder: one file, saved atomically (a temporary file, synced,
/// renamed over the old one, the folder synced), so a crash or a power cut leaves the old list
/// or the new one, and a save run again after a crash finishes the job.
public enum ContactsStore {
    public static let fileName = "contacts.cntc"

    /// The list in `folder`; an app's first start (no file yet) has none.
    public static func load(in folder: URL) throws -> ContactList {
        let url = folder.appendingPathComponent(fileName)
        guard FileManager.default.fileExists(atPath: url.path) else { return ContactList(names: []) }
        return try ContactsFile.load(contentsOf: url)
    }

    /// Saves `list` in `folder`, replacing what was there.
    public static func save(_ list: ContactList, in folder: URL) throws {
        let bytes = try ContactsFile.encode(list)
        let path = folder.appendingPathComponent(fileName).path
        let temporary = path + ".tmp"
        let file = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw failure("open \(temporary)") }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(file, $0.baseAddress! + written, bytes.count - written) }
            if count < 0 {
                if errno == EINTR { continue }
                let error = failure("write \(temporary)")
                close(file)
                throw error
            }
            written += count
        }
        guard fsync(file) == 0 else {
            let error = failure("fsync \(temporary)")
            close(file)
            throw error
        }
        guard close(file) == 0 else { throw failure("close \(temporary)") }
        guard rename(temporary, path) == 0 else { throw failure("rename \(temporary)") }
        let directory = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw failure("open \(folder.path)") }
        defer { close(directory) }
        guard fsync(directory) == 0 else { throw failure("fsync \(folder.path)") }
    }

    /// Adds a contact (once: a name already there is not added again) and saves.
    public static func add(_ name: String, in folder: URL) throws {
        var list = try load(in: folder)
        if !list.names.contains(name) { list.names.append(name) }
        try save(list, in: folder)
    }

    private static func failure(_ what: String) -> ContactsError {
        ContactsError(reason: "io-error", message: "\(what): \(String(cString: strerror(errno)))")
    }
}
