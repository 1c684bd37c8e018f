import CCorruptFuzzSpawn
import CorruptFuzzCore
import Foundation

/// Reading and writing a data folder as a ``FolderState``.
public enum DataFolder {
    /// Every file and subfolder below `url` (symbolic links are not followed).
    public static func snapshot(_ url: URL) throws(CorruptFuzzError) -> FolderState {
        var state = FolderState()
        let root = url.standardizedFileURL.path
        guard let enumerator = FileManager.default.enumerator(atPath: root) else {
            throw CorruptFuzzError(.unusableCorpus, "cannot read the folder \(root)")
        }
        while let relative = enumerator.nextObject() as? String {
            let path = root + "/" + relative
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: state.directories.insert(relative)
            case S_IFREG:
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw CorruptFuzzError(.unusableCorpus, "cannot read \(path)")
                }
                state.files[relative] = [UInt8](data)
            default: continue
            }
        }
        return state
    }

    /// Writes `state` into the empty folder `url`.
    public static func materialize(_ state: FolderState, at url: URL) throws(CorruptFuzzError) {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            for directory in state.directories.sorted() {
                try FileManager.default.createDirectory(at: url.appendingPathComponent(directory), withIntermediateDirectories: true)
            }
            for (path, bytes) in state.files {
                let file = url.appendingPathComponent(path)
                try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(bytes).write(to: file)
            }
        } catch {
            throw CorruptFuzzError(.system, "cannot write the crash state into \(url.path): \(error)")
        }
    }
}

/// How a crash-point check reads a data folder: the lines of a digest of its data, or why it
/// does not load.
public enum FolderCheck: Sendable {
    /// A command, `@@` the folder: exit 0 with the digest on stdout, else `reason: WORD`.
    case command(TargetCommand)
    /// A function of this process (the test module's check).
    case closure(name: String, @Sendable (URL) -> Result<[String], Violation>)

    var name: String {
        switch self {
        case .command(let command): command.line
        case .closure(let name, _): name
        }
    }
}

/// Cuts the power at every write of a save or migration, then checks that the data is the old
/// or the new version, never a mix, and that running the program again finishes the job without
/// duplicates or stray files.
///
/// The program runs once under the recorder (``RecorderLibrary``, LD_PRELOAD), which
/// logs every file operation in the data folder; then once per operation k from a fresh copy,
/// killed just before operation k (what a crash or a force quit leaves: everything written so
/// far is in the page cache). From the log, the model builds the states a power cut can leave
/// and a kill cannot: unsynced writes lost, names persisted before their data, a write torn at
/// 512 or 4096 bytes, writes of one fsync epoch reordered (a seeded sample). Each distinct state
/// is checked: the check (the app's loader, printing a digest) must accept it with the old or
/// the new digest; the program run again must succeed, leave the new digest and no file the
/// clean run does not leave.
public struct CrashPointCheck: Sendable {
    /// The program; `@@` is the data folder.
    public var target: TargetCommand
    /// The app's check of a folder: the lines of a digest of its data (a line per record), or
    /// why it does not load; nil: ``validator`` on every file, and the digest is the files'
    /// names and hashes.
    public var check: FolderCheck?
    /// Environment variables for the program, `@@` in a value standing for the data folder.
    public var environment: [String: String] = [:]
    /// Judges each file (with ``fileExtension``) when there is no check command.
    public var validator: (any Validator)?
    public var fileExtension: String
    /// The data folder before the run.
    public var data: URL
    /// The recorder library (``RecorderLibrary/path(environment:)``).
    public var recorder: String
    public var limits: ProcessExecutor.Limits
    /// The most crash states to check (all kill points first, then power cuts, then a sample).
    public var maxStates: Int
    public var seed: UInt64
    /// Only this crash point (a replay).
    public var only: Int?
    /// Judges a crash or hang of the program's re-run.
    public var judge = Judge()
    /// I/O faults to make each operation fail with, one at a time (``IOFault``): the program
    /// runs on, and must succeed truthfully or report the failure, leaving the old data or the
    /// new; a command ``check`` must reject data it could not read as `io-error`. None: only
    /// kills and power cuts.
    public var faults: [IOFault] = []
    /// Only this fault point (a replay of a fault finding).
    public var onlyFault: Int?
    /// Processes the program (or the check) left running outside its process group (a daemon,
    /// `setsid cmd &`) that were killed after its run, in this check's ``run()``.
    private let escapees = LockedBox(0)

