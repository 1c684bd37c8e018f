import CorruptFuzzCore
import Foundation

/// Everything that shapes a campaign, with documented defaults; the CLI only maps options here.
public struct FuzzConfiguration: Sendable {
    /// The seed of every random choice; the same seed and corpus give the same inputs.
    public var seed: UInt64 = 0
    /// Stop after this many executions (nil: no limit).
    public var maxRuns: Int?
    /// Stop after this many seconds (nil: no limit). With neither limit, 60 seconds.
    public var maxSeconds: Double?
    /// Parallel executions; defaults to the number of processor cores.
    public var jobs: Int = System.coreCount
    /// Limits for each execution of the target.
    public var limits = ProcessExecutor.Limits()
    /// Inputs never grow beyond this many bytes.
    public var maxInputLength: Int = 1 << 20
    /// Catalogue entries larger than this are left out (the hostile XML catalogue has an 8 MB
    /// text node and a 100 MB attribute).
    public var maxCatalogueInputLength: Int = 128 << 20
    /// Havoc stacks up to this many mutations on one input (a power of two).
    public var maxStackedMutations: Int = 8
    /// Files up to this size are truncated at every length; larger ones at sampled lengths.
    public var truncateEveryLengthUpTo: Int = 1024
    /// Whether findings are minimized before they are reported.
    public var minimize = true
    /// The most executions spent minimizing one finding.
    public var minimizeMaxTests = 400
    /// The most seconds spent minimizing one finding.
    public var minimizeMaxSeconds: Double = 10
    /// The most seconds spent minimizing all findings; crashes, hangs and memory blow-ups go
    /// first, and findings left when it runs out are reported as found.
    public var minimizeTotalSeconds: Double = 120
    /// The mutators of the havoc stage.
    public var mutators: [Mutator] = Mutator.byteLevel

    public init() {}
}

/// Facts about the machine.
public enum System {
    /// The number of processor cores available to this process.
    public static var coreCount: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }
}
