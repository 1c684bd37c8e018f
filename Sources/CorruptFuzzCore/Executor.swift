/// Runs inputs against a loader and reports what it did.
///
/// An executor has a fixed number of slots; the campaign never uses one slot from two threads
/// at once, so implementations may keep per-slot state without locks.
public protocol Executor: Sendable {
    /// How many executions may run at once.
    var slots: Int { get }
    /// How many inputs the campaign draws at a time before it looks at the clock and the
    /// findings again: a few per slot for processes, more for calls in this process, which
    /// take microseconds. Fixed per executor, so a seed always gives the same inputs.
    var batchSize: Int { get }
    /// How often the same input gave the same outcome when it was run again, for executors
    /// that keep the loader running between inputs (nil for the others).
    var stability: Stability? { get }
    /// Runs `input` in `slot` (in `0..<slots`).
    /// - Throws: ``CorruptFuzzError`` when the loader cannot be run at all.
    func execute(_ input: TestInput, slot: Int) throws(CorruptFuzzError) -> Execution
    /// Runs `input` again after it seemed to hang: in a fresh process, with a longer deadline in
    /// CPU time (``ConfirmationDeadline``), so that a loader slowed by a busy machine, or
    /// one whose crash report was still being written at the deadline, is not reported as a
    /// hang. An executor without deadlines (calls in this process) runs it as ``execute(_:slot:)``.
    /// - Parameter margin: A multiple of that deadline (a minimizer asks for 2, so that what it
    ///   keeps hangs well past what a replay's confirmation waits for).
    func confirmHang(_ input: TestInput, slot: Int, margin: Int) throws(CorruptFuzzError) -> Execution
}

extension Executor {
    public var batchSize: Int { slots * 4 }
    public var stability: Stability? { nil }
    public func confirmHang(_ input: TestInput, slot: Int, margin: Int) throws(CorruptFuzzError) -> Execution { try execute(input, slot: slot) }

    /// Runs `input` once, as a check that runs each file once needs it: a run that misses its
    /// deadline runs again with the confirmation deadline (``confirmHang(_:slot:margin:)``), and
    /// what that run did is the outcome, so that a loader starved on a busy machine is not a hang.
    public func executeConfirmingHang(_ input: TestInput, slot: Int) throws(CorruptFuzzError) -> Execution {
        let first = try execute(input, slot: slot)
        guard case .hung = first.outcome else { return first }
        return try confirmHang(input, slot: slot, margin: 1)
    }
}

/// The deadline of a hang's confirmation run: three times the first deadline, and at least two
/// seconds more than it. AFL++ re-runs a timeout with a longer deadline before it calls it a
/// hang, for the same reason: on a loaded machine a correct loader can miss a short deadline
/// once, but not one three times as long in a fresh process.
public func hangConfirmationMilliseconds(for timeout: Int) -> Int { max(3 * timeout, timeout + 2000) }

/// The deadline of a hang's confirmation run, in CPU time: ``hangConfirmationMilliseconds(for:)``
/// times the margin, with a wall-clock cap four times as long.
///
/// The first run's deadline is wall-clock time (cheap, and a hang there costs only the
/// deadline); the confirmation's is the target's own CPU time, because on a machine whose cores
/// are busy with something else a correct loader that needs 0.9 s of CPU can take several
/// seconds to get it. A target still using CPU at the CPU deadline hangs; one that sleeps
/// without using CPU (a deadlock, a read from a pipe that never comes) hangs as soon as that is
/// seen; one that is starved gets the CPU time it was given, up to the cap.
public struct ConfirmationDeadline: Sendable, Hashable {
    public var cpuMilliseconds: Int
    public var wallMilliseconds: Int

    /// The confirmation deadline of a run whose first deadline was `timeout` milliseconds.
    /// - Parameter margin: A multiple of it (a minimizer of a hang asks for 2).
    public init(timeout: Int, margin: Int = 1) {
        cpuMilliseconds = hangConfirmationMilliseconds(for: timeout) * max(1, margin)
        wallMilliseconds = 4 * cpuMilliseconds
    }
}

/// Whether a loader that stays running between inputs gives an input the same outcome every
/// time: a loader that keeps state from one input to the next (a cache, a global, a half-done
/// migration) does not, and then what it did with an input depends on what came before, as
/// AFL++'s stability measures.
public struct Stability: Sendable, Hashable, Codable {
    /// Inputs run a second time, later, to compare.
    public var rechecked = 0
    /// Of those, how many had another outcome the second time.
    public var differed = 0
    /// The first difference: what the input did each time.
    public var example: String?

    public init(rechecked: Int = 0, differed: Int = 0, example: String? = nil) {
        self.rechecked = rechecked
        self.differed = differed
        self.example = example
    }

    /// The share of rechecked inputs with the same outcome, 1 when none was rechecked.
    public var ratio: Double { rechecked == 0 ? 1 : Double(rechecked - differed) / Double(rechecked) }
}
