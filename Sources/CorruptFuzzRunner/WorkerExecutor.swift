import CCorruptFuzzSpawn
import CorruptFuzzCore
import CorruptFuzzWorker
import Foundation

/// Runs inputs in persistent worker processes.
///
/// Starting a process per input costs milliseconds; a worker loads once and then answers
/// input after input. Crashes are still observed from outside the process that crashed.
///
/// A known crash site costs little, as in AFL++'s persistent mode with a fork server:
///
/// - The worker is asked for a fork server (``WorkerProtocol/forkServerVariable``): it forks a
///   child that serves inputs, and when the child dies mid-input, the server says so
///   (`C <status> <peak kB>`) and forks the next one. A crash costs a fork, not a new worker
///   (its runtime, its libraries, its set-up). A worker that cannot fork (more than one thread)
///   or does not know the variable serves inputs itself and dies on a crash; this executor then
///   starts a new one.
/// - Its crash reports are the crash reporter's (Linux, preloaded: Swift's backtracer is
///   turned off unless `SWIFT_BACKTRACE` is set, and sanitizers do not symbolize): each frame as
///   module and offset, keyed by ``CrashSignature/siteKey(signal:in:)``. A site's first crash
///   has its frames named (``Symbolizer``, as every other mode names them: one crash, one
///   signature), and that outcome is every later crash's with the same key: a known site's
///   crash costs a key and a lookup, no symbolication and no parsing.
/// - A child lives through a crash (a trap, an abort, a memory fault:
///   ``WorkerProtocol/recoverVariable``, up to ``crashesPerChild``
///   times): it answers `C … r` and serves on, so a known site costs no fork either. What such a
///   child shows is not taken on its word (``Execution/afterRecoveredTrap``): a crash at a new
///   site that a fresh worker does not show is not one, a hang runs again in a fresh worker,
///   a look at held files or a recheck first retires the child (``WorkerProtocol/retireLine``),
///   and the campaign leaves out a finding a fresh process does not show.
///
/// The protocol (CorruptFuzzWorker's): the worker is started with `CORRUPT_FUZZ_WORKER_FD=3`,
/// reads one input path per line on stdin, runs it, and writes one line to fd 3: `A <digest>`
/// when it accepted the input, `V <message>` when it accepted it but the app's own check of the
/// loaded value failed, `R <reason or -> <message>` when it rejected it (newlines in digest and
/// message replaced by spaces). Before the first input it writes `H <version>` there, so a
/// command that is not a worker is told apart at once from a worker that crashed. Its stdout
/// and stderr go to a log, whose new part is read after a crash.
///
/// Every ``recheckInterval``-th input of a slot is followed by an earlier input of that slot run
/// again: a different outcome the second time means state leaks between inputs
/// (``stability``). A worker is replaced after ``inputsPerWorker`` inputs, as AFL++'s persistent
/// loops are: a loader that leaks a little per input would otherwise run out of memory after
/// millions of them, on an innocent input (a long campaign saw a worker of the friend-list
/// loader fail to allocate 1,408 bytes for a 5-byte file, and another fail to read a file).
public final class WorkerExecutor: Executor, @unchecked Sendable {
    public let slots: Int
    /// How many inputs of a slot run between two rechecks.
    public static let recheckInterval = 64
    /// The fewest inputs of a slot between two looks at whether the worker still holds its
    /// input open or locked after it answered (the first input is looked at too). A look lists
    /// the descriptors of the worker and its fork server's children (about 100 µs), so looks are
    /// also at least ``heldCheckSpacing`` apart: every 256 inputs of a loader that answers in
    /// 10 µs cost its job's thread 3% of its time.
    public static let heldCheckInterval = 256
    /// The shortest time between two looks at held files in a slot: a loader fast enough to run
    /// ``heldCheckInterval`` inputs in less is looked at 20 times a second (a look at an input
    /// that did not run in a fresh process waits for the next one that did).
    public static let heldCheckSpacing: Duration = .milliseconds(50)
    /// The fewest inputs of a slot between two retirements of a child that lived through a crash
    /// (``WorkerProtocol/retireLine``), for a look at held files or a recheck: with crashes
    /// frequent, those run about this often.
    public static let retireInterval = 256
    /// How many crashes one of a fork server's children lives through before it dies of one
    /// (``WorkerProtocol/recoverVariable``): what each left (the input's stack, never unwound:
    /// memory never freed, a file never closed) is bounded by it.
    public static let crashesPerChild = 256
    /// How many inputs one worker runs before it is replaced (a new one starts in milliseconds,
    /// against seconds of inputs).
    public let inputsPerWorker: Int
    /// The variable of corrupt-fuzz's own environment that, set to `0`, sends every input to a
    /// worker as a file, also to one whose loader takes bytes (``WorkerProtocol/bytesFeature``).
    public static let sendBytesVariable = "CORRUPT_FUZZ_SEND_BYTES"
    /// The environment variable that tells a loader it runs as a worker, and its value.
    public static let protocolVariable = (name: WorkerProtocol.descriptorVariable, value: String(WorkerProtocol.resultDescriptor))
    /// The worker's log is emptied when it grows past this many bytes (a worker that floods
    /// its output must not fill the disk).
    static let maxLogBytes: off_t = 16 << 20
    private let path: String
    private let arguments: [String]
    private let environment: [String: String]
    /// The slots' coverage maps, when the campaign reads coverage.
    private let coverage: CoverageSlots?
    private let limits: ProcessExecutor.Limits
    /// Whether workers are asked for a fork server and cheap crash reports.
    private let forkServer: Bool
    /// Whether a worker whose loader takes bytes gets inputs sent whole
    /// (``WorkerProtocol/bytesFeature``; `CORRUPT_FUZZ_SEND_BYTES=0` in corrupt-fuzz's
    /// environment: never, every input is a file).
    private let sendsBytes: Bool
    /// What a worker's environment gets for cheap crash reports (empty: its reports are full).
    private let cheapReports: [String: String]
    private let workDirectory: URL
    /// Per slot: where its inputs are written, and the line that names that file to the worker.
    private let inputPaths: [String]
    private let commandLines: [[UInt8]]
    /// What each slot keeps, one object per slot: slots run on concurrent threads, and each
    /// touches only its own object (never an array shared with the others).
    private final class SlotState: @unchecked Sendable {
        var worker: Worker?
        /// Whether ``worker`` writes full crash reports and serves inputs itself, without a
        /// fork server (hang confirmations and full crash reports need one).
        var workerIsPlain = false
        /// Inputs run, and the last few (bytes and outcome) for rechecks.
        var runs = 0
        /// Inputs the current worker has run.
        var workerRuns = 0
        /// Whether the last input ran in a process that had lived through a crash.
        var lastRunTainted = false
        /// Workers started.
        var starts = 0
        /// The input the next recheck runs again, with its outcome: the last one at least eight
        /// before it that a process that had not lived through a crash ran, and that ended stably.
        var recheckCandidate: (bytes: [UInt8]?, outcome: Outcome)?
        /// The input number before which a child that lived through a crash was last retired.
        var lastRetire = Int.min / 2
        /// When held files were last looked at (``heldCheckInterval``, ``heldCheckSpacing``): the
        /// input's number and the time; nil before the first input.
        var lastHeldCheck: (run: Int, at: ContinuousClock.Instant)?

