import CCorruptFuzzSpawn
import CCorruptFuzzWorker
import Foundation

/// A comparison the loader made that did not hold, logged by SanitizerCoverage's comparison
/// callbacks (`corrupt_fuzz_coverage.h`): the value it read and the value it wanted. A mutation
/// that writes `wanted` where `observed` is in the input gets past a magic number, a version
/// check or a record type in one step, where random bytes need billions (input-to-state, as
/// libFuzzer's and AFL++'s comparison logs do).
public struct Comparison: Sendable, Hashable, Codable {
    public var observed: UInt64
    public var wanted: UInt64
    /// 2, 4 or 8 bytes.
    public var size: UInt8

    public init(observed: UInt64, wanted: UInt64, size: UInt8) {
        self.observed = observed
        self.wanted = wanted
        self.size = size
    }
}

/// What one run showed of an instrumented loader's code: the edges (with AFL's hit-count
/// buckets) its slot had not seen before, and the comparisons that did not hold.
public struct CoverageSample: Sendable, Hashable, Codable {
    /// `index << 8 | buckets` for each map position with a bucket new to the slot.
    public var newBits: [UInt32] = []
    public var comparisons: [Comparison] = []

    public init(newBits: [UInt32] = [], comparisons: [Comparison] = []) {
        self.newBits = newBits
        self.comparisons = comparisons
    }
}

/// The layout corrupt-fuzz and the targets' coverage runtime share.
public enum CoverageLayout {
    /// Bytes of the edge map (AFL's `MAP_SIZE`).
    public static let mapSize = Int(CF_COVERAGE_MAP_SIZE)
    /// Where the comparison log starts: after room for AFL++ programs with more edges than the
    /// map (which write past it; only the map is read).
    public static let logOffset = Int(CF_COVERAGE_LOG_OFFSET)
    /// Bytes of the segment: the edge area, then the comparison log.
    public static let segmentSize = logOffset + MemoryLayout<cf_comparison_log>.size
    /// How many comparisons the log of one run holds.
    public static let comparisonCapacity = Int(CF_COVERAGE_COMPARISONS)
    /// The segment's id for corrupt-fuzz's runtime, and for AFL++'s.
    public static let variable = CF_COVERAGE_VARIABLE
    public static let aflVariable = CF_COVERAGE_AFL_VARIABLE

    /// AFL's hit-count buckets: 1, 2, 3, 4–7, 8–15, 16–31, 32–127, 128+, one bit each.
    static let buckets: [UInt8] = (0..<256).map { count in
        switch count {
        case 0: 0
        case 1: 1
        case 2: 2
        case 3: 4
        case 4...7: 8
        case 8...15: 16
        case 16...31: 32
        case 32...127: 64
        default: 128
        }
    }
}

/// One slot's shared segment: the edge map and comparison log a target it starts writes.
public final class CoverageSegment: @unchecked Sendable {
    public let id: Int32
    private let base: UnsafeMutableRawPointer
    public var map: UnsafeMutablePointer<UInt8> { base.assumingMemoryBound(to: UInt8.self) }
    public var log: UnsafeMutablePointer<cf_comparison_log> {
        (base + CoverageLayout.logOffset).assumingMemoryBound(to: cf_comparison_log.self)
    }

    public init() throws(CorruptFuzzError) {
        var id: Int32 = 0
        guard let base = cf_shm_create(CoverageLayout.segmentSize, &id) else {
            throw CorruptFuzzError(.system, "cannot make a shared-memory segment for coverage: \(String(cString: strerror(errno)))")
        }
        self.base = base
        self.id = id
    }

    deinit { cf_shm_release(base, id) }

    /// What a target's environment says so that it writes here.
    public var environment: [String: String] {
        [CoverageLayout.variable: String(id), CoverageLayout.aflVariable: String(id)]
    }

    /// Clears the map and starts the log's next run, before a run.
    public func reset() {
        map.update(repeating: 0, count: CoverageLayout.mapSize)
        log.pointee.count = 0
        log.pointee.epoch &+= 1
    }
}

/// Reads one slot's map after each run: the buckets new to the slot, and the comparisons.
///
/// Until a target has shown an edge, a reader looks at its first 64 runs only: an uninstrumented
/// target then costs nothing more.
public struct CoverageReader: Sendable {
    private var seen = [UInt8](repeating: 0, count: CoverageLayout.mapSize)
    /// Whether any run has written the map.
    public private(set) var sawCoverage = false
    private var runs = 0

    public init() {}

    /// Whether the next run's map should be cleared and read.
    public var isActive: Bool { sawCoverage || runs < 64 }

