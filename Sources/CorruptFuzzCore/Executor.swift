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
}

extension Executor {
    public var batchSize: Int { slots * 4 }
    public var stability: Stability? { nil }
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