        func heldCheckDue(next: Int) -> Bool { WorkerExecutor.heldCheckDue(next: next, last: lastHeldCheck) }
        /// The slot's input file, kept open: each input is written over the last (an open and a
        /// close per input cost the campaign's thread a fifth of its time on a fast loader).
        var input: Int32 = -1

        /// Writes `bytes` as the input file at `path`: over the file kept open, unless the
        /// loader removed or replaced it (then a new one).
        func writeInput(_ bytes: [UInt8], to path: String) throws(CorruptFuzzError) {
            var info = stat()
            if input >= 0, fstat(input, &info) != 0 || info.st_nlink == 0 { closeInput() }
            if input < 0 {
                input = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
                guard input >= 0, fstat(input, &info) == 0 else {
                    closeInput()
                    throw CorruptFuzzError(.system, "cannot write input file \(path): \(String(cString: strerror(errno)))")
                }
            }
            var written = 0
            while written < bytes.count {
                let n = bytes.withUnsafeBytes { pwrite(input, $0.baseAddress! + written, bytes.count - written, off_t(written)) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { throw CorruptFuzzError(.system, "cannot write input file \(path): \(String(cString: strerror(errno)))") }
                written += n
            }
            if info.st_size > off_t(bytes.count) { _ = ftruncate(input, off_t(bytes.count)) }
        }

        func closeInput() {
            if input >= 0 { close(input) }
            input = -1
        }

        /// The line and bytes of an input sent whole (``WorkerProtocol/sentBytesPrefix``), kept
        /// between inputs.
        var sendBuffer: [UInt8] = []
        /// Inputs sent whole.
        var sentWhole = 0

        /// Sends `bytes` whole to a worker whose loader takes bytes: `#<size>`, a newline and the
        /// bytes, in one write (an error, the worker having died, shows in its answer).
        func send(_ bytes: [UInt8], to commands: Int32) {
            sendBuffer.removeAll(keepingCapacity: true)
            sendBuffer.append(WorkerProtocol.sentBytesPrefix)
            sendBuffer.append(contentsOf: String(bytes.count).utf8)
            sendBuffer.append(0x0A)
            sendBuffer.append(contentsOf: bytes)
            sendBuffer.withUnsafeBytes { buffer in
                var written = 0
                while written < buffer.count {
                    let n = write(commands, buffer.baseAddress! + written, buffer.count - written)
                    if n < 0, errno == EINTR { continue }
                    guard n > 0 else { return }
                    written += n
                }
            }
            sentWhole += 1
        }
    }
    private let states: [SlotState]

