import CorruptFuzzCore
import Foundation

/// The one place that decides what a finding is: the oracle, the validators that label inputs,
/// the outside traps (a canary file and a loopback listener, for formats whose documents can
/// name files and URLs) and the verdicts remembered per slot.
///
/// Every mode judges through one: a campaign and its minimizer, `replay`, the round-trip and
/// version-skew checks, crash points and the libFuzzer bridge. So a finding replays as it was
/// found: replay builds the judge the campaign built, traps included.
public final class Judge: Sendable {
    /// Labels inputs (the app's validator when given, else the format's); nil: no labels.
    public let validator: (any Validator)?
    /// The format's own validator when ``validator`` is the app's: it labels nothing, and its
    /// verdict is written beside each new finding.
    public let reference: (any Validator)?
    private let oracle: Oracle
    private let trapsHost: OutsideTrapsHost?
    /// One memory per slot (a slot is never used from two threads at once); none when the
    /// validator's verdicts are not worth remembering (``Validator/remembersVerdicts``).
    private let verdicts: [VerdictMemory]

    /// One execution, judged.
    public struct Judgement: Sendable {
        public var execution: Execution
        /// The validator's verdict, when the oracle needed it.
        public var verdict: Verdict?
        public var finding: Finding?
        /// The input missed the deadline once and finished when run again with a longer one:
        /// a slow input, not a hang.
        public var slow = false
    }

    /// Whether a hang has been confirmed once (after that, a campaign's suspected hangs are
    /// hits of a known finding and are not run again, unless the caller asks).
    private let confirmedHang = LockedBox(false)

    /// - Parameters:
    ///   - validator: Labels inputs, if given.
    ///   - reference: The format's validator beside the app's (reported, never labels).
    ///   - outsideTraps: Whether to set the canary and the listener (the format's catalogue
    ///     names them). Without them the `xxe` check is skipped, and the report says why.
    ///   - slots: How many slots judge at once.
    public init(validator: (any Validator)? = nil, reference: (any Validator)? = nil, outsideTraps: Bool = false, slots: Int = 1) {
        self.validator = validator
        self.reference = reference
        trapsHost = outsideTraps ? try? OutsideTrapsHost() : nil
        oracle = Oracle(traps: trapsHost?.traps)
        verdicts = validator?.remembersVerdicts == true ? (0..<max(1, slots)).map { _ in VerdictMemory() } : []
    }

    /// A judge for `format`: its validator labels unless the app's is given, and its traps are
    /// set when its catalogue uses them.
    public convenience init(format: (any FuzzFormat)?, validator: (any Validator)? = nil, slots: Int = 1) {
        self.init(
            validator: validator ?? format?.validator, reference: validator == nil ? nil : format?.validator,
            outsideTraps: format?.mutator?.usesOutsideTraps == true, slots: slots)
    }

    deinit { trapsHost?.stop() }

    /// The canary and the listener, when set.
    public var traps: OutsideTraps? { trapsHost?.traps }

    /// Runs `input` in `executor`'s `slot` and judges what happened.
    ///
    /// A suspected hang is confirmed before it is judged: the input runs again in a fresh process
    /// with a longer deadline, in CPU time (``Executor/confirmHang(_:slot:margin:)``,
    /// ``ConfirmationDeadline``). Only if it misses that one too
    /// is it a hang; otherwise what the second run did is judged (a crash whose report was slow
    /// to come is a crash) and the input is counted as slow.
    /// - Parameters:
    ///   - confirming: Which suspected hangs to confirm: until one is confirmed (a campaign),
    ///     every one (a minimizer of a hang must, so that a minimized hang is one) or none (a
    ///     minimizer of another finding: a candidate that hangs is not that finding).
    ///   - hangMargin: A multiple of the confirmation's deadline (a minimizer asks for 2: left
    ///     alone it would shrink a hang to the input that just misses the confirmation, which a
    ///     replay on a quieter machine then finishes in time).
    public func run(
        _ input: TestInput, on executor: any Executor, slot: Int = 0, confirming: HangConfirmation = .untilOneIsConfirmed, hangMargin: Int = 1
    ) throws(CorruptFuzzError) -> Judgement {
        let watch = self.watch(input)
        var execution = try executor.execute(watch.input, slot: slot)
        // A process that lived through a trap may wait forever for a lock the trap left held:
        // its hang is always run again in a fresh process, and one that finishes there is
        // neither a hang nor a slow input.
        let tainted = execution.afterRecoveredTrap
        guard case .hung(let first) = execution.outcome, confirms(confirming) || tainted else {
            return judge(input, execution: execution, slot: slot, watch: watch)
        }
        let again = try executor.confirmHang(watch.input, slot: slot, margin: hangMargin)
        guard case .hung(let second) = again.outcome else {
            var judged = judge(input, execution: again, slot: slot, watch: watch)
            judged.slow = !tainted
            return judged
        }
        if again.starved { return judge(input, execution: again, slot: slot, watch: watch) }
        confirmedHang.set(true)
        execution.stderr = again.stderr.isEmpty ? execution.stderr : again.stderr
        execution.hangConfirmationStretch = Self.stretch(wallMicroseconds: again.microseconds, cpuMilliseconds: second)
        var judged = judge(input, execution: execution, slot: slot, watch: watch)
        if second != first { judged.finding?.detail += ", nor when run again in a fresh process with \(second) ms of CPU time" }
        return judged
    }

