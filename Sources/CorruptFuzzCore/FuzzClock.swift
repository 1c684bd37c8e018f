import Foundation

/// Where a campaign reads the time: its `--duration`, the share it keeps for minimization, the
/// checks in a fresh process and the report, and every "is fuzzing over" look are read from one
/// clock, taken as a value (``MonotonicClock`` unless told otherwise). A test drives a
/// ``ManualClock`` instead, so that what a timed campaign does depends on the time its inputs
/// say they took, not on how busy the machine is.
///
/// The clock is read by the jobs' threads, per batch and per slow input: an implementation must
/// be cheap and safe to read from any thread. The deadlines of a target's runs (its timeout,
/// a hang's confirmation in CPU time) are not this clock's: they time real processes, and stay
/// with the executors.
public protocol FuzzClock: Sendable {
    /// The time now, on this clock's timeline.
    var now: FuzzInstant { get }
}

/// A point in time on a ``FuzzClock``'s timeline. Instants of different clocks are not
/// comparable in meaning (a ``ManualClock``'s start where it was made).
public struct FuzzInstant: Sendable, Hashable, Comparable {
    /// The instant on the continuous clock's timeline (for a ``ManualClock``, its start plus
    /// what it was advanced by).
    @usableFromInline let instant: ContinuousClock.Instant

    @inlinable init(_ instant: ContinuousClock.Instant) { self.instant = instant }

    @inlinable public static func < (a: FuzzInstant, b: FuzzInstant) -> Bool { a.instant < b.instant }
    @inlinable public static func + (a: FuzzInstant, b: Duration) -> FuzzInstant { FuzzInstant(a.instant + b) }
    @inlinable public static func - (a: FuzzInstant, b: Duration) -> FuzzInstant { FuzzInstant(a.instant - b) }
    @inlinable public static func - (a: FuzzInstant, b: FuzzInstant) -> Duration { a.instant - b.instant }
}

/// The machine's monotonic clock (``ContinuousClock``): what a campaign reads unless told otherwise.
public struct MonotonicClock: FuzzClock {
    public init() {}
    @inlinable public var now: FuzzInstant { FuzzInstant(ContinuousClock.now) }
}

/// A clock that moves only when it is told to (``advance(by:)``), from any thread: a test's
/// executor advances it by what each input "took", so that a timed campaign ends after the same
/// inputs on an idle machine and on a loaded one, and its time-based decisions (what fuzzing
/// keeps for minimization, the checks and the report) can be asserted exactly.
public final class ManualClock: FuzzClock, @unchecked Sendable {
    private let lock = NSLock()
    private let start = ContinuousClock.now
    private var advanced: Duration = .zero

    public init() {}

    public var now: FuzzInstant { lock.withLock { FuzzInstant(start + advanced) } }

    /// The time since this clock was made: what it was advanced by.
    public var elapsed: Duration { lock.withLock { advanced } }

    /// Moves the clock forward by `duration` (never back).
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "a clock does not go back")
        lock.withLock { advanced += duration }
    }
}