    /// Whether input `next` of a slot is due a look at held files, the last look having been at
    /// input `last.run`, at `last.at` (nil: none yet): the first input is, then one at least
    /// ``heldCheckInterval`` inputs and ``heldCheckSpacing`` after the last look (the clock is
    /// read only once enough inputs ran).
    static func heldCheckDue(
        next: Int, last: (run: Int, at: ContinuousClock.Instant)?, now: () -> ContinuousClock.Instant = { .now }
    ) -> Bool {
        guard let last else { return true }
        return next - last.run >= heldCheckInterval && now() - last.at >= heldCheckSpacing
    }
    /// The outcome and full report of each crash site seen with a cheap report, by site key.
    private let crashSites = LockedBox<[UInt64: CrashSite]>([:])
    /// How many crash sites keep their full report (beyond: each is judged by its cheap report).
    static let maxCrashSites = 4096
    private struct CrashSite {
        var outcome: Outcome
        var stderr: [UInt8]
        /// How long the fresh worker that made the full report took (``Execution/fullReportMicroseconds``).
        var microseconds: Int64
    }
    private let stabilityLock = NSLock()
    private var measured = Stability()

    public var stability: Stability? { stabilityLock.withLock { measured } }

    /// How many worker processes the slots have started (a fork server's children not
    /// counted): read between inputs, when no slot runs one.
    public var workersStarted: Int { states.reduce(0) { $0 + $1.starts } }

    /// How many inputs went to a worker whole, without a file (``WorkerProtocol/bytesFeature``):
    /// read between inputs, when no slot runs one.
    public var inputsSentWhole: Int { states.reduce(0) { $0 + $1.sentWhole } }

    private struct Worker {
        var pid: pid_t
        var commands: Int32
        var results: Int32
        var log: Int32
        var pending: [UInt8] = []
        /// Whether the process serving this worker's inputs lived through a crash
        /// (``WorkerProtocol/recoverVariable``): what it shows may come of what the crash left.
        var tainted = false
        /// Whether its loader takes bytes, sent whole (its hello said ``WorkerProtocol/bytesFeature``).
        var takesBytes = false
    }

    /// Creates an executor whose workers run `path` with `arguments` and `environment` added.
    /// - Parameters:
    ///   - coverage: Whether each input's edge coverage is read (``ProcessExecutor``'s).
    ///   - forkServer: Whether workers are asked for a fork server and cheap crash reports
    ///     (`CORRUPT_FUZZ_FORK_SERVER=0` in corrupt-fuzz's environment turns it off too).
    ///   - sendBytes: Whether a worker whose loader takes bytes gets inputs sent whole
    ///     (``sendBytesVariable`` set to `0` turns it off too).
    public init(
        path: String, arguments: [String], environment: [String: String], limits: ProcessExecutor.Limits, slots: Int,
        inputsPerWorker: Int = 100_000, coverage: Bool = false, forkServer: Bool = true, sendBytes: Bool = true
    ) throws(CorruptFuzzError) {
        self.inputsPerWorker = max(1, inputsPerWorker)
        self.path = path
        self.arguments = arguments
        self.environment = environment
        self.limits = limits
        self.slots = max(1, slots)
        let inherited = ProcessInfo.processInfo.environment
        self.forkServer = forkServer && inherited[WorkerProtocol.forkServerVariable] != "0"
        sendsBytes = sendBytes && inherited[Self.sendBytesVariable] != "0"
        // Cheap reports need the crash reporter, which prints module and offset for every frame.
        if self.forkServer, ProcessExecutor.crashHandler() != nil {
            var cheap: [String: String] = [:]
            if inherited["SWIFT_BACKTRACE"] == nil, environment["SWIFT_BACKTRACE"] == nil { cheap["SWIFT_BACKTRACE"] = "enable=no" }
            // The crash reporter hands a crash to the child, which lives through it: a known
            // site's crash costs a report, not a fork (`0` in either environment: never).
            let recover = WorkerProtocol.recoverVariable
            cheap[recover] = environment[recover] ?? inherited[recover] ?? String(Self.crashesPerChild)
            cheapReports = cheap
        } else {
            cheapReports = [:]
        }
        states = (0..<self.slots).map { _ in SlotState() }
        self.coverage = coverage ? try CoverageSlots(slots: self.slots) : nil
        signal(SIGPIPE, SIG_IGN)  // a worker that died must not take us with it
        let directory = try ScratchFolder.make(prefix: "corrupt-fuzz-worker")
        workDirectory = directory
        inputPaths = (0..<max(1, slots)).map { directory.appendingPathComponent("input-\($0)").path }
        commandLines = inputPaths.map { Array(($0 + "\n").utf8) }
    }