    /// The run's sample, or nil when it wrote nothing.
    /// - Parameter allComparisons: Whether the comparisons are read even when the run reached
    ///   nothing new (a seed's: its comparisons guide the mutations of it). Otherwise they are
    ///   read only with new coverage, for the inputs that join the pool: reading the log of
    ///   every run cost a loader of 30,000 inputs/s a fifth of its pace.
    public mutating func sample(
        map: UnsafePointer<UInt8>, log: UnsafePointer<cf_comparison_log>?, allComparisons: Bool = true
    ) -> CoverageSample? {
        runs += 1
        var sample = CoverageSample()
        var any = false
        CoverageLayout.buckets.withUnsafeBufferPointer { buckets in
            seen.withUnsafeMutableBufferPointer { seen in
                let words = UnsafeRawPointer(map).assumingMemoryBound(to: UInt64.self)
                for word in 0..<(CoverageLayout.mapSize / 8) where words[word] != 0 {
                    any = true
                    for index in (word * 8)..<(word * 8 + 8) {
                        let bucket = buckets[Int(map[index])]
                        if bucket & ~seen[index] != 0 {
                            seen[index] |= bucket
                            sample.newBits.append(UInt32(index) << 8 | UInt32(bucket))
                        }
                    }
                }
            }
        }
        if let log, log.pointee.count > 0, allComparisons || !sample.newBits.isEmpty {
            let epoch = log.pointee.epoch
            // The entries in place (`log.pointee.entries` would copy all 12 KB of them first).
            let entries = (UnsafeRawPointer(log) + MemoryLayout<cf_comparison_log>.offset(of: \cf_comparison_log.entries)!)
                .assumingMemoryBound(to: cf_comparison.self)
            // In slot order (a Set's order would differ from run to run of corrupt-fuzz, and with
            // it the inputs of a seed).
            for i in 0..<CoverageLayout.comparisonCapacity where entries[i].epoch == epoch && sample.comparisons.count < 64 {
                let entry = entries[i]
                guard entry.size == 2 || entry.size == 4 || entry.size == 8 else { continue }
                let comparison = Comparison(observed: entry.observed, wanted: entry.wanted, size: UInt8(entry.size))
                if !sample.comparisons.contains(comparison) { sample.comparisons.append(comparison) }
            }
        }
        guard any else { return nil }
        sawCoverage = true
        return sample
    }
}

/// Every edge and bucket a campaign has seen: decides which inputs reached new code.
public struct CoverageTable: Sendable {
    private var seen = [UInt8](repeating: 0, count: CoverageLayout.mapSize)
    /// Map positions hit at least once.
    public private(set) var edges = 0

    public init() {}

    /// What a sample showed that the campaign had not seen.
    public enum Novelty: Comparable, Sendable {
        case none
        /// A known edge taken a new number of times (another hit-count bucket).
        case hitCount
        /// An edge never taken before.
        case edge
    }

    /// Records the sample's buckets, and says what was new to the campaign.
    @discardableResult
    public mutating func add(_ sample: CoverageSample) -> Novelty {
        var novelty = Novelty.none
        for bits in sample.newBits {
            let index = Int(bits >> 8), bucket = UInt8(truncatingIfNeeded: bits)
            if bucket & ~seen[index] != 0 {
                if seen[index] == 0 {
                    edges += 1
                    novelty = .edge
                } else if novelty == .none {
                    novelty = .hitCount
                }
                seen[index] |= bucket
            }
        }
        return novelty
    }
}

/// The coverage of an executor's slots: a segment and a reader per slot, each slot's in an object
/// of its own that only its thread touches (slots run on concurrent threads: a mutation of one
/// array shared by all would be two accesses to it at once).
public final class CoverageSlots: Sendable {
    private final class Slot: @unchecked Sendable {
        let segment: CoverageSegment
        var reader = CoverageReader()
        init(segment: CoverageSegment) { self.segment = segment }
    }
    private let slots: [Slot]

    public init(slots: Int) throws(CorruptFuzzError) {
        var made: [Slot] = []
        for _ in 0..<max(1, slots) { made.append(Slot(segment: try CoverageSegment())) }
        self.slots = made
    }

    /// The environment of the slot's targets.
    public func environment(slot: Int) -> [String: String] { slots[slot].segment.environment }

    /// Clears the slot's map before a run.
    public func beforeRun(slot: Int) {
        let state = slots[slot]
        if state.reader.isActive { state.segment.reset() }
    }

    /// Reads the slot's map after a run of `input` (its comparisons when it is a seed or reached
    /// new code).
    public func afterRun(slot: Int, input: TestInput) -> CoverageSample? {
        let state = slots[slot]
        guard state.reader.isActive else { return nil }
        return state.reader.sample(map: state.segment.map, log: state.segment.log, allComparisons: input.steps.isEmpty)
    }
}