    public init(
        target: TargetCommand, check: FolderCheck?, validator: (any Validator)?, fileExtension: String, data: URL, recorder: String,
        limits: ProcessExecutor.Limits, maxStates: Int = 300, seed: UInt64 = 0, only: Int? = nil
    ) {
        self.target = target
        self.check = check
        self.validator = validator
        self.fileExtension = fileExtension
        self.data = data
        self.recorder = recorder
        self.limits = limits
        self.maxStates = maxStates
        self.seed = seed
        self.only = only
    }

    public static let checks: [FindingKind] = [.crash, .hang, .oom, .tornState, .lostData, .duplicateData, .strayFile, .heldLock]
    /// The checks with I/O faults: also a save that reports success it did not have, and a
    /// check that misreads an unreadable file.
    public static let faultChecks: [FindingKind] = checks + [.unreportedIOError, .silentAcceptance, .wrongReason]

    /// One state to check: how it came about and at which operation.
    struct CrashState {
        var state: FolderState
        var point: Int
        /// `kill`, `power cut: unsynced writes lost`, …
        var how: String
    }

    /// What the check found, as a campaign's result, and the operations it saw.
    public struct Result: Sendable {
        public var result: CampaignResult
        public var operations: [FileOperation]
        public var statesChecked: Int
    }

