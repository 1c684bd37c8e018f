import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// read(2), under a name the notes app's own `read(_:)` does not hide.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.read(fd, buffer, count)
    #else
        Darwin.read(fd, buffer, count)
    #endif
}

/// The notes app's migration from its old store, `notes-v1.txt` (a line per note: id, creation
/// date, text, separated by tabs), to the new one, `notes.tsv` (a `notes 2` header, then the
/// same lines), written twice: naively and carefully. Both use the POSIX calls Foundation's own
/// file writing uses, so `corrupt-fuzz crashpoints` sees every operation.
public enum NotesMigration {
    public static let oldStore = "notes-v1.txt"
    public static let newStore = "notes.tsv"
    public static let header = "notes 2"

    /// Why the data folder cannot be loaded or migrated.
    public struct Failure: Error, CustomStringConvertible {
        public var reason: String
        public var message: String
        public var description: String { message }
    }

    /// What the app shows after a start: the new store when it is there, else the old one; a
    /// line per note (`id\tcreated\ttext`), in the store's order, a note stored twice listed
    /// twice. A malformed store is `corrupt`.
    public static func load(_ folder: String) throws(Failure) -> [String] {
        if let new = try read("\(folder)/\(newStore)") {
            var lines = new.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard lines.first == header else { throw Failure(reason: "corrupt", message: "\(newStore): no '\(header)' header") }
            lines.removeFirst()
            if lines.last == "" { lines.removeLast() }
            for (number, line) in lines.enumerated() { try checkNote(line, at: "\(newStore) line \(number + 2)") }
            return lines
        }
        guard let old = try read("\(folder)/\(oldStore)") else { return [] }
        var lines = old.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        for (number, line) in lines.enumerated() { try checkNote(line, at: "\(oldStore) line \(number + 1)") }
        return lines
    }

    static func checkNote(_ line: String, at place: String) throws(Failure) {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        guard fields.count == 3, let id = Int(fields[0]), id > 0, !fields[1].isEmpty else {
            throw Failure(reason: "corrupt", message: "\(place): not a note (id, date, text)")
        }
    }

