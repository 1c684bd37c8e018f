/// The persistent-worker protocol, in one place for both sides: the worker (``CorruptFuzzWorker``
/// in Swift, `corrupt_fuzz_worker.h` in C, whose `CF_WORKER_*` constants a test compares with
/// these) and corrupt-fuzz's executor, which reads the lines with ``reply(from:)-([UInt8])`` and checks the
/// hello's version with ``helloVersion(_:)``.
///
/// corrupt-fuzz sets ``descriptorVariable`` to ``resultDescriptor`` and writes one input path per
/// line on the worker's standard input; the worker first writes ``hello`` to the result
/// descriptor, then one ``CorruptFuzzWorker/Reply/line`` per input. A worker whose loader takes
/// bytes says so in its hello (``bytesFeature``), and gets inputs up to ``maxSentBytes`` sent
/// whole (``sentBytesPrefix``) instead of as a file's path.
public enum WorkerProtocol {
    /// The version the hello announces (`H 1`); corrupt-fuzz refuses a worker of another one.
    public static let version = 1
    /// The environment variable corrupt-fuzz sets to the result descriptor's number.
    public static let descriptorVariable = "CORRUPT_FUZZ_WORKER_FD"
    /// The result descriptor corrupt-fuzz hands a worker.
    public static let resultDescriptor: Int32 = 3

    /// The environment variable corrupt-fuzz sets to `1` to ask for a fork server
    /// (`cf_worker_fork_server` in `corrupt_fuzz_worker.h`, which both worker loops call): the
    /// worker forks a child that serves inputs, and a crash costs a fork instead of a new
    /// worker. A worker built before it ignores the variable, and dies on a crash as before.
    public static let forkServerVariable = "CORRUPT_FUZZ_FORK_SERVER"

    /// The environment variable corrupt-fuzz sets, with the fork server, to how many crashes one
    /// of the server's children may live through (`CF_WORKER_RECOVER_VARIABLE`): a compiler's
    /// trap instruction (a Swift precondition failure, an index out of range, a forced unwrap of
    /// nil, an overflow), and, without a sanitizer, an abort the process raised or a memory fault
    /// is reported as before, and the child then abandons the input's stack and answers
    /// `C <wait status> <peak kB> r` itself instead of dying, so a known crash site costs a
    /// report, not a fork. `0` turns it off.
    public static let recoverVariable = "CORRUPT_FUZZ_RECOVER_CRASHES"

    /// corrupt-fuzz's line to a fork server's child that lived through a crash when it wants the
    /// next inputs run by one that did not (a recheck, a look at held files): the child exits
    /// with ``retiredStatus``, its server answers `C` for it and lets the next child serve.
    public static let retireLine = "\u{1}"
    /// The exit status of a child that was retired (``retireLine``).
    public static let retiredStatus: Int32 = 3

    /// The hello's word for a worker whose loader takes bytes, not a path (`H 1 bytes`:
    /// ``CorruptFuzzWorker/serve(_:validate:digest:)``, `cf_worker_main` in C): corrupt-fuzz
    /// then sends an input of up to ``maxSentBytes`` whole on the worker's standard input, as
    /// the line ``sentBytesPrefix`` and its size, then its bytes, and the input costs no file
    /// (neither corrupt-fuzz's write nor the worker's open and reads). A larger input, and a
    /// missing file, still come as a path. A worker built before it says `H 1` and gets paths.
    public static let bytesFeature = "bytes"
    /// The first byte of the line for an input sent whole: `#<size>`, then `size` bytes.
    public static let sentBytesPrefix = UInt8(ascii: "#")
    /// The largest input sent whole: under a pipe's 64 kB, so that sending it never waits for
    /// the worker to read.
    public static let maxSentBytes = 61_440

    /// The worker's first line: `H 1`.
    public static var hello: String { "H \(version)" }

    /// The first line of a worker whose loader takes bytes: `H 1 bytes` (``bytesFeature``).
    public static var bytesHello: String { hello + " " + bytesFeature }

    /// The version a hello line announces; nil when the line is no hello.
    public static func helloVersion(_ line: String) -> Int? {
        guard line.first == "H" else { return nil }
        return Int(line.dropFirst().trimmingPrefix(" ").prefix { $0 != " " }) ?? 0
    }

    /// The words a hello line names after its version (``bytesFeature``).
    public static func helloFeatures(_ line: String) -> [Substring] {
        guard line.first == "H" else { return [] }
        return Array(line.dropFirst().split(separator: " ").dropFirst())
    }

    /// The size an input sent whole has, from its line (`#<size>`, without the newline); nil
    /// for another line (a path).
    public static func sentSize(_ line: some Collection<UInt8>) -> Int? {
        guard line.first == sentBytesPrefix, line.count > 1 else { return nil }
        var size = 0
        for byte in line.dropFirst() {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (times, overflow) = size.multipliedReportingOverflow(by: 10)
            let (sum, carried) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflow, !carried else { return nil }
            size = sum
        }
        return size
    }

    /// A fork server's line for a child that ended mid-input (`C <wait status> <peak kB>`), or
    /// a child's for a crash it lived through (`C <wait status> <peak kB> r`, ``recoverVariable``):
    /// the status as `waitpid` gives it, the child's peak resident memory, and whether the child
    /// lives on; nil for another line.
    public static func childEnded(_ line: [UInt8]) -> (status: Int32, peakKilobytes: Int64, recovered: Bool)? {
        guard line.first == UInt8(ascii: "C"), line.count > 2, line[1] == 0x20 else { return nil }
        let fields = line.dropFirst(2).split(separator: 0x20)
        guard fields.count == 2 || (fields.count == 3 && fields[2].elementsEqual("r".utf8)),
            let status = Int32(String(decoding: fields[0], as: UTF8.self)),
            let peak = Int64(String(decoding: fields[1], as: UTF8.self))
        else { return nil }
        return (status, peak, fields.count == 3)
    }

    /// The reply a result line holds (`A <digest>`, `V <message>`, `R <reason|-> <message>`);
    /// nil for a line that is none of them.
    public static func reply(from line: String) -> CorruptFuzzWorker.Reply? { reply(from: Array(line.utf8)) }

    /// The reply a result line's bytes hold: read for every input, making only the strings kept.
    public static func reply(from line: [UInt8]) -> CorruptFuzzWorker.Reply? {
        let text = line.count > 2 ? line[2...] : []
        switch line.first {
        case UInt8(ascii: "A"): return .accepted(digest: String(decoding: text, as: UTF8.self))
        case UInt8(ascii: "V"): return .acceptedInvalid(message: String(decoding: text, as: UTF8.self))
        case UInt8(ascii: "R"):
            let space = text.firstIndex(of: 0x20) ?? text.endIndex
            let word = text[..<space]
            let reason = word.isEmpty || word.elementsEqual(CollectionOfOne(UInt8(ascii: "-"))) ? nil : String(decoding: word, as: UTF8.self)
            return .rejected(reason: reason, message: space < text.endIndex ? String(decoding: text[(space + 1)...], as: UTF8.self) : "")
        default: return nil
        }
    }
}
