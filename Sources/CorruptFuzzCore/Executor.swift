/// Runs inputs against a loader and reports what it did.
///
/// An executor has a fixed number of slots; the campaign never uses one slot from two threads
/// at once, so implementations may keep per-slot state without locks.
public protocol Executor: Sendable {
    /// How many executions may run at once.
    var slots: Int { get }
    /// Runs `input` in `slot` (in `0..<slots`).
    /// - Throws: ``CorruptFuzzError`` when the loader cannot be run at all.
    func execute(_ input: TestInput, slot: Int) throws(CorruptFuzzError) -> Execution
}