    public func run() throws(CorruptFuzzError) -> Result {
        escapees.set(0)
        let scratch = try ScratchFolder.make(prefix: "corrupt-fuzz-crashpoints")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let initial = try DataFolder.snapshot(data)
        var collector = FindingCollector()
        var executions = 0
        var serial = 0
        func freshFolder(_ state: FolderState) throws(CorruptFuzzError) -> URL {
            serial += 1
            let folder = scratch.appendingPathComponent("state-\(serial)")
            try DataFolder.materialize(state, at: folder)
            return folder
        }

        // The clean run, recorded.
        let cleanFolder = try freshFolder(initial)
        let log = scratch.appendingPathComponent("clean.log")
        let faultLog = scratch.appendingPathComponent("clean-faults.log")
        executions += 1
        var cleanEnvironment = targetEnvironment(cleanFolder).merging(recording(cleanFolder, log: log)) { $1 }
        if !faults.isEmpty { cleanEnvironment["CORRUPT_FUZZ_FAULT_LOG"] = faultLog.path }
        let clean = try run(target, replacing: "@@", with: cleanFolder.path, environment: cleanEnvironment)
        guard case .accepted = clean.outcome else {
            throw CorruptFuzzError(
                .unusableTarget, "the program fails on the unmodified data, so there is nothing to cut short: \(clean.outcome.summary)")
        }
        let operations = OperationLog.parse(FileManager.default.contents(atPath: log.path).map { [UInt8]($0) } ?? [])
        if operations.isEmpty {
            throw CorruptFuzzError(
                .unusableTarget,
                "the recorder saw no file operation in \(data.path): the program wrote elsewhere, or is not dynamically linked against libc (LD_PRELOAD cannot reach it)"
            )
        }
        let final = try DataFolder.snapshot(cleanFolder)
        executions += 2
        let oldDigest = try digest(of: initial, scratch: freshFolder(initial))
        let newDigest = try digest(of: final, scratch: freshFolder(final))
        guard case .success(let old) = oldDigest else {
            throw CorruptFuzzError(.unusableTarget, "the check rejects the data before the run: \(oldDigest.failureText)")
        }
        guard case .success(let new) = newDigest else {
            throw CorruptFuzzError(.unusableTarget, "the check rejects the data after a clean run: \(newDigest.failureText)")
        }
        let trace = operations.filter(\.isCrashPoint)

        // Held locks and files at exit.
        for held in operations where held.kind == .heldLock || held.kind == .heldFD {
            let what = held.kind == .heldLock ? "a lock on \(Self.shape(held.path)) is still held" : "\(Self.shape(held.path)) is still open"
            let input = TestInput(bytes: Array(Self.traceText(trace).utf8), mutations: ["clean run"], seedName: "exit")
            var finding = Finding(
                kind: .heldLock, signature: what + " when the program exits",
                detail:
                    "when the program finished, \(what) (\(held.kind == .heldLock ? "an app suspended with a lock held is killed by the system: 0xdead10cc" : "a descriptor leaked")): \(held.path)",
                input: input, execution: clean, verdict: nil, attachments: [Attachment(name: "trace.txt", bytes: Array(Self.traceText(trace).utf8))])
            // Seen in the uninterrupted run, which every check makes: the command alone replays
            // it (its input is the operation trace, not a file the command reads).
            finding.replayArguments = []
            collector.add(finding, execution: executions)
        }

        // The states: every kill point (real kills), then the power cuts of the model.
        var states: [CrashState] = []
        var seen: Set<FolderState> = [initial, final]
        let points = trace.map(\.index)
        for point in points where onlyFault == nil && (only == nil || only == point) {
            let folder = try freshFolder(initial)
            executions += 1
            let killed = try run(
                target, replacing: "@@", with: folder.path,
                environment: targetEnvironment(folder).merging(recording(folder, log: scratch.appendingPathComponent("kill.log"), killAt: point)) { $1 })
            if case .accepted = killed.outcome {
                // The program did not reach this operation this time (it does less on a second
                // look at the same data, or the order differs): nothing to cut.
                continue
            }
            let state = try DataFolder.snapshot(folder)
            if seen.insert(state).inserted { states.append(CrashState(state: state, point: point, how: "killed")) }
        }
        var model = DiskModel(initial)
        var rng = FuzzRNG(seed: seed)
        var samples: [CrashState] = []
        for operation in operations where operation.isCrashPoint {
            let point = operation.index
            if only == nil || only == point {
                for (state, how) in [
                    (model.durable, "power cut: unsynced writes lost"), (model.namesWithoutData, "power cut: names persisted before their data"),
                ]
                where seen.insert(state).inserted {
                    states.append(CrashState(state: state, point: point, how: how))
                }
                if operation.kind == .write, operation.bytes.count > 512 {
                    for limit in [512, 4096] where limit < operation.bytes.count {
                        var torn = model
                        torn.apply(operation, writeLimit: limit)
                        if seen.insert(torn.current).inserted {
                            samples.append(CrashState(state: torn.current, point: point + 1, how: "power cut: a write torn at \(limit) bytes"))
                        }
                    }
                }
            }
            model.apply(operation)
        }
        // A power cut after the program finished, before the page cache reached the disk.
        let end = (trace.last?.index ?? -1) + 1
        if only == nil || only == end {
            for (state, how) in [(model.durable, "power cut: unsynced writes lost"), (model.namesWithoutData, "power cut: names persisted before their data")]
            where seen.insert(state).inserted {
                states.append(CrashState(state: state, point: end, how: how))
            }
        }
        // Writes of one fsync epoch reaching the disk in another order: a seeded sample.
        let epochs = Self.epochs(operations)
        for _ in 0..<min(64, epochs.count * 4) where !epochs.isEmpty {
            let epoch = epochs[rng.below(epochs.count)]
            guard epoch.writes.count > 1 else { continue }
            var reordered = DiskModel(initial)
            for operation in operations where operation.index < epoch.start { reordered.apply(operation) }
            let kept = epoch.writes.filter { _ in rng.below(2) == 0 }
            for operation in kept { reordered.apply(operation) }
            let state = reordered.durable == reordered.current ? reordered.current : reordered.namesWithoutData
            if seen.insert(state).inserted, only == nil || only == epoch.start {
                samples.append(CrashState(state: state, point: epoch.start, how: "power cut: writes of one fsync epoch reordered"))
            }
        }
        states += samples
        states = onlyFault == nil ? Array(states.prefix(maxStates)) : []

        // Check each state, run the program again, check again.
        for crash in states {
            let label = "\(crash.how) before operation \(crash.point)"
            let locks = Self.locksHeld(before: crash.point, in: operations)
            let input = TestInput(
                bytes: Array(Self.traceText(trace.filter { $0.index < crash.point }).utf8), mutations: [label],
                seedName: "crash point \(crash.point)")
            var attachments = crash.state.files.sorted { $0.key < $1.key }.map { Attachment(name: "state/\($0.key)", bytes: $0.value) }
            attachments.append(Attachment(name: "trace.txt", bytes: Array(Self.traceText(trace).utf8)))
            func add(_ kind: FindingKind, _ signature: String, _ detail: String, _ execution: Execution) {
                let lockNote = locks.isEmpty ? "" : "; locks held at this point: \(locks.joined(separator: ", "))"
                var finding = Finding(
                    kind: kind, signature: "\(crash.how): " + signature,
                    detail: "\(label) (\(trace.first { $0.index == crash.point }?.description ?? "the end")): \(detail)\(lockNote)",
                    input: input, execution: execution, verdict: nil, attachments: attachments)
                finding.replayArguments = ["--at", "\(crash.point)"]
                collector.add(finding, execution: executions)
            }
            executions += 1
            let folder = try freshFolder(crash.state)
            switch try digest(of: crash.state, scratch: folder) {
            case .failure(let execution, let why):
                add(.tornState, "the data does not load: \(Normalize.message(why))", "the check rejects the crash state: \(why)", execution)
            case .success(let lines):
                if let (kind, what) = Self.compare(lines, old: old, new: new) {
                    add(kind, what, "the check loads other data than before or after the run: \(what)", Execution(outcome: .accepted(digest: "")))
                }
            }
            let used = try rerun(in: folder, input: input, new: new, final: final, fresh: freshFolder, add: add)
            executions += used
        }

        if !faults.isEmpty {
            let points = FaultPoint.parse(FileManager.default.contents(atPath: faultLog.path).map { [UInt8]($0) } ?? [])
            var runs = 0
            for point in points where onlyFault == nil || onlyFault == point.index {
                for fault in faults where point.faults.contains(fault) && runs < maxStates {
                    runs += 1
                    let used = try checkFault(
                        fault, at: point, initial: initial, old: old, new: new, final: final, scratch: scratch, fresh: freshFolder
                    ) { collector.add($0, execution: executions) }
                    executions += used
                }
            }
            if onlyFault == nil, case .command(let command) = check, faults.contains(.eio) || faults.contains(.eintr) {
                let used = try checkReads(command, initial: initial, old: old, scratch: scratch, fresh: freshFolder) {
                    collector.add($0, execution: executions)
                }
                executions += used
            }
        }

        var result = collector.result(
            "crash points: \(target.name)", command: target.line, validator: check?.name ?? validator?.name, inputs: [data.path],
            checks: faults.isEmpty ? Self.checks : Self.faultChecks, executions: executions)
        result.configuration.seed = seed
        result.escapedProcessesKilled = escapees.value
        return Result(result: result, operations: operations, statesChecked: states.count)
    }