    deinit {
        for index in states.indices {
            stop(index)
            states[index].closeInput()
        }
        try? FileManager.default.removeItem(at: workDirectory)
    }

    public func execute(_ input: TestInput, slot: Int) throws(CorruptFuzzError) -> Execution {
        coverage?.beforeRun(slot: slot)
        // A look at held files and a recheck need a process that did not live through a crash:
        // one is retired for them, at most once every ``retireInterval`` inputs (a retirement
        // costs a fork and a teardown, on the job's core).
        let next = states[slot].runs + 1
        // A loader that takes bytes never sees the file (the worker's loop reads a large input's and closes it).
        let heldCheckDue = states[slot].worker?.takesBytes != true && states[slot].heldCheckDue(next: next)
        if states[slot].worker?.tainted == true, heldCheckDue || next % Self.recheckInterval == 0,
            next - states[slot].lastRetire >= Self.retireInterval
        {
            retire(slot)
            states[slot].lastRetire = next
        }
        var ran = try run(input, slot: slot)
        var tainted = states[slot].lastRunTainted
        if tainted, case .hung = ran.execution.outcome {
            // A process that lived through a crash may wait forever for a lock the crash left
            // held: the input runs again, at the same deadline, in a fresh worker (the hung one
            // was stopped), and what it does there is its outcome. Confirming every such hang
            // instead (a few seconds each) cost a loader that crashes and hangs often a third
            // of a campaign's time.
            ran = try run(input, slot: slot)
            tainted = states[slot].lastRunTainted
        }
        var execution = ran.execution
        if let key = ran.crashKey { execution = try withFullReport(execution, key: key, of: input, slot: slot, tainted: tainted) }
        if tainted { execution.afterRecoveredTrap = true }
        execution.coverage = coverage?.afterRun(slot: slot, input: input)
        states[slot].runs += 1
        // Now and then (and on the first input), whether the worker still holds its input open
        // or locked after it answered (``heldCheckInterval``, ``heldCheckSpacing``).
        // Not after a crash the child lived through: a file the loader had open then stays open.
        if heldCheckDue, !tainted, let worker = states[slot].worker, !worker.takesBytes, Self.stableKey(execution.outcome) != nil {
            let pid = worker.pid
            states[slot].lastHeldCheck = (states[slot].runs, .now)
            // A fork server's child serves the inputs; one that crashed may still be torn down
            // (the server answered as soon as its crash reporter said it was dying), holding
            // the input it crashed on: not a loader that kept its file.
            let serving = OpenFiles.children(of: pid).filter { !OpenFiles.isExiting($0) }
            let held = Self.oneEntryPerFile(([pid] + serving).flatMap { OpenFiles.held(by: $0, among: [inputPaths[slot]]) })
            if !held.isEmpty { execution.held = held }
        }
        // A recheck runs again the last input, eight or more before it, that a process that
        // had not lived through a crash ran, and that ended stably (keyed only when it runs: a key
        // is a string made per input).
        let position = states[slot].runs % Self.recheckInterval
        guard !tainted, Self.isStable(execution.outcome) else { return execution }
        if position != 0, position <= Self.recheckInterval - 8 {
            states[slot].recheckCandidate = (input.bytes, execution.outcome)
        } else if position == 0, !(states[slot].worker?.tainted ?? false), let candidate = states[slot].recheckCandidate,
            let key = Self.stableKey(candidate.outcome)
        {
            states[slot].recheckCandidate = nil
            let earlier = (bytes: candidate.bytes, outcome: key)
            let again = try run(TestInput(bytes: earlier.bytes, seedName: "recheck"), slot: slot).execution
            let second = Self.stableKey(again.outcome) ?? again.outcome.word
            stabilityLock.withLock {
                measured.rechecked += 1
                if second != earlier.outcome {
                    measured.differed += 1
                    if measured.example == nil {
                        let size = earlier.bytes.map { "\($0.count) bytes" } ?? "a missing file"
                        measured.example = "an input of \(size) was \(earlier.outcome), later \(second)"
                    }
                }
            }
        }
        return execution
    }

    /// Held files as ``OpenFiles/held(by:among:)`` lists them for several processes, one entry per
    /// file, ` (locked)` when any holder's lock shows: a fork server's children share the
    /// server's descriptors (a file the loader kept open before the first fork is held by each),
    /// and a lock shows under the process that took it.
    public static func oneEntryPerFile(_ entries: [String]) -> [String] {
        var locked: [String: Bool] = [:]
        for entry in entries {
            let isLocked = entry.hasSuffix(" (locked)")
            let path = isLocked ? String(entry.dropLast(" (locked)".count)) : entry
            locked[path] = (locked[path] ?? false) || isLocked
        }
        return locked.keys.sorted().map { locked[$0] == true ? "\($0) (locked)" : $0 }
    }

