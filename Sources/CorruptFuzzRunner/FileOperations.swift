import CorruptFuzzCore
import Foundation

/// One operation an I/O fault can hit, from the recorder's fault log.
public struct FaultPoint: Sendable, Hashable {
    /// Its number among such operations (the recorder's `CORRUPT_FUZZ_FAULT_AT`).
    public var index: Int
    /// `write`, `fsync`, `close`, `read`, `create`, `rename`, `mkdir`, `truncate`.
    public var name: String
    public var path: String
    /// The faults that apply to it.
    public var faults: [IOFault]

    /// The fault log's lines: `FP INDEX MASK NAME PATH`.
    public static func parse(_ log: [UInt8]) -> [FaultPoint] {
        String(decoding: log, as: UTF8.self).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: false)
            guard fields.count == 5, fields[0] == "FP", let index = Int(fields[1]), let mask = Int(fields[2]) else { return nil }
            return FaultPoint(index: index, name: String(fields[3]), path: String(fields[4]), faults: IOFault.allCases.filter { mask & $0.bit != 0 })
        }
    }
}

/// One file operation the recorder (``RecorderLibrary``) logged in the data folder.
public struct FileOperation: Sendable, Hashable {
    public enum Kind: String, Sendable {
        case open, write, truncate, fsync, rename, unlink, rmdir, mkdir, appear
        case lock, unlock
        case unlockOnClose = "unlock-on-close"
        case heldLock = "held-lock"
        case heldFD = "held-fd"
        /// An fsync (or a close) the recorder made fail: the writes it was to make durable are
        /// lost (the kernel may already have dropped the pages), whatever a later fsync says.
        case fsyncFailed = "fsync-failed"
    }

    /// The crash point: how many counted operations came before it. Lock records carry the
    /// index of the next operation.
    public var index: Int
    public var pid: Int32
    public var kind: Kind
    public var fd: Int32
    /// A write's offset, a truncation's length.
    public var offset: Int64
    public var flags: Int32
    /// Relative to the data folder (`.` for the folder itself).
    public var path: String
    /// A rename's new name; a lock's kind (`flock`, `fcntl`, `ofd`).
    public var path2: String?
    /// A write's bytes.
    public var bytes: [UInt8]

    /// Whether the process can be stopped before this operation (the others are notes).
    public var isCrashPoint: Bool {
        switch kind {
        case .open, .write, .truncate, .fsync, .rename, .unlink, .rmdir, .mkdir, .appear: true
        case .lock, .unlock, .unlockOnClose, .heldLock, .heldFD, .fsyncFailed: false
        }
    }

    /// `write notes.tsv at 120: 40 bytes`, `rename notes.tmp -> notes.tsv`.
    public var description: String {
        switch kind {
        case .write: "write \(path) at \(offset): \(bytes.count) bytes"
        case .truncate: "truncate \(path) to \(offset) bytes"
        case .rename: "rename \(path) -> \(path2 ?? "?")"
        case .open:
            "open \(path)" + (flags & O_CREAT != 0 ? " (create)" : "") + (flags & O_TRUNC != 0 ? " (truncate)" : "")
                + (flags & O_APPEND != 0 ? " (append)" : "")
        case .lock: "lock \(path) (\(path2 ?? "lock"))"
        default: "\(kind.rawValue) \(path)"
        }
    }
}

/// Reads the recorder's log: a line per operation, a write's bytes after its line.
public enum OperationLog {
    public static func parse(_ log: [UInt8]) -> [FileOperation] {
        var operations: [FileOperation] = []
        var position = 0
        while position < log.count {
            guard let end = log[position...].firstIndex(of: UInt8(ascii: "\n")) else { break }
            let line = String(decoding: log[position..<end], as: UTF8.self)
            position = end + 1
            guard line.hasPrefix("OP ") else { continue }
            // OP INDEX PID NAME FD OFFSET LENGTH FLAGS PATH[\tPATH2]
            let fields = line.split(separator: " ", maxSplits: 8, omittingEmptySubsequences: false)
            guard fields.count == 9, let index = Int(fields[1]), let pid = Int32(fields[2]),
                let kind = FileOperation.Kind(rawValue: String(fields[3])), let fd = Int32(fields[4]), let offset = Int64(fields[5]),
                let length = Int(fields[6]), let flags = Int32(fields[7])
            else { continue }
            let paths = fields[8].split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            var bytes: [UInt8] = []
            if kind == .write, length > 0 {
                let stop = min(log.count, position + length)
                bytes = Array(log[position..<stop])
                position = stop
            }
            operations.append(
                FileOperation(
                    index: index, pid: pid, kind: kind, fd: fd, offset: offset, flags: flags, path: String(paths[0]),
                    path2: paths.count > 1 ? String(paths[1]) : nil, bytes: bytes))
        }
        return operations
    }
}

/// The files of a data folder: relative path to bytes, and its subfolders.
public struct FolderState: Sendable, Hashable {
    public var files: [String: [UInt8]]
    public var directories: Set<String>

    public init(files: [String: [UInt8]] = [:], directories: Set<String> = []) {
        self.files = files
        self.directories = directories
    }
}