    /// Why an input whose hang's confirmation was starved of CPU is undecided (the report's
    /// `undecided` counts it under these words).
    public static let starvedReason = "starved: still running at the hang confirmation's wall-clock cap with less than half the CPU time it was given"

    /// ``Execution/hangConfirmationStretch`` of a confirmation that took `wallMicroseconds` for
    /// a deadline of `cpuMilliseconds` of CPU time: from 1 (it had a core to itself, or it slept)
    /// to 4 (the wall-clock cap).
    static func stretch(wallMicroseconds: Int64, cpuMilliseconds: Int) -> Double {
        guard cpuMilliseconds > 0 else { return 1 }
        return min(4, max(1, Double(wallMicroseconds) / (Double(cpuMilliseconds) * 1000)))
    }

    /// Which suspected hangs ``run(_:on:slot:confirming:hangMargin:)`` runs again to confirm.
    public enum HangConfirmation: Sendable {
        case untilOneIsConfirmed, every, none
    }

    /// Whether a suspected hang is confirmed (asked only of a hang: the flag takes a lock).
    private func confirms(_ confirming: HangConfirmation) -> Bool {
        switch confirming {
        case .untilOneIsConfirmed: !confirmedHang.value
        case .every: true
        case .none: false
        }
    }

    /// One run of an input, watched by the listener: ``input`` is what to run, with the
    /// listener's URLs stamped for this run alone (``OutsideTrapsHost/stamp(_:)``), so that only
    /// a request this run made is credited to it.
    public struct Watch: Sendable {
        /// The input to run (the one given, when it names no URL of the listener).
        public let input: TestInput
        let stamp: OutsideTrapsHost.Stamp?
    }

    /// Prepares one run of `input` (see ``Watch``).
    public func watch(_ input: TestInput) -> Watch {
        guard let trapsHost, let bytes = input.bytes, let stamp = trapsHost.stamp(bytes) else { return Watch(input: input, stamp: nil) }
        var stamped = input
        stamped.bytes = stamp.bytes
        return Watch(input: stamped, stamp: stamp)
    }

    /// Judges an execution of `input` that ran in `slot`, asking the validator only when the
    /// oracle needs its verdict.
    /// - Parameter watch: How the run was prepared (``watch(_:)``): the requests it made to the
    ///   listener count. Without it, none do.
    public func judge(_ input: TestInput, execution: Execution, slot: Int = 0, watch: Watch? = nil) -> Judgement {
        // Still running at a hang confirmation's wall-clock cap, under half its CPU time: the
        // machine is too busy to tell a hang from a slow input, and a hang claimed then would
        // not replay on a quieter one (an entity bomb that runs out of memory in a second there).
        if execution.starved, case .hung = execution.outcome {
            _ = watch?.stamp.flatMap { trapsHost?.requests(of: $0) }
            return Judgement(execution: execution, verdict: .undecided(Self.starvedReason), finding: nil)
        }
        var verdict: Verdict?
        if let validator, oracle.needsVerdict(for: execution.outcome, input: input) {
            verdict = verdicts.isEmpty ? validator.validate(input.bytes) : verdicts[slot].verdict(of: input.bytes) { validator.validate($0) }
        }
        let fetched = watch?.stamp.flatMap { trapsHost?.requests(of: $0) } ?? []
        let finding = oracle.judge(input, execution: execution, verdict: verdict, fetched: fetched)
        return Judgement(execution: execution, verdict: verdict, finding: finding)
    }

    /// Judges an execution under a label the driver knows (a document the app itself wrote is
    /// valid; nil: only crashes, hangs, memory and held files count), without the validator.
    /// A run whose hang confirmation was starved of CPU (``Execution/starved``) is no finding:
    /// undecided, as ``judge(_:execution:slot:watch:)`` says (a version-skew check on a loaded
    /// machine reported a loader that needs 0.6 s of CPU as a hang).
    public func judge(_ input: TestInput, execution: Execution, label: Verdict?) -> Finding? {
        if execution.starved, case .hung = execution.outcome { return nil }
        return oracle.judge(input, execution: execution, verdict: label)
    }

    /// `finding`'s detail with the format's own verdict on its input, when the app's validator
    /// labelled it (once per distinct finding, not per hit).
    public func withReference(_ finding: Finding) -> Finding {
        guard let reference else { return finding }
        var finding = finding
        finding.detail += "; the format's own validator (\(reference.name)) says: \(reference.validate(finding.input.bytes))"
        return finding
    }

    /// A saved input with the trap references of the run that saved it (its canary folder and
    /// listener, gone since) pointed at this judge's, so that a reproducer that read the canary
    /// or fetched a URL does it again; other inputs are returned as they are.
    public func rebind(_ bytes: [UInt8]) -> [UInt8] {
        guard let traps = trapsHost?.traps else { return bytes }
        return OutsideTrapsHost.rebind(bytes, to: traps)
    }
}