    /// Whether ``stableKey(_:)`` has a key for `outcome` (without making it).
    static func isStable(_ outcome: Outcome) -> Bool {
        switch outcome {
        case .accepted, .acceptedInvalid, .rejected: true
        case .crashed, .hung, .outOfMemory: false
        }
    }

    /// What must be the same when an input runs again: accepted, or rejected with which reason.
    /// Crashes, hangs and running out of memory restart the worker, so they are not compared.
    static func stableKey(_ outcome: Outcome) -> String? {
        switch outcome {
        case .accepted, .acceptedInvalid: "accepted"
        case .rejected(let reason, _, _): "rejected (\(reason?.rawValue ?? "no reason"))"
        case .crashed, .hung, .outOfMemory: nil
        }
    }

    /// Runs `input` again in a fresh worker with the confirmation deadline, in CPU time (a worker
    /// without a fork server: the deadline is the CPU time of the process that runs the input).
    public func confirmHang(_ input: TestInput, slot: Int, margin: Int) throws(CorruptFuzzError) -> Execution {
        stop(slot)
        defer { stop(slot) }  // the next input gets a worker with a fork server again
        return try run(input, slot: slot, plain: true, confirmation: ConfirmationDeadline(timeout: limits.timeoutMilliseconds, margin: margin))
            .execution
    }

    /// `execution`, a crash with a cheap report whose site is `key`, with the site's outcome: the
    /// one made before for the key, or the report's frames named now (``ProcessExecutor/crash(signal:_:symbolizer:)``,
    /// as every mode names them), once per key. A crash that came from a process that had lived
    /// through a crash (`tainted`) may have come of what that crash left: the input runs once
    /// more in a fresh worker, and what it does there is its outcome.
    private func withFullReport(
        _ execution: Execution, key: UInt64, of input: TestInput, slot: Int, tainted: Bool
    ) throws(CorruptFuzzError) -> Execution {
        var full = execution
        if let known = crashSites.withLock({ $0[key] }) {
            full.outcome = known.outcome
            full.fullReportMicroseconds = known.microseconds
            return full
        }
        guard case .crashed(let signal, _, _) = execution.outcome else { return execution }
        var site = CrashSite(
            outcome: ProcessExecutor.crash(signal: signal, String(decoding: execution.stderr, as: UTF8.self)), stderr: execution.stderr,
            microseconds: execution.microseconds)
        // The process that lived through a new site's crash is not trusted with what comes
        // next (the next input gets a new worker), and a crash from one that had lived through
        // another is shown again in a fresh worker before it counts.
        stop(slot)
        if tainted {
            let again = try run(input, slot: slot, plain: true).execution
            stop(slot)  // the next input gets a worker with a fork server again
            guard case .crashed = again.outcome else { return again }
            site = CrashSite(outcome: again.outcome, stderr: again.stderr, microseconds: again.microseconds)
        }
        crashSites.withLock { sites in
            if sites.count < Self.maxCrashSites { sites[key] = site }
        }
        full.outcome = site.outcome
        full.stderr = site.stderr
        full.fullReportMicroseconds = site.microseconds
        return full
    }

