/// A way to make one file operation fail (`crashpoints --faults`).
public enum IOFault: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// The disk is full: writes, truncations, syncs and closes, and creating a file, a folder or
    /// a name (rename).
    case enospc
    /// The user's quota is full: writes, truncations, syncs and closes.
    case edquot
    /// The storage reports an error: writes, truncations, syncs, closes and reads.
    case eio
    /// A write writes half of what it was asked (a signal, a full pipe, a quota): the count says so.
    case shortWrite = "short-write"
    /// A signal interrupted a write or a read before it did anything.
    case eintr

    /// The bit of the fault in the recorder's fault log (`enum fault` in recorder.c).
    package var bit: Int {
        switch self {
        case .enospc: 1
        case .edquot: 2
        case .eio: 4
        case .shortWrite: 8
        case .eintr: 16
        }
    }

    /// How a signature names the fault: the three errors as one (a program that ignores one
    /// ignores all three), a short write and EINTR apart.
    package var signatureWords: String {
        switch self {
        case .enospc, .edquot, .eio: "an error"
        case .shortWrite: "a short write"
        case .eintr: "EINTR"
        }
    }

    /// `ENOSPC`, `a short write`…: the fault as a finding names it.
    public var description: String {
        switch self {
        case .enospc: "ENOSPC"
        case .edquot: "EDQUOT"
        case .eio: "EIO"
        case .shortWrite: "a short write"
        case .eintr: "EINTR"
        }
    }
}
