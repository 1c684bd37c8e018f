import CCorruptFuzzSpawn
import CorruptFuzzCore
import Foundation

/// Everything that shapes a campaign, with documented defaults; the CLI only maps options here.
public struct FuzzConfiguration: Sendable {
    /// The seed of every random choice; the same seed and corpus give the same inputs.
    public var seed: UInt64 = 0
    /// Stop after this many executions (nil: no limit).
    public var maxRuns: Int?
    /// The campaign's whole wall time in seconds, from ``startedAt``: fuzzing, minimization and
    /// what the caller does after within it (nil: no limit). With neither limit, 60 seconds.
    /// Once there is a finding, fuzzing stops early enough to leave minimization its share: a
    /// fifth of the time, at most ``minimizeTotalSeconds``.
    public var maxSeconds: Double?
    /// When ``maxSeconds`` started to count, on ``clock``: when the command started, so that
    /// its setup counts (nil: when the campaign starts).
    public var startedAt: FuzzInstant?
    /// The clock every time-based decision of the campaign reads (``maxSeconds``, the time kept
    /// for minimization, the checks in a fresh process and the report): the machine's monotonic
    /// clock, or a test's ``ManualClock``. A target's run deadlines are not read from it (they
    /// time real processes).
    public var clock: any FuzzClock = MonotonicClock()
    /// Parallel executions; defaults to the number of processor cores.
    public var jobs: Int = System.coreCount
    /// Limits for each execution of the target.
    public var limits = ProcessExecutor.Limits()
    /// Inputs never grow beyond this many bytes.
    public var maxInputLength: Int = 1 << 20
    /// Catalogue entries larger than this are left out (the hostile XML catalogue's largest is a
    /// 12 MiB attribute). With ``jobs``, it bounds the campaign's own memory: at most one entry of
    /// a megabyte or more is in flight at a time (``InputSchedule``).
    public var maxCatalogueInputLength: Int = 16 << 20
    /// Havoc stacks up to this many mutations on one input (a power of two).
    public var maxStackedMutations: Int = 8
    /// Files up to this size are truncated at every length; larger ones at sampled lengths.
    public var truncateEveryLengthUpTo: Int = 1024
    /// Whether findings are minimized before they are reported.
    public var minimize = true
    /// The most executions spent minimizing one finding (`--minimize-runs`); nil: no count,
    /// the time decides. (It was a fixed 400: a finding of a few hundred bytes stopped short of
    /// 1-minimal however much of the campaign's time was left.)
    public var minimizeMaxTests: Int?
    /// The most seconds spent minimizing one finding; nil: its share of the time minimization
    /// has left (that time divided among the findings still to minimize), so that one finding
    /// alone gets it all and many share it.
    public var minimizeMaxSeconds: Double?
    /// The most seconds spent minimizing all findings (`--minimize-time`; within a fifth of
    /// ``maxSeconds`` when it is set); crashes, hangs and memory blow-ups go first, and findings
    /// left when it runs out are reported as found.
    public var minimizeTotalSeconds: Double = 120
    /// The mutators of the havoc stage.
    public var mutators: [Mutator] = Mutator.byteLevel
    /// This campaign's part of a campaign split across machines (`--shard I/N`), nil for all.
    public var shard: Shard?
    /// Whether an instrumented target's edge coverage guides the campaign (`--no-coverage`
    /// turns it off): an input that reaches new code is kept and mutated further, and the
    /// comparisons that did not hold become mutations. Targets without instrumentation run as
    /// without it.
    public var coverage = true

    public init() {}
}

/// Facts about the machine.
public enum System {
    /// The number of processor cores available to this process.
    public static var coreCount: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// Has the allocator give each block of 256 KiB or more back to the system as soon as it is
    /// freed (glibc; elsewhere nothing): a campaign's resident memory then follows what it holds,
    /// not the largest input it ran. Process-wide, so for a program that runs campaigns (the
    /// CLI), not for a library's caller.
    public static func returnLargeBlocksAtOnce() { cf_return_large_blocks_at_once() }
}

extension FuzzConfiguration: Codable {
    // `mutators` are code, not data: a decoded configuration has the default ones.
    private enum CodingKeys: String, CodingKey {
        case seed, maxRuns, maxSeconds, jobs, limits, maxInputLength, maxCatalogueInputLength, maxStackedMutations
        case truncateEveryLengthUpTo, minimize, minimizeMaxTests, minimizeMaxSeconds, minimizeTotalSeconds, shard
    }
}

/// One part of a campaign split deterministically across machines: shard `index` of `count`
/// (0-based here, `--shard 1/2` on the command line) runs every `count`-th of the campaign's
/// deterministic inputs (regressions, seeds, the format's catalogue, appended bytes,
/// truncations) and its own stream of random mutations. Together the shards run every
/// deterministic input once; `corrupt-fuzz merge` combines their reports.
public struct Shard: Sendable, Hashable, Codable, CustomStringConvertible {
    public var index: Int
    public var count: Int

    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// `2/4` (1-based, as `--shard` takes it).
    public var description: String { "\(index + 1)/\(count)" }

    /// Parses `I/N` with 1 ≤ I ≤ N.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]), n >= 1, (1...n).contains(i) else { return nil }
        self.init(index: i - 1, count: n)
    }

    /// Whether the deterministic input at `position` is this shard's.
    public func owns(_ position: Int) -> Bool { position % count == index }

    /// The random stream of this shard: the campaign's seed for shard 1, others derived from it.
    public func seed(_ base: UInt64) -> UInt64 { index == 0 ? base : base ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15) }
}