    /// One run of an input in the slot's worker (started first if there is none; `plain`: one
    /// without a fork server, writing full crash reports), and the site key of a crash whose
    /// report is the cheap kind: then the execution's outcome holds the signal alone, for
    /// ``withFullReport(_:key:of:slot:)`` to complete.
    private func run(
        _ input: TestInput, slot: Int, plain: Bool = false, confirmation: ConfirmationDeadline? = nil
    ) throws(CorruptFuzzError) -> (execution: Execution, crashKey: UInt64?) {
        let deadline = confirmation?.cpuMilliseconds ?? limits.timeoutMilliseconds
        if states[slot].worker != nil, states[slot].workerRuns >= inputsPerWorker || states[slot].workerIsPlain != plain { stop(slot) }
        if states[slot].worker == nil {
            states[slot].worker = try start(slot, plain: plain)
            states[slot].workerIsPlain = plain
            states[slot].starts += 1
            states[slot].workerRuns = 0
        }
        states[slot].workerRuns += 1
        guard var worker = states[slot].worker else { throw CorruptFuzzError(.unusableTarget, "worker did not start") }
        states[slot].lastRunTainted = worker.tainted
        // A loader that takes bytes gets the input sent whole (WorkerProtocol.bytesFeature);
        // else, or when it is large, it is the slot's input file.
        let sent = worker.takesBytes ? input.bytes.flatMap { $0.count <= WorkerProtocol.maxSentBytes ? $0 : nil } : nil
        if sent == nil {
            if let bytes = input.bytes {
                try states[slot].writeInput(bytes, to: inputPaths[slot])
            } else {
                states[slot].closeInput()
                unlink(inputPaths[slot])
            }
        }
        let logStart = lseek(worker.log, 0, SEEK_END)
        let started = ContinuousClock.now
        // EPIPE if it died: seen below.
        if let sent {
            states[slot].send(sent, to: worker.commands)
        } else {
            _ = commandLines[slot].withUnsafeBytes { write(worker.commands, $0.baseAddress, $0.count) }
        }
        var cpuDeadline = cf_cpu_deadline()
        if let confirmation {
            cf_cpu_deadline_start(&cpuDeadline, worker.pid, Int32(clamping: confirmation.cpuMilliseconds), Int32(clamping: confirmation.wallMilliseconds))
        }
        var next = Self.nextLine(&worker, before: started + .milliseconds(deadline))
        // A confirmation waits while the worker is starved of CPU, not hung (cf_run does the same).
        while case .timedOut = next, confirmation != nil, !Self.isPrintingCrashReport(Self.readLog(worker.log, from: logStart)) {
            let more = cf_cpu_deadline_more(&cpuDeadline)
            guard more > 0 else { break }
            next = Self.nextLine(&worker, before: .now + .microseconds(more))
        }
        switch next {
        case .line(let bytes):
            states[slot].worker = worker
            if let child = WorkerProtocol.childEnded(bytes) {
                // The fork server's child died with this input, and the next one (forked from
                // the server, which runs no inputs) serves; or it lived through a crash.
                states[slot].worker?.tainted = child.recovered
                let stderr = Self.readLog(worker.log, from: logStart)
                return ended(status: child.status, peakKilobytes: child.peakKilobytes, stderr: stderr, plain: plain, started: started)
            }
            let outcome = Self.parse(bytes)
            // The log as this input found it (one seek per input, not two).
            if logStart > Self.maxLogBytes { _ = ftruncate(worker.log, 0) }
            var digest: [UInt8] = []
            if case .accepted(let text) = outcome { digest = Array(text.utf8) }
            return (Execution(outcome: outcome, stdout: digest, microseconds: micros(since: started)), nil)
        case .timedOut:
            // A worker printing a crash report at the deadline (symbolicating a deep stack
            // overflow takes a second) is crashing, not hanging: as cf_run does, it gets 5 more
            // seconds to die of its signal (a fork server then says its child did).
            var hungExecution = Execution(outcome: .hung(milliseconds: deadline), microseconds: micros(since: started))
            hungExecution.starved = confirmation != nil && cpuDeadline.starved != 0
            let hung = (hungExecution, UInt64?.none)
            guard Self.isPrintingCrashReport(Self.readLog(worker.log, from: logStart)) else {
                stop(slot)
                return hung
            }
            switch Self.nextLine(&worker, before: .now + .seconds(5)) {
            case .line(let bytes):
                guard let child = WorkerProtocol.childEnded(bytes) else {
                    stop(slot)  // an answer after the deadline: too late
                    return hung
                }
                worker.tainted = child.recovered
                states[slot].worker = worker
                return ended(
                    status: child.status, peakKilobytes: child.peakKilobytes, stderr: Self.readLog(worker.log, from: logStart), plain: plain,
                    started: started)
            case .timedOut:
                stop(slot)
                return hung
            case .ended:
                break  // the worker died of it: reaped below
            }
        case .ended:
            break
        }
        // The worker died while running this input.
        var status: Int32 = 0
        var usage = rusage()
        kill(-worker.pid, SIGKILL)
        while wait4(worker.pid, &status, 0, &usage) < 0, errno == EINTR {}
        cf_forget_child(worker.pid)
        let stderr = Self.readLog(worker.log, from: logStart)
        close(worker.results)
        close(worker.log)
        close(worker.commands)
        states[slot].worker = nil
        // As in cf_run: a vforked child's maxrss starts at ours, so only a higher one is its own.
        let peak = cf_max_rss_kb(&usage)
        return ended(status: status, peakKilobytes: peak > cf_self_max_rss_kb() ? peak : 0, stderr: stderr, plain: plain, started: started)
    }