    /// The file's text, nil when it does not exist; a file that exists but cannot be read (an
    /// I/O error) is `io-error`, never "no file": the app would otherwise start over without
    /// the notes and save that over them.
    static func read(_ path: String) throws(Failure) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw Failure(reason: "io-error", message: "open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(reason: "io-error", message: "read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - POSIX helpers

    static func fail(_ what: String) -> Failure { Failure(reason: "io-error", message: "\(what): \(String(cString: strerror(errno)))") }

    static func writeAll(_ fd: Int32, _ text: String) throws(Failure) {
        let bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw fail("write")
            }
            done += n
        }
    }

    static func openFile(_ path: String, _ flags: Int32) throws(Failure) -> Int32 {
        let fd = open(path, flags | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw fail("open \(path)") }
        return fd
    }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    // MARK: - The naive migration

    /// The migration as a hurried developer writes it: the lock is never released, a backup is
    /// made and deleted, the notes are appended to the new store without an fsync, a `migrated`
    /// flag (trusted on the next start) is set before the data is safe, the old store is
    /// deleted. A crash half-way loses notes or, on the next start, appends them again.
    public static func migrateNaively(_ folder: String) throws(Failure) {
        let lock = try openFile("\(folder)/.lock", O_CREAT | O_RDWR)
        guard flock(lock, LOCK_EX) == 0 else { throw fail("flock") }
        // (never unlocked, never closed: held until the process ends)
        if exists("\(folder)/migrated") { return }
        guard let old = try read("\(folder)/\(oldStore)") else { return }
        let backup = try openFile("\(folder)/\(oldStore).bak", O_CREAT | O_WRONLY | O_TRUNC)
        try writeAll(backup, old)
        close(backup)
        let store = try openFile("\(folder)/\(newStore)", O_CREAT | O_WRONLY | O_APPEND)
        var info = stat()
        if fstat(store, &info) == 0, info.st_size == 0 { try writeAll(store, header + "\n") }
        try writeAll(store, old.hasSuffix("\n") ? old : old + "\n")
        close(store)
        let flag = try openFile("\(folder)/migrated", O_CREAT | O_WRONLY)
        close(flag)
        unlink("\(folder)/\(oldStore)")
        unlink("\(folder)/\(oldStore).bak")
    }

    // MARK: - The hardened migration

    /// The migration done carefully: under a lock it releases; idempotent by note id (what is
    /// already in the new store is kept, nothing is added twice); the whole new store written to
    /// a temporary file, synced, renamed over the old name, the folder synced; only then the old
    /// store removed (and the folder synced again). Run again after a crash at any point, it
    /// finishes the job.
    public static func migrate(_ folder: String) throws(Failure) {
        let lock = try openFile("\(folder)/.lock", O_CREAT | O_RDWR)
        guard flock(lock, LOCK_EX) == 0 else {
            close(lock)
            throw fail("flock")
        }
        defer {
            flock(lock, LOCK_UN)
            close(lock)
        }
        guard let old = try read("\(folder)/\(oldStore)") else { return }
        var notes: [String] = []
        var ids: Set<Int> = []
        // What an earlier run already moved (the new store is only ever renamed into place whole).
        if exists("\(folder)/\(newStore)") {
            for line in try load(folder) where ids.insert(Int(line.split(separator: "\t")[0])!).inserted { notes.append(line) }
        }
        for line in old.split(separator: "\n").map(String.init) {
            try checkNote(line, at: oldStore)
            if ids.insert(Int(line.split(separator: "\t")[0])!).inserted { notes.append(line) }
        }
        let temporary = "\(folder)/\(newStore).tmp"
        let file = try openFile(temporary, O_CREAT | O_WRONLY | O_TRUNC)
        defer { close(file) }
        try writeAll(file, ([header] + notes).joined(separator: "\n") + "\n")
        guard fsync(file) == 0 else { throw fail("fsync") }
        guard rename(temporary, "\(folder)/\(newStore)") == 0 else { throw fail("rename") }
        try syncFolder(folder)
        guard unlink("\(folder)/\(oldStore)") == 0 else { throw fail("unlink") }
        try syncFolder(folder)
    }

    // MARK: - Saving a note

    /// The note the save programs add (replacing a note with its id: saving twice is saving once).
    public static let savedNote = "1000\t2026-11-26T12:00:00Z\tSaved by the notes app"

    /// The store's text with ``savedNote`` in it.
    static func storeWithSavedNote(_ folder: String) throws(Failure) -> (notes: String, note: String) {
        let id = savedNote.split(separator: "\t")[0]
        let kept = try load(folder).filter { $0.split(separator: "\t").first != id }
        return (([header] + kept).joined(separator: "\n") + "\n", savedNote + "\n")
    }

    /// The save as a hurried developer writes it: the old store deleted first, the new one
    /// written with a write whose count and errors are ignored, the note appended the same way,
    /// an fsync whose result is ignored. A full disk or an I/O error leaves a torn or old store
    /// while the program says it saved.
    public static func saveNaively(_ folder: String) throws(Failure) {
        let (notes, note) = try storeWithSavedNote(folder)
        let path = "\(folder)/\(newStore)"
        unlink(path)
        let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw fail("open \(path)") }
        for text in [notes, note] {
            _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }
        _ = fsync(fd)
        close(fd)
    }

    /// The save done carefully: the whole store written to a temporary file (every write's
    /// count checked, EINTR retried), synced and closed with their errors checked, renamed over
    /// the store, the folder synced; on any failure the temporary file is removed and the
    /// failure reported (exit 1), the old store untouched. An fsync that failed is not retried:
    /// its writes may be lost, so the save failed.
    public static func save(_ folder: String) throws(Failure) {
        let (notes, note) = try storeWithSavedNote(folder)
        let temporary = "\(folder)/\(newStore).tmp"
        let fd = try openFile(temporary, O_CREAT | O_WRONLY | O_TRUNC)
        do throws(Failure) {
            do throws(Failure) {
                try writeAll(fd, notes + note)
                guard fsync(fd) == 0 else { throw fail("fsync \(temporary)") }
            } catch {
                close(fd)
                throw error
            }
            guard close(fd) == 0 else { throw fail("close \(temporary)") }
            guard rename(temporary, "\(folder)/\(newStore)") == 0 else { throw fail("rename") }
        } catch {
            unlink(temporary)
            throw error
        }
        try syncFolder(folder)
    }

    static func syncFolder(_ folder: String) throws(Failure) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw fail("open \(folder)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw fail("fsync \(folder)") }
    }
}
