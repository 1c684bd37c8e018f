/// The persistent-worker protocol, in one place for both sides: the worker (``CorruptFuzzWorker``
/// in Swift, `corrupt_fuzz_worker.h` in C, whose `CF_WORKER_*` constants a test compares with
/// these) and corrupt-fuzz's executor, which reads the lines with ``reply(from:)`` and checks the
/// hello's version with ``helloVersion(_:)``.
///
/// corrupt-fuzz sets ``descriptorVariable`` to ``resultDescriptor`` and writes one input path per
/// line on the worker's standard input; the worker first writes ``hello`` to the result
/// descriptor, then one ``CorruptFuzzWorker/Reply/line`` per input.
public enum WorkerProtocol {
    /// The version the hello announces (`H 1`); corrupt-fuzz refuses a worker of another one.
    public static let version = 1
    /// The environment variable corrupt-fuzz sets to the result descriptor's number.
    public static let descriptorVariable = "CORRUPT_FUZZ_WORKER_FD"
    /// The result descriptor corrupt-fuzz hands a worker.
    public static let resultDescriptor: Int32 = 3

    /// The worker's first line: `H 1`.
    public static var hello: String { "H \(version)" }

    /// The version a hello line announces; nil when the line is no hello.
    public static func helloVersion(_ line: String) -> Int? {
        guard line.first == "H" else { return nil }
        return Int(line.dropFirst().trimmingPrefix(" ").prefix { $0 != " " }) ?? 0
    }

    /// The reply a result line holds (`A <digest>`, `V <message>`, `R <reason|-> <message>`);
    /// nil for a line that is none of them.
    public static func reply(from line: String) -> CorruptFuzzWorker.Reply? {
        let text = String(line.dropFirst(2))
        switch line.first {
        case "A": return .accepted(digest: text)
        case "V": return .acceptedInvalid(message: text)
        case "R":
            let parts = text.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            let reason = parts.first.map(String.init).flatMap { $0 == "-" || $0.isEmpty ? nil : $0 }
            return .rejected(reason: reason, message: parts.count > 1 ? String(parts[1]) : "")
        default: return nil
        }
    }
}