    /// The execution of an input during which the process serving it ended (`status` as
    /// `waitpid` gives it), with the site key of a cheap crash report.
    private func ended(
        status: Int32, peakKilobytes: Int64, stderr: [UInt8], plain: Bool, started: ContinuousClock.Instant
    ) -> (execution: Execution, crashKey: UInt64?) {
        var result = cf_result()
        if status & 0x7F != 0 {
            result.end = CF_SIGNALED
            result.code = status & 0x7F
        } else {
            result.end = CF_EXITED
            result.code = (status >> 8) & 0xFF
            if result.code == 0 { result.code = 1 }  // a worker must not exit mid-input
        }
        result.max_rss_kb = peakKilobytes
        // A cheap report is keyed and left unread: it gets its site's full report
        // (withFullReport), so a known site's crash costs no parsing.
        if !plain, !cheapReports.isEmpty, result.end == CF_SIGNALED, let key = CrashSignature.siteKey(signal: result.code, in: stderr),
            !ProcessExecutor.mayBeOutOfMemory(stderr: stderr, peakKilobytes: peakKilobytes, limits: limits)
        {
            return (Execution(outcome: .crashed(signal: result.code, frames: [], message: nil), stderr: stderr, microseconds: micros(since: started)), key)
        }
        let outcome = ProcessExecutor.classify(result, stdout: [], stderr: stderr, limits: limits)
        return (Execution(outcome: outcome, stderr: stderr, microseconds: micros(since: started)), nil)
    }

    /// The markers of a crash report being written (Swift's backtracer, a sanitizer), as
    /// cf_run looks for them.
    static let crashReportMarkers = ["*** Program crashed:", ": Backtracing from ", "ERROR: AddressSanitizer", "ERROR: UndefinedBehaviorSanitizer"]

    static func isPrintingCrashReport(_ log: [UInt8]) -> Bool {
        let text = String(decoding: log, as: UTF8.self)
        return crashReportMarkers.contains { text.contains($0) }
    }

    private func micros(since start: ContinuousClock.Instant) -> Int64 {
        let d = ContinuousClock.now - start
        return d.microseconds
    }

    /// The outcome a result line reports (``WorkerProtocol/reply(from:)``); a line that is no
    /// reply is a rejection without a reason, with the line as its message.
    static func parse(_ line: [UInt8]) -> Outcome {
        switch WorkerProtocol.reply(from: line) {
        case .accepted(let digest)?: return .accepted(digest: digest)
        case .acceptedInvalid(let message)?: return .acceptedInvalid(message: message)
        case .rejected(let reason, let message)?: return .rejected(reason: reason.map { Reason($0) }, exitCode: 1, message: message.isEmpty ? nil : message)
        case nil: return .rejected(reason: nil, exitCode: 1, message: String(decoding: line, as: UTF8.self))
        }
    }

    private static func readLog(_ fd: Int32, from offset: off_t) -> [UInt8] {
        let end = lseek(fd, 0, SEEK_END)
        let count = min(Int(end - offset), 1 << 20)
        guard count > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: count)
        let n = pread(fd, &buffer, count, offset)
        return n > 0 ? Array(buffer[0..<n]) : []
    }