    // MARK: - The re-run

    /// Runs the program again on the state in `folder` (no crash, no fault): it must succeed,
    /// leave the new data and no file a clean run does not leave.
    /// - Parameter fromNew: The state already holds the new data (a fault after the save was
    ///   done): the re-run must succeed, but a program that is not repeatable (it adds a record
    ///   each time) may then save more.
    /// - Returns: The runs it made.
    private func rerun(
        in folder: URL, input: TestInput, new: [String], final: FolderState, fromNew: Bool = false,
        fresh: (FolderState) throws(CorruptFuzzError) -> URL, add: (FindingKind, String, String, Execution) -> Void
    ) throws(CorruptFuzzError) -> Int {
        var executions = 1
        let rerun = try run(target, replacing: "@@", with: folder.path, environment: targetEnvironment(folder))
        switch rerun.outcome {
        case .accepted:
            break
        case .crashed, .hung, .outOfMemory:
            if let finding = judge.judge(input, execution: rerun, label: nil) {
                add(finding.kind, "the re-run: " + finding.signature, "running the program again: \(rerun.outcome.summary)", rerun)
            }
            return executions
        default:
            add(.tornState, "the re-run fails (\(RoundTripCheck.rejection(rerun.outcome)))", "running the program again fails: \(rerun.outcome.summary)", rerun)
            return executions
        }
        if fromNew { return executions }
        let after = try DataFolder.snapshot(folder)
        executions += 1
        switch try digest(of: after, scratch: fresh(after)) {
        case .failure(let execution, let why):
            add(
                .tornState, "after the re-run, the data does not load: \(Normalize.message(why))", "after the re-run, the check rejects the data: \(why)",
                execution)
        case .success(let lines):
            if lines != new, let (kind, what) = Self.compare(lines, old: new, new: new) {
                add(kind, "after the re-run, " + what, "the re-run did not finish the job: \(what)", rerun)
            }
        }
        for stray in after.files.keys.sorted() where final.files[stray] == nil {
            add(.strayFile, "\(Self.shape(stray)) left after the re-run", "the re-run left \(stray), which a clean run does not leave", rerun)
        }
        return executions
    }

