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
    /// Runs `input` in `slot` (in `0..<slots`).
    /// - Throws: ``CorruptFuzzError`` when the loader cannot be run at all.
    func execute(_ input: TestInput, slot: Int) throws(CorruptFuzzError) -> Execution
}

extension Executor {
    public var batchSize: Int { slots * 4 }
}