    private func start(_ slot: Int, plain: Bool) throws(CorruptFuzzError) -> Worker {
        var commandPipe: [Int32] = [0, 0], resultPipe: [Int32] = [0, 0]
        guard cf_pipe_cloexec(&commandPipe) == 0, cf_pipe_cloexec(&resultPipe) == 0 else {
            throw CorruptFuzzError(.system, "cannot create pipes for a worker")
        }
        let logPath = workDirectory.appendingPathComponent("log-\(slot)").path
        let log = open(logPath, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o600)
        var env = ProcessExecutor.targetEnvironment(adding: environment, executable: path, limit: limits.memoryLimit)
        env[Self.protocolVariable.name] = Self.protocolVariable.value
        if forkServer, !plain {
            env[WorkerProtocol.forkServerVariable] = "1"
            env.merge(cheapReports) { $1 }
            // A sanitizer's report with module and offset per frame, not symbolized.
            for variable in ["ASAN_OPTIONS", "UBSAN_OPTIONS"] where !cheapReports.isEmpty && !(env[variable] ?? "").contains("symbolize=") {
                env[variable] = (env[variable].map { $0 + ":" } ?? "") + "symbolize=0"
            }
        } else {
            env[WorkerProtocol.forkServerVariable] = "0"
        }
        if let coverage { env.merge(coverage.environment(slot: slot)) { $1 } }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        let pid = argv.withUnsafeBufferPointer { a in
            envp.withUnsafeBufferPointer { e in
                cf_worker_spawn(
                    path, a.baseAddress, e.baseAddress, commandPipe[0], resultPipe[1], log,
                    SanitizedExecutable.addressSpaceLimit(forExecutableAt: path, limit: limits.memoryLimit))
            }
        }
        close(commandPipe[0])
        close(resultPipe[1])
        guard pid > 0 else {
            close(commandPipe[1]); close(resultPipe[0]); close(log)
            throw CorruptFuzzError(.unusableTarget, "cannot start worker \(path): \(String(cString: strerror(errno)))")
        }
        var worker = Worker(pid: pid, commands: commandPipe[1], results: resultPipe[0], log: log)
        // Read before polling (nextLine): a worker on the job's core has usually answered by the
        // time the command's write returns, and then one system call gets the answer, not two.
        _ = fcntl(worker.results, F_SETFL, fcntl(worker.results, F_GETFL) | O_NONBLOCK)
        if let problem = awaitHello(&worker) {
            let printed = String(decoding: Self.readLog(log, from: 0).prefix(600), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            kill(-pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            cf_forget_child(pid)
            close(worker.commands); close(worker.results); close(log)
            throw CorruptFuzzError(
                .unusableTarget,
                "\(path) is not a corrupt-fuzz worker: it \(problem) instead of saying hello on fd 3. --worker needs a loader that serves inputs (CorruptFuzzWorker.serve in Swift, cf_worker_main from corrupt_fuzz_worker.h in C; see Docs/CLI.md, Persistent workers)"
                    + (printed.isEmpty ? "" : ". It printed: \(printed)"))
        }
        return worker
    }

    /// Waits for the worker's `H` line; nil when it came, else what happened instead. A worker
    /// gets ten times the input timeout (at least 10 s) to start: a test binary takes a while.
    private func awaitHello(_ worker: inout Worker) -> String? {
        let wait = max(10_000, 10 * limits.timeoutMilliseconds)
        switch Self.nextLine(&worker, before: ContinuousClock.now + .milliseconds(wait)) {
        case .line(let line):
            let text = String(decoding: line.prefix(80), as: UTF8.self)
            guard let version = WorkerProtocol.helloVersion(text) else { return "answered \"\(text)\"" }
            worker.takesBytes = sendsBytes && WorkerProtocol.helloFeatures(text).contains { $0 == WorkerProtocol.bytesFeature }
            return version == WorkerProtocol.version
                ? nil
                : "speaks version \(version) of the worker protocol, and this corrupt-fuzz speaks version \(WorkerProtocol.version) (rebuild the loader against this corrupt-fuzz)"
        case .timedOut: return "said nothing within \(wait) ms"
        case .ended(let why): return why
        }
    }

    /// What reading the worker's next result line gave.
    private enum LineRead {
        case line([UInt8])
        case timedOut
        /// The worker closed fd 3 (it died), or the pipe could not be read (why).
        case ended(String)
    }

    /// The worker's next line on fd 3, waiting until `deadline`. Reads into a buffer on the
    /// stack: this runs once per input.
    private static func nextLine(_ worker: inout Worker, before deadline: ContinuousClock.Instant) -> LineRead {
        while true {
            if let newline = worker.pending.firstIndex(of: 0x0A) {
                let line = Array(worker.pending[..<newline])
                worker.pending.removeSubrange(...newline)
                return .line(line)
            }
            var line: [UInt8]?
            var failure: Int32 = 0
            let n = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16_384) { buffer -> Int in
                let n = read(worker.results, buffer.baseAddress, buffer.count)
                if n < 0 { failure = errno }
                guard n > 0 else { return n }
                // The usual case, one whole line and nothing before it: no copy through `pending`.
                if worker.pending.isEmpty, let newline = buffer[0..<n].firstIndex(of: 0x0A) {
                    line = Array(buffer[0..<newline])
                    if newline + 1 < n { worker.pending += buffer[(newline + 1)..<n] }
                } else {
                    worker.pending += buffer[0..<n]
                }
                return n
            }
            if let line { return .line(line) }
            if n == 0 { return .ended("ended") }
            if n > 0 {
                // Part of a line: more comes, unless the worker never ends it.
                if ContinuousClock.now >= deadline { return .timedOut }
                continue
            }
            if failure == EINTR { continue }
            guard failure == EAGAIN else { return .ended("could not be read (\(String(cString: strerror(failure))))") }
            // Nothing yet: wait for it, until the deadline.
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return .timedOut }
            var poller = pollfd(fd: worker.results, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: max(1, left.milliseconds)))
            if ready < 0, errno != EINTR { return .ended("could not be read (\(String(cString: strerror(errno))))") }
        }
    }

    /// Replaces the fork server's child that serves the slot, which lived through a crash, with
    /// one that did not (``WorkerProtocol/retireLine``; the server answers `C` for it); stops the
    /// worker when it does not answer so.
    private func retire(_ slot: Int) {
        guard var worker = states[slot].worker else { return }
        let line = Array((WorkerProtocol.retireLine + "\n").utf8)
        _ = line.withUnsafeBytes { write(worker.commands, $0.baseAddress, $0.count) }
        let answer = Self.nextLine(&worker, before: .now + .seconds(5))
        worker.tainted = false
        states[slot].worker = worker
        guard case .line(let bytes) = answer, WorkerProtocol.childEnded(bytes) != nil else {
            stop(slot)
            return
        }
    }

    private func stop(_ slot: Int) {
        guard let worker = states[slot].worker else { return }
        kill(-worker.pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(worker.pid, &status, 0) < 0, errno == EINTR {}
        cf_forget_child(worker.pid)
        close(worker.results)
        close(worker.log)
        close(worker.commands)
        states[slot].worker = nil
    }
}