    // MARK: - I/O faults

    /// Runs the program with `fault` at `point`, then judges what it said against the data it
    /// left (for a failed fsync or close, the data a power cut then leaves: what it was to make
    /// durable lost), and runs it again without the fault.
    private func checkFault(
        _ fault: IOFault, at point: FaultPoint, initial: FolderState, old: [String], new: [String], final: FolderState,
        scratch: URL, fresh: (FolderState) throws(CorruptFuzzError) -> URL, report: (Finding) -> Void
    ) throws(CorruptFuzzError) -> Int {
        var executions = 0
        let folder = try fresh(initial)
        let log = scratch.appendingPathComponent("fault.log")
        var environment = targetEnvironment(folder).merging(recording(folder, log: log)) { $1 }
        environment["CORRUPT_FUZZ_FAULT_AT"] = "\(point.index)"
        environment["CORRUPT_FUZZ_FAULT"] = fault.rawValue
        executions += 1
        let faulted = try run(target, replacing: "@@", with: folder.path, environment: environment)
        let operations = OperationLog.parse(FileManager.default.contents(atPath: log.path).map { [UInt8]($0) } ?? [])
        let syncLost = operations.contains { $0.kind == .fsyncFailed }
        let state: FolderState
        if syncLost {
            var model = DiskModel(initial)
            for operation in operations { model.apply(operation) }
            state = model.current
        } else {
            state = try DataFolder.snapshot(folder)
        }
        // ENOSPC, EDQUOT and EIO at one operation are one bug when the program does the same
        // with each (ignores it): one signature, the fault in the detail.
        let where_ = "\(fault.signatureWords) at \(point.name) of \(Self.shape(point.path))"
        let label = "\(fault) at fault point \(point.index) (\(point.name) \(point.path))"
        let input = TestInput(
            bytes: Array(Self.traceText(operations.filter(\.isCrashPoint)).utf8), mutations: [label], seedName: "fault point \(point.index)")
        var attachments = state.files.sorted { $0.key < $1.key }.map { Attachment(name: "state/\($0.key)", bytes: $0.value) }
        attachments.append(Attachment(name: "trace.txt", bytes: Array(Self.traceText(operations).utf8)))
        func add(_ kind: FindingKind, _ signature: String, _ detail: String, _ execution: Execution) {
            var finding = Finding(
                kind: kind, signature: "\(where_): " + signature, detail: "\(label): \(detail)", input: input, execution: execution, verdict: nil,
                attachments: attachments)
            finding.replayArguments = ["--faults", fault.rawValue, "--fault-at", "\(point.index)"]
            report(finding)
        }
        let claimed: Bool
        switch faulted.outcome {
        case .accepted: claimed = true
        case .crashed, .hung, .outOfMemory:
            if let finding = judge.judge(input, execution: faulted, label: nil) {
                add(finding.kind, "the program: " + finding.signature, "the program: \(faulted.outcome.summary)", faulted)
            }
            return executions
        default: claimed = false
        }
        let said = claimed ? "the program reported success (exit 0)" : "the program reported the failure (\(RoundTripCheck.rejection(faulted.outcome)))"
        let lost = syncLost ? "; the writes the failed sync was to make durable are lost" : ""
        executions += 1
        var savedAlready = false
        let stateFolder = try fresh(state)
        switch try digest(of: state, scratch: stateFolder) {
        case .failure(let execution, let why):
            add(
                syncLost && claimed ? .lostData : .tornState, "the data does not load" + (claimed ? " after a reported success" : ""),
                "\(said), and the check rejects the data it left\(lost): \(why)", execution)
            // The re-run fails on such data too: the same bug, not another finding.
            return executions
        case .success(let lines):
            if lines == new {
                savedAlready = true
            } else if lines == old {
                if claimed {
                    add(
                        syncLost ? .lostData : .unreportedIOError, "success reported, but the save is not on disk",
                        "\(said), but the data is the old version\(lost)", faulted)
                    return executions
                }
            } else if let (kind, what) = Self.compare(lines, old: old, new: new) {
                let reported = claimed && kind == .lostData && !syncLost ? FindingKind.unreportedIOError : kind
                add(reported, what + (claimed ? " after a reported success" : ""), "\(said), and the check loads other data: \(what)\(lost)", faulted)
                return executions
            }
        }
        let used = try rerun(in: stateFolder, input: input, new: new, final: final, fromNew: savedAlready, fresh: fresh) { kind, signature, detail, execution in
            add(kind, "after the fault, " + signature, detail, execution)
        }
        executions += used
        return executions
    }