/// Replays recorded operations on a model of the folder, keeping apart what is only in the page
/// cache from what an `fsync` made durable, to build the states a power cut can leave and a
/// kill cannot (as ALICE and SQLite's crash VFS do).
///
/// The model is the strict one: a file's bytes are durable after an `fsync` of that file; a
/// name (created, renamed, removed) is durable after an `fsync` of its folder. A file that was
/// never synced is empty after a power cut if it is new, or holds its bytes from before the run.
struct DiskModel {
    private var names: [String: Int] = [:]
    private var contents: [Int: [UInt8]] = [:]
    private var directories: Set<String> = []
    private var durableNames: [String: Int] = [:]
    private var durableContents: [Int: [UInt8]] = [:]
    private var durableDirectories: Set<String> = []
    private var descriptors: [String: Int] = [:]
    private var nextInode = 1

    init(_ initial: FolderState) {
        for (path, bytes) in initial.files.sorted(by: { $0.key < $1.key }) {
            names[path] = nextInode
            contents[nextInode] = bytes
            nextInode += 1
        }
        directories = initial.directories
        durableNames = names
        durableContents = contents
        durableDirectories = directories
    }

    static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }

    private func key(_ operation: FileOperation) -> String { "\(operation.pid):\(operation.fd)" }

    private func inode(for operation: FileOperation) -> Int? { descriptors[key(operation)] ?? names[operation.path] }

    /// Applies one operation; `writeLimit` keeps only that many bytes of a write (a torn write).
    mutating func apply(_ operation: FileOperation, writeLimit: Int? = nil) {
        switch operation.kind {
        case .open:
            if operation.path == "." || directories.contains(operation.path) { return }
            var inode = names[operation.path]
            if inode == nil, operation.flags & O_CREAT != 0 {
                inode = nextInode
                nextInode += 1
                names[operation.path] = inode
                contents[inode!] = []
            }
            guard let inode else { return }
            if operation.flags & O_TRUNC != 0 { contents[inode] = [] }
            descriptors[key(operation)] = inode
        case .write:
            guard let inode = inode(for: operation) else { return }
            var bytes = contents[inode] ?? []
            let offset = Int(max(0, operation.offset))
            let data = writeLimit.map { Array(operation.bytes.prefix($0)) } ?? operation.bytes
            if bytes.count < offset + data.count { bytes += [UInt8](repeating: 0, count: offset + data.count - bytes.count) }
            bytes.replaceSubrange(offset..<(offset + data.count), with: data)
            contents[inode] = bytes
        case .truncate:
            guard let inode = inode(for: operation) else { return }
            var bytes = contents[inode] ?? []
            let length = Int(max(0, operation.offset))
            if bytes.count > length { bytes.removeSubrange(length...) } else { bytes += [UInt8](repeating: 0, count: length - bytes.count) }
            contents[inode] = bytes
        case .fsync:
            if operation.path == "." || directories.contains(operation.path) {
                let folder = operation.path
                durableNames = durableNames.filter { Self.parent($0.key) != folder }
                for (path, inode) in names where Self.parent(path) == folder { durableNames[path] = inode }
                durableDirectories = durableDirectories.filter { Self.parent($0) != folder }
                for directory in directories where Self.parent(directory) == folder { durableDirectories.insert(directory) }
            } else if let inode = inode(for: operation) {
                durableContents[inode] = contents[inode]
            }
        case .rename:
            guard let target = operation.path2 else { return }
            if let inode = names.removeValue(forKey: operation.path) {
                names[target] = inode
            } else if directories.contains(operation.path) {
                directories.remove(operation.path)
                directories.insert(target)
            }
        case .unlink:
            names.removeValue(forKey: operation.path)
        case .rmdir:
            directories.remove(operation.path)
        case .mkdir:
            directories.insert(operation.path)
        case .appear:
            names[operation.path] = nextInode
            contents[nextInode] = []
            nextInode += 1
        case .fsyncFailed:
            // Pessimistic, as after PostgreSQL's fsync failures: the pages were dropped at once,
            // so what the program wrote since the last durable state is gone for good; what it
            // writes later, and a later fsync, apply to what is left.
            if operation.path == "." || directories.contains(operation.path) {
                let folder = operation.path
                names = names.filter { Self.parent($0.key) != folder }
                for (path, inode) in durableNames where Self.parent(path) == folder { names[path] = inode }
            } else if let inode = inode(for: operation) {
                contents[inode] = durableContents[inode] ?? []
            }
        case .lock, .unlock, .unlockOnClose, .heldLock, .heldFD:
            return
        }
    }

    /// What a kill leaves: everything the program did.
    var current: FolderState {
        FolderState(files: names.mapValues { contents[$0] ?? [] }, directories: directories)
    }

    /// What a power cut leaves in the strict model: the durable names, each with its durable
    /// bytes (a file never synced: empty).
    var durable: FolderState {
        FolderState(files: durableNames.mapValues { durableContents[$0] ?? [] }, directories: durableDirectories)
    }

    /// The names as the program left them (their metadata reached the disk), with only the bytes
    /// that were synced: a rename persisted before the data it names.
    var namesWithoutData: FolderState {
        FolderState(files: names.mapValues { durableContents[$0] ?? [] }, directories: directories)
    }

    /// Whether anything written is not yet durable.
    var hasUnsyncedState: Bool { durable != current }
}
