/// What a loader did with one input, as seen from outside it.
///
/// These are the target protocol's five answers: exit 0 is acceptance (stdout is the digest),
/// another exit is a rejection (a stderr line `reason: WORD` names the reason), death by
/// a signal is a crash, no exit before the deadline a hang, and exceeding the memory limit oom.
public enum Outcome: Sendable, Hashable, Codable {
    case accepted(digest: String)
    /// The loader accepted the input, but the app's own check of the loaded value (a
    /// `validateUserData`-style function) rejected it with this message.
    case acceptedInvalid(message: String)
    case rejected(reason: Reason?, exitCode: Int32, message: String?)
    case crashed(signal: Int32, frames: [String], message: String?)
    case hung(milliseconds: Int)
    case outOfMemory(peakKilobytes: Int64, message: String?)

    /// An accepted input's digest, when there is one.
    /// Whether the loader rejected the input.
    package var isRejection: Bool {
        if case .rejected = self { return true }
        return false
    }

    package var acceptedDigest: String? {
        if case .accepted(let digest) = self, !digest.isEmpty { return digest }
        return nil
    }

    /// A short word for logs: accepted, rejected, crash, hang, oom.
    public var word: String {
        switch self {
        case .accepted, .acceptedInvalid: "accepted"
        case .rejected: "rejected"
        case .crashed: "crash"
        case .hung: "hang"
        case .outOfMemory: "oom"
        }
    }

    /// A one-line human description, e.g. `rejected (reason: corrupt, exit 1)`.
    public var summary: String {
        switch self {
        case .accepted(let digest):
            let line = digest.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? ""
            return line.isEmpty ? "accepted" : "accepted (digest: \(line.prefix(80)))"
        case .acceptedInvalid(let message):
            return "accepted, but the loaded value is invalid: \(message.prefix(160))"
        case .rejected(let reason, let code, let message):
            var text = "rejected (reason: \(reason?.rawValue ?? "none given"), exit \(code))"
            if let message, !message.isEmpty { text += ": \(message.prefix(160))" }
            return text
        case .crashed(let signal, let frames, let message):
            var text = "crash (\(SignalName.of(signal)))"
            if let message { text += ": \(message.prefix(160))" }
            if !frames.isEmpty { text += " at \(frames.joined(separator: " ← "))" }
            return text
        case .hung(let ms):
            return "hang (no exit within \(ms) ms)"
        case .outOfMemory(let peak, let message):
            var text = "oom (peak \(peak / 1024) MiB)"
            if let message { text += ": \(message.prefix(160))" }
            return text
        }
    }
}

/// One execution of a loader: its outcome plus what it printed, for reports.
public struct Execution: Sendable, Hashable, Codable {
    public var outcome: Outcome
    /// The first bytes of standard output (capped).
    @Base64Coded public var stdout: [UInt8]
    /// The first bytes of standard error (capped).
    @Base64Coded public var stderr: [UInt8]
    /// Wall-clock time of the run, in microseconds.
    public var microseconds: Int64
    /// Files a persistent loader still held open (or locked) after it answered, when that was
    /// looked at: `/…/input-0 (locked)`.
    public var held: [String]?
    /// What the run showed of an instrumented loader's code (nil: not instrumented, or not read).
    /// Not part of a report (``CodingKeys``).
    public var coverage: CoverageSample?
    /// Run by a persistent worker's process that had lived through a crash before (a trap, an
    /// abort, a memory fault: `CORRUPT_FUZZ_RECOVER_CRASHES`): what it showed may come of what
    /// the crash left (a lock
    /// still held, a global half set), so a finding it shows stands only if a fresh process shows
    /// it too. Not part of a report (``CodingKeys``).
    public var afterRecoveredTrap = false
    /// A hang's confirmation that reached its wall-clock cap while the loader still ran, with
    /// less than half the CPU time it was given: the machine gave it too little CPU to tell a hang from a
    /// slow input, so it is neither (``Judge`` counts it as undecided). Not part of a report
    /// (``CodingKeys``).
    public var starved = false
    /// A hang shown again by running the input in a fresh process the way the printed replay
    /// runs the target, at twice the replay's confirmation deadline (a worker campaign checks a
    /// new hang so while it fuzzes, when there is time): the check of the finding in a fresh
    /// process after fuzzing is done for this input. Not part of a report (``CodingKeys``).
    public var hangConfirmedAsReplayed = false
    /// How much longer than its CPU deadline a hang's confirmation took in wall-clock time (1 to
    /// 4, the wall-clock cap): the machine's load as the hang was confirmed. A check of the
    /// finding in a fresh process (its deadline CPU time too) is expected to take as much longer.
    /// 1 when the hang was not confirmed. Not part of a report (``CodingKeys``).
    public var hangConfirmationStretch = 1.0
    /// How long a fresh process took to run this crash's input to its full crash report (a
    /// worker writes cheap reports and has a fresh worker make the full one once per crash
    /// site; symbolicating a deep stack takes most of a second): what the crash's check in a
    /// fresh process is expected to take. 0 when not known. Not part of a report (``CodingKeys``).
    public var fullReportMicroseconds: Int64 = 0

    private enum CodingKeys: String, CodingKey {
        case outcome, stdout, stderr, microseconds, held
    }

    public init(
        outcome: Outcome, stdout: [UInt8] = [], stderr: [UInt8] = [], microseconds: Int64 = 0, held: [String]? = nil,
        coverage: CoverageSample? = nil
    ) {
        self.outcome = outcome
        self.stdout = stdout
        self.stderr = stderr
        self.microseconds = microseconds
        self.held = held
        self.coverage = coverage
    }

}