    /// The check, reading the data before the run, with `EIO` (and `EINTR`) at each of its
    /// reads: it must give the data or reject it as `io-error` (an app must not offer to delete a
    /// file it merely could not read), never accept part of it, never call it corrupt.
    private func checkReads(
        _ command: TargetCommand, initial: FolderState, old: [String], scratch: URL,
        fresh: (FolderState) throws(CorruptFuzzError) -> URL, report: (Finding) -> Void
    ) throws(CorruptFuzzError) -> Int {
        var executions = 0
        let folder = try fresh(initial)
        let faultLog = scratch.appendingPathComponent("check-faults.log")
        try? FileManager.default.removeItem(at: faultLog)
        let listing = [
            "CORRUPT_FUZZ_DATA_DIR": folder.path, "CORRUPT_FUZZ_RECORD": "/dev/null", "LD_PRELOAD": recorder, "CORRUPT_FUZZ_FAULT_LOG": faultLog.path,
        ]
        executions += 1
        _ = try run(command, replacing: "@@", with: folder.path, environment: listing)
        let reads = FaultPoint.parse(FileManager.default.contents(atPath: faultLog.path).map { [UInt8]($0) } ?? []).filter { $0.name == "read" }
        for point in reads {
            for fault in faults where point.faults.contains(fault) {
                var environment = listing
                environment["CORRUPT_FUZZ_FAULT_LOG"] = nil
                environment["CORRUPT_FUZZ_FAULT_AT"] = "\(point.index)"
                environment["CORRUPT_FUZZ_FAULT"] = fault.rawValue
                executions += 1
                let execution = try run(command, replacing: "@@", with: folder.path, environment: environment)
                let label = "\(fault) at read \(point.index) of \(point.path) by the check"
                let input = TestInput(bytes: [], mutations: [label], seedName: "check read \(point.index)")
                func add(_ kind: FindingKind, _ signature: String, _ detail: String) {
                    var finding = Finding(
                        kind: kind, signature: "the check, \(fault.signatureWords) at read of \(Self.shape(point.path)): " + signature,
                        detail: "\(label): \(detail)",
                        input: input, execution: execution, verdict: nil)
                    finding.replayArguments = ["--faults", fault.rawValue]
                    report(finding)
                }
                switch execution.outcome {
                case .accepted(let digest):
                    let lines = digest.split(separator: "\n").map(String.init).sorted()
                    if lines != old {
                        add(
                            .silentAcceptance, "accepted what it could not read",
                            "the check accepted the data with other content: \(Self.compare(lines, old: old, new: old)?.1 ?? "other data")")
                    }
                case .rejected(let reason, _, let message):
                    if reason != .ioError {
                        add(
                            .wrongReason, "expected \(Reason.ioError), got \(reason?.rawValue ?? "no reason")",
                            "rejected as \(reason?.rawValue ?? "no reason") (\(message ?? "no message")): a file that could not be read is not corrupt")
                    }
                case .crashed, .hung, .outOfMemory:
                    if let finding = judge.judge(input, execution: execution, label: nil) { add(finding.kind, finding.signature, execution.outcome.summary) }
                case .acceptedInvalid:
                    break
                }
            }
        }
        return executions
    }

    // MARK: - Pieces

    /// Runs `command` once with `@@` as `folder`'s path, as every target runs.
    private func run(_ command: TargetCommand, replacing placeholder: String, with value: String, environment: [String: String] = [:])
        throws(CorruptFuzzError) -> Execution
    {
        let execution = try ProcessExecutor.runOnce(command, replacing: placeholder, with: value, environment: environment, limits: limits)
        // What the run left running outside its process group (a daemon writing into the
        // folder) is killed now, as a campaign kills it: it would change the states checked
        // after it, and outlive the check. Only where this process is a subreaper (a session
        // makes the command line's one), as for `run`.
        let killed = Campaign.reapEscapees()
        if killed > 0 { escapees.withLock { $0 += killed } }
        return execution
    }

    private func targetEnvironment(_ folder: URL) -> [String: String] {
        environment.mapValues { $0.replacing("@@", with: folder.path) }
    }

    private func recording(_ folder: URL, log: URL, killAt: Int? = nil) -> [String: String] {
        var environment = ["CORRUPT_FUZZ_DATA_DIR": folder.path, "CORRUPT_FUZZ_RECORD": log.path, "LD_PRELOAD": recorder]
        if let killAt { environment["CORRUPT_FUZZ_KILL_AT"] = "\(killAt)" }
        try? FileManager.default.removeItem(at: log)
        return environment
    }

    enum Loaded {
        case success([String])
        case failure(Execution, String)

        var failureText: String {
            if case .failure(_, let why) = self { return why }
            return ""
        }
    }

    /// The data of `state` as the check sees it: its digest's lines, sorted.
    private func digest(of state: FolderState, scratch folder: URL) throws(CorruptFuzzError) -> Loaded {
        if case .closure(_, let body) = check {
            switch body(folder) {
            case .success(let lines): return .success(lines.sorted())
            case .failure(let why):
                return .failure(Execution(outcome: .rejected(reason: why.reason, exitCode: 1, message: why.message)), why.description)
            }
        }
        if case .command(let check) = check {
            let execution = try run(check, replacing: "@@", with: folder.path)
            switch execution.outcome {
            case .accepted(let digest):
                return .success(digest.split(separator: "\n").map(String.init).sorted())
            case .rejected(let reason, _, let message):
                return .failure(execution, "\(reason?.rawValue ?? "rejected"): \(message ?? "no message")")
            default:
                return .failure(execution, "the check: \(execution.outcome.summary)")
            }
        }
        var lines: [String] = []
        for (path, bytes) in state.files.sorted(by: { $0.key < $1.key }) {
            if let validator, fileExtension.isEmpty || path.hasSuffix(".\(fileExtension)") {
                if case .invalid(let violation) = validator.validate(bytes) {
                    return .failure(
                        Execution(outcome: .rejected(reason: violation.reason, exitCode: 1, message: violation.description)), "\(path): \(violation)")
                }
            }
            var hash = FNV1a()
            hash.add(bytes)
            lines.append("\(path)\t\(String(hash.value, radix: 16))")
        }
        return .success(lines)
    }

    /// How a digest compares with the data before and after: nil when it is one of them.
    static func compare(_ lines: [String], old: [String], new: [String]) -> (FindingKind, String)? {
        if lines == old || lines == new { return nil }
        func counts(_ lines: [String]) -> [String: Int] { lines.reduce(into: [:]) { $0[$1, default: 0] += 1 } }
        let have = counts(lines)
        let before = counts(old)
        let after = counts(new)
        if have.contains(where: { $0.value > max(before[$0.key] ?? 0, after[$0.key] ?? 0) && (before[$0.key] != nil || after[$0.key] != nil) }) {
            return (.duplicateData, "records duplicated")
        }
        let known = Set(old).union(new)
        if lines.allSatisfy(known.contains) {
            if Set(lines).isSuperset(of: old) || Set(lines).isSuperset(of: new) { return (.tornState, "a mix of the old and the new data") }
            return (.lostData, "records lost")
        }
        return (.tornState, "a mix of the old and the new data")
    }

    /// The operations between two fsyncs: their writes may reach the disk in any order.
    static func epochs(_ operations: [FileOperation]) -> [(start: Int, writes: [FileOperation])] {
        var epochs: [(start: Int, writes: [FileOperation])] = []
        var current: [FileOperation] = []
        var start = 0
        for operation in operations where operation.isCrashPoint {
            if operation.kind == .fsync {
                if !current.isEmpty { epochs.append((start, current)) }
                current = []
                start = operation.index + 1
            } else if operation.kind == .write {
                current.append(operation)
            }
        }
        if !current.isEmpty { epochs.append((start, current)) }
        return epochs
    }

    /// The files locked before operation `point`.
    static func locksHeld(before point: Int, in operations: [FileOperation]) -> [String] {
        var held: [String: Bool] = [:]
        for operation in operations where operation.index <= point {
            if operation.kind == .lock { held[operation.path] = true }
            if operation.kind == .unlock || operation.kind == .unlockOnClose { held[operation.path] = false }
        }
        return held.filter(\.value).map(\.key).sorted()
    }

    /// A file name as signatures show it: numbers as `#`, and a part of the name that looks
    /// random (mixed case, as temporary files are named: `.dat.nosync27BB.VOdxDB`) as `*`, so
    /// one kind of leftover file is one finding: `.dat.*.*`, `notes-v#.txt.bak`.
    static func shape(_ path: String) -> String {
        var out = ""
        var part = ""
        func flush() {
            let letters = part.filter(\.isLetter)
            let mixed = letters.contains(where: \.isUppercase) && letters.contains(where: \.isLowercase) && part.count >= 5
            out += mixed ? "*" : Normalize.message(part)
            part = ""
        }
        for character in path {
            if ".-_/".contains(character) {
                flush()
                out.append(character)
            } else {
                part.append(character)
            }
        }
        flush()
        return out
    }

    static func traceText(_ operations: [FileOperation]) -> String {
        operations.map { "\($0.index)\t\($0.description)" }.joined(separator: "\n") + "\n"
    }
}
