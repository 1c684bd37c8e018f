import CorruptFuzzCore
import Foundation

/// The deterministic sequence of inputs a campaign runs.
///
/// First the few inputs every loader must handle (regressions, a missing file, an empty file,
/// the seeds unchanged, all zeros); then the deterministic stages mixed with havoc (stacked
/// byte mutations and the format's random mutations over the growing pool): the format's
/// hostile catalogue three for one (it is where the deep, labelled bugs are), then bytes
/// appended after the end and every truncation one for one. A shallow crash that any random
/// change reaches is so found in the first second, not after thousands of truncations; once
/// the stages are done, havoc only.
///
/// It is a pure function of the seeds, the configuration and the inputs added to the pool, so
/// the same `--seed` and corpus give the same inputs.
public struct InputSchedule: Sendable {
    private var rng: FuzzRNG
    private let seeds: [Seed]
    private var pool: [TestInput]
    /// Run first, in order, before any havoc.
    private let front: [TestInput]
    private var frontIndex = 0
    /// The format's catalogue, three inputs for each havoc input, made one at a time.
    private var catalogue: CatalogueCursor?
    /// Appended bytes and truncations, one for one with havoc, made when due.
    private let stages: [Stage]
    private var stageIndex = 0
    private var turn = 0
    private let configuration: FuzzConfiguration
    /// The format's structure-aware mutator, in a box: calling an existential kept in a struct
    /// while the struct's random generator is passed `inout` copies it.
    private let structured: StructuredBox?
    /// The length of each pool input, for drawing parents without copying the inputs.
    private var poolLengths: [Int]
    /// Whether the structure-aware mutator can mutate each pool input
    /// (``StructureAwareMutator/canMutate(_:)``), asked once when it joins the pool.
    private var poolStructured: [Bool]
    /// Pool positions of the inputs that reached new code last (newest last, at most 16): drawn
    /// as parents half of the time, the newest most, as AFL++ favours fresh finds.
    private var recentNewCode: [Int] = []
    /// Per pool input, the comparisons that did not hold when it ran (an instrumented target's):
    /// their observed values are in that input, so havoc writes the wanted ones in their place.
    private var poolComparisons: [[Comparison]]
    /// Wanted values of recent comparisons of any input, for parents without their own:
    /// written at random places, as a dictionary (at most ``maxComparisons``).
    private var comparisons: [Comparison] = []
    private var comparisonCursor = 0
    static let maxComparisons = 256
    /// Buffers of the last input run, for the next (``recycle(_:)``).
    private var spareBytes: [UInt8] = []
    private var spareSteps: [MutationStep] = []
    /// The pool holds the seeds and up to 512 inputs that showed new behaviour.
    private var maxPool: Int { seeds.count + 512 }
    /// The bytes of the inputs added to the pool: at most ``maxPoolBytes``, so a campaign's
    /// memory stays flat however many large inputs show new behaviour.
    private var poolBytes = 0
    public static let maxPoolBytes = 4 << 20
    /// The longest input that joins the pool. A longer one runs and is judged, but is not
    /// mutated further: every mutation of it would copy, load and validate all of it (a few
    /// catalogue entries grow arrays to their counts' limits, hundreds of kilobytes), while
    /// its smaller relatives in the pool reach the same code.
    public static let maxParentLength = 64 << 10

    /// How many inputs run before the catalogue and the stages.
    public var frontCount: Int { front.count }

    /// How many stage inputs there are (appended bytes and truncations).
    public var stageCount: Int { stages.count }

    /// Lengths of the bytes appended after a valid file's end (an interrupted append, a sync
    /// conflict that concatenated two versions), as zeros and as random bytes.
    public static let appendedLengths = [1, 16, 4_096]

    /// Creates the schedule.
    /// - Parameters:
    ///   - seeds: The corpus; an empty corpus runs as one empty seed.
    ///   - configuration: Seed, limits and mutators.
    ///   - includeMissingFile: Whether to try a missing file (only when the target takes a path).
    ///   - mutator: The format's mutator-aware mutations, if it has them.
    ///   - regressions: Inputs that failed before, run first (a regression store).
    ///   - traps: The campaign's canary and listener, for catalogues that use them.
    /// - Parameters:
    ///   - largeEntries: Taken before a catalogue entry of a megabyte or more is made, and held
    ///     until ``largeEntryRan()``: the jobs of one campaign share one, so that one such entry
    ///     is in memory at a time, whatever the number of jobs.
    ///   - waitsForLargeEntries: Whether a large entry that is due waits while another job
    ///     holds `largeEntries` (each job's inputs are then the same every run), or gives its
    ///     turn to another input and is tried again at the catalogue's next turn (a job does not
    ///     stand idle for seconds while the other's slow entry runs).
    public init(
        seeds: [Seed], configuration: FuzzConfiguration, includeMissingFile: Bool, mutator: (any StructureAwareMutator)? = nil,
        regressions: [TestInput] = [], traps: OutsideTraps? = nil, largeEntries: NSLock? = nil, waitsForLargeEntries: Bool = true
    ) {
        let seeds = seeds.isEmpty ? [Seed(name: "(empty)", bytes: [])] : seeds
        self.seeds = seeds
        self.configuration = configuration
        structured = mutator.map(StructuredBox.init)
        rng = FuzzRNG(seed: configuration.shard?.seed(configuration.seed) ?? configuration.seed)
        pool = seeds.map { TestInput(bytes: $0.bytes, seedName: $0.name) }
        poolLengths = seeds.map(\.bytes.count)
        poolStructured = seeds.map { mutator?.canMutate($0.bytes) ?? false }
        poolComparisons = Array(repeating: [], count: seeds.count)
        var front: [TestInput] = regressions
        if includeMissingFile {
            front.append(TestInput(bytes: nil, mutations: ["missing-file"], seedName: "(none)", expectation: .notFound))
        }
        front.append(TestInput(bytes: [], mutations: ["empty-file"], seedName: "(none)", expectation: .empty))
        front += pool
        var seenZeros: Set<Int> = []
        for seed in seeds where !seed.bytes.isEmpty {
            if seenZeros.insert(seed.bytes.count).inserted {
                front.append(TestInput(bytes: Array(repeating: 0, count: seed.bytes.count), mutations: ["all-zeros"], seedName: seed.name))
            }
        }

        // The format's catalogue reaches what byte-level changes cannot: lying lengths and
        // counts, future versions, wrong checksums, hostile documents. It goes first: it is
        // the cheapest way to the deep bugs. Its entries are made when due, a seed's recipes
        // when its turn comes.
        if let mutator {
            catalogue = CatalogueCursor(
                seeds: seeds, mutator: mutator, context: CatalogueContext(traps: traps, maxInputLength: configuration.maxCatalogueInputLength),
                shard: configuration.shard, gate: largeEntries, waitsForGate: waitsForLargeEntries)
        }
        var stages: [Stage] = []
        for (index, seed) in seeds.enumerated() where !seed.bytes.isEmpty {
            for length in Self.appendedLengths {
                stages += [.append(seed: index, length: length, random: false), .append(seed: index, length: length, random: true)]
            }
        }
        for (index, seed) in seeds.enumerated() {
            stages += Self.truncationLengths(count: seed.bytes.count, everyUpTo: configuration.truncateEveryLengthUpTo).map {
                .truncate(seed: index, length: $0)
            }
        }
        if let shard = configuration.shard, shard.count > 1 {
            // Every count-th deterministic input, counted in each list.
            self.front = front.indices.filter { shard.owns($0) }.map { front[$0] }
            self.stages = stages.indices.filter { shard.owns($0) }.map { stages[$0] }
        } else {
            self.front = front
            self.stages = stages
        }
    }

    /// A stage input, made when due.
    private enum Stage {
        /// The seed with `length` bytes after its end, zeros or random.
        case append(seed: Int, length: Int, random: Bool)
        /// The seed's first `length` bytes.
        case truncate(seed: Int, length: Int)
    }

    private func make(_ stage: Stage) -> TestInput {
        switch stage {
        case .append(let index, let length, let random):
            let seed = seeds[index]
            var tail = [UInt8](repeating: 0, count: length)
            if random {
                // Random bytes of their own stream, so they do not depend on what ran before.
                var rng = FuzzRNG(seed: configuration.seed ^ 0xA99E_4D00 ^ UInt64(index << 16 | length))
                for i in tail.indices { tail[i] = UInt8(truncatingIfNeeded: rng.next()) }
            }
            return TestInput(bytes: seed.bytes + tail, mutations: ["append-\(random ? "random" : "zeros")@\(length)"], seedName: seed.name)
        case .truncate(let index, let length):
            let seed = seeds[index]
            return TestInput(bytes: Array(seed.bytes.prefix(length)), mutations: [length == 1 ? "single-byte" : "truncate@\(length)"], seedName: seed.name)
        }
    }

    /// Walks the catalogue: each seed's recipes when its turn comes, each entry made when due,
    /// an entry made before (seeds often share them: the hostile XML documents depend only on
    /// the root element) skipped. Entries of a megabyte or more run after every seed's smaller
    /// ones: each costs a file write, a load and a validation of all of it, and a short
    /// campaign reaches more of the loader with the small ones first.
    private struct CatalogueCursor {
        let seeds: [Seed]
        let mutator: any StructureAwareMutator
        let context: CatalogueContext
        let shard: Shard?
        /// Taken before a large entry is made (``InputSchedule/init(seeds:configuration:includeMissingFile:mutator:regressions:traps:largeEntries:waitsForLargeEntries:)``).
        let gate: NSLock?
        /// Whether a large entry waits for the gate, or ``next()`` says ``Next/busy`` while
        /// another job holds it.
        let waitsForGate: Bool
        /// Whether the last input returned is a large entry made under the gate.
        var holdsGate = false
        var seedIndex = 0
        var entries: [CatalogueEntry] = []
        var entryIndex = 0
        /// The large entries, with their seed, kept for after the small ones.
        var large: [(entry: CatalogueEntry, seed: String)] = []
        var largeIndex = 0
        /// Counts every entry of every seed, for the shard's share.
        var position = 0
        /// The entries made so far, by length and hash (not their bytes, which may be 100 MB).
        var made: Set<EntryKey> = []
        /// The identities of the entries that had one (``CatalogueEntry/identity``).
        var identities: Set<String> = []
        static let largeLength = InputSchedule.largeInputLength

        struct EntryKey: Hashable {
            let length: Int
            let hash: Int
        }

        /// What ``next()`` gives.
        enum Next {
            case input(TestInput)
            /// A large entry is due, and another job holds the gate.
            case busy
            case done
        }

        /// The next catalogue input, ``Next/busy`` or ``Next/done``.
        mutating func next() -> Next {
            while true {
                let entry: CatalogueEntry, seed: String
                var locked = false
                if entryIndex < entries.count {
                    entry = entries[entryIndex]
                    seed = seeds[seedIndex - 1].name
                    entryIndex += 1
                    position += 1
                    if let shard, shard.count > 1, !shard.owns(position - 1) { continue }
                    guard context.allows(entry.minimumLength) else { continue }
                    if entry.minimumLength >= Self.largeLength {
                        large.append((entry, seed))
                        continue
                    }
                } else if seedIndex < seeds.count {
                    entries = mutator.catalogueEntries(of: seeds[seedIndex].bytes, context: context)
                    entryIndex = 0
                    seedIndex += 1
                    continue
                } else if largeIndex < large.count {
                    if let gate, !waitsForGate {
                        guard gate.try() else { return .busy }
                        locked = true
                    }
                    (entry, seed) = large[largeIndex]
                    // Its recipe is let go once taken (an entry made at once holds its bytes).
                    large[largeIndex].entry = CatalogueEntry(name: "", make: { [] })
                    largeIndex += 1
                } else {
                    return .done
                }
                let gated = entry.minimumLength >= Self.largeLength && gate != nil
                if let identity = entry.identity, !identities.insert(identity).inserted {
                    if locked { gate?.unlock() }
                    continue
                }
                if gated, !locked { gate?.lock() }
                let mutation = entry.mutation()
                var hasher = Hasher()
                mutation.bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
                guard context.allows(mutation.bytes.count), made.insert(EntryKey(length: mutation.bytes.count, hash: hasher.finalize())).inserted else {
                    if gated { gate?.unlock() }
                    continue
                }
                holdsGate = gated
                return .input(TestInput(bytes: mutation.bytes, mutations: [mutation.name], seedName: seed, expectation: mutation.expectation))
            }
        }
    }

    /// Lengths 1..<count for small files; for large ones the first 64, the last 64 and an
    /// even spread between.
    public static func truncationLengths(count: Int, everyUpTo limit: Int) -> [Int] {
        guard count > 1 else { return [] }
        if count <= limit { return Array(1..<count) }
        var lengths = Set(1...64)
        lengths.formUnion((count - 64)..<count)
        let step = max(1, (count - 128) / 256)
        lengths.formUnion(stride(from: 64, to: count - 64, by: step))
        return lengths.sorted()
    }

    /// Whether `input` is small enough to be a parent (``addToPool(_:reachedNewCode:comparisons:)``
    /// leaves larger ones out): only those are worth offering to the other jobs.
    public func mayJoinPool(_ input: borrowing TestInput) -> Bool {
        guard let count = input.bytes?.count else { return false }
        return count <= min(configuration.maxInputLength, Self.maxParentLength)
    }

    /// Adds an input whose behaviour was new, so havoc mutates it further. Inputs over
    /// `maxInputLength` (a 100 MB catalogue entry, a structured mutation's 1 MB string) run but
    /// are not kept: mutations stacked on them would grow the pool without bound; nor is one
    /// that would take the pool's added inputs over ``maxPoolBytes``.
    ///
    /// - Parameter reachedNewCode: Whether it reached edges (or hit counts) of an instrumented
    ///   target that no input had: it is then drawn as a parent more often while it is recent.
    /// - Parameter comparisons: The comparisons that did not hold when it ran.
    public mutating func addToPool(_ input: TestInput, reachedNewCode: Bool = false, comparisons: [Comparison] = []) {
        guard mayJoinPool(input), let bytes = input.bytes else { return }
        let index: Int
        if pool.count < maxPool {
            guard poolBytes + bytes.count <= Self.maxPoolBytes else { return }
            index = pool.count
            pool.append(input)
            poolLengths.append(bytes.count)
            poolStructured.append(structured?.mutator.canMutate(bytes) ?? false)
            poolComparisons.append(comparisons)
        } else {
            index = seeds.count + rng.below(maxPool - seeds.count)
            let replaced = pool[index].bytes?.count ?? 0
            guard poolBytes - replaced + bytes.count <= Self.maxPoolBytes else { return }
            poolBytes -= replaced
            pool[index] = input
            poolLengths[index] = bytes.count
            poolStructured[index] = structured?.mutator.canMutate(bytes) ?? false
            poolComparisons[index] = comparisons
        }
        poolBytes += bytes.count
        if reachedNewCode {
            recentNewCode.append(index)
            if recentNewCode.count > 16 { recentNewCode.removeFirst() }
        }
    }

    /// Remembers the comparisons an instrumented target made that did not hold on `input`: a
    /// seed's stay with it in the pool; every input's wanted values join the dictionary.
    public mutating func noteComparisons(_ new: [Comparison], of input: TestInput) {
        if input.steps.isEmpty, let index = seeds.firstIndex(where: { $0.name == input.seedName && $0.bytes == input.bytes }) {
            poolComparisons[index] = new
        }
        for comparison in new.prefix(4) {
            if comparisons.count < Self.maxComparisons {
                comparisons.append(comparison)
            } else {
                comparisons[comparisonCursor] = comparison
                comparisonCursor = (comparisonCursor + 1) % Self.maxComparisons
            }
        }
    }

    /// The inputs added to the pool because they showed new behaviour (the seeds left out):
    /// what a corpus kept between runs should grow by.
    public var addedInputs: [TestInput] { Array(pool.dropFirst(seeds.count)) }

    /// The next input to run.
    public mutating func next() -> TestInput {
        if frontIndex < front.count {
            defer { frontIndex += 1 }
            return front[frontIndex]
        }
        turn += 1
        if catalogue != nil {
            if turn % 4 != 0 {
                switch catalogue?.next() {
                case .input(let input)?: return input
                case .busy?: break  // another job's large entry runs: havoc meanwhile
                case .done?, nil: catalogue = nil
                }
            }
        } else if stageIndex < stages.count, turn % 2 != 0 {
            defer { stageIndex += 1 }
            return make(stages[stageIndex])
        }
        return havoc()
    }

    /// A pool input to mutate: the smallest of three drawn at random. Every step of an input
    /// costs in proportion to its size (structure-aware mutations re-encode the whole file, the
    /// validator and the loader read it), so small parents make more inputs per second, as
    /// AFL++ favours small inputs; a large one is still drawn (the largest of n with chance
    /// 1/n³ rather than 1/n), and mutations still make large inputs from small ones. (Of two,
    /// the full check of the habit loader spent 13% more instructions per input.)
    private mutating func drawParent() -> Int {
        if !recentNewCode.isEmpty, rng.oneIn(2) {
            // The newer of two, and of those two the smaller.
            let count = recentNewCode.count
            let a = recentNewCode[count - 1 - min(rng.below(count), rng.below(count))]
            let b = recentNewCode[count - 1 - min(rng.below(count), rng.below(count))]
            return poolLengths[b] < poolLengths[a] ? b : a
        }
        let first = rng.below(pool.count), second = rng.below(pool.count), third = rng.below(pool.count)
        let one = poolLengths[second] < poolLengths[first] ? second : first
        return poolLengths[third] < poolLengths[one] ? third : one
    }

    /// Runs for almost every input, so it copies nothing it can read in place (a copy of the
    /// structure-aware mutator, an existential, or of a pool input costs more than a byte
    /// mutation).
    private mutating func havoc() -> TestInput {
        if let structured, rng.oneIn(2) {
            let parent = drawParent()
            if poolStructured[parent], let bytes = pool[parent].bytes, let mutation = structured.mutator.mutate(bytes, using: &rng),
                mutation.bytes.count <= 4 * configuration.maxInputLength
            {
                return TestInput(
                    bytes: mutation.bytes, steps: Self.trail(pool[parent].steps, .named(mutation.name)), seedName: pool[parent].seedName,
                    expectation: mutation.expectation)
            }
        }
        let mutators = configuration.mutators
        let maxLength = configuration.maxInputLength
        let depth = max(1, configuration.maxStackedMutations.trailingZeroBitCount + 1)
        // The last input's buffers, when it gave them back (``recycle(_:)``) and nothing else
        // holds them: the parent is copied into memory already allocated.
        var bytes: [UInt8] = []
        var steps: [MutationStep] = []
        swap(&bytes, &spareBytes)
        swap(&steps, &spareSteps)
        for _ in 0..<16 {
            let parent = drawParent()
            bytes.removeAll(keepingCapacity: true)
            if let parentBytes = pool[parent].bytes { bytes.append(contentsOf: parentBytes) }
            let stack = 1 << rng.below(depth)
            steps.removeAll(keepingCapacity: true)
            steps.reserveCapacity(pool[parent].steps.count + stack)
            steps.append(contentsOf: pool[parent].steps)
            var applied = false
            // One splicing partner for the stack: a context made per step cost more than most
            // byte mutations.
            let context = MutationContext(partner: seeds[rng.below(seeds.count)].bytes, maxLength: maxLength)
            for _ in 0..<stack {
                // The parent's own comparisons first (input-to-state), else the dictionary's.
                let own = poolComparisons[parent]
                if !own.isEmpty || !comparisons.isEmpty, rng.oneIn(own.isEmpty ? 8 : 3) {
                    let comparison = own.isEmpty ? comparisons[rng.below(comparisons.count)] : own[rng.below(own.count)]
                    Self.append(Self.apply(comparison, to: &bytes, maxLength: maxLength, using: &rng), to: &steps)
                    applied = true
                    continue
                }
                guard !mutators.isEmpty else { break }
                let mutator = rng.below(mutators.count)
                if let step = mutators[mutator].apply(&bytes, using: &rng, context: context) {
                    Self.append(step, to: &steps)
                    applied = true
                }
            }
            if applied, bytes != pool[parent].bytes {
                // Expectations belong to the mutation that made an input, so children drop them.
                return TestInput(bytes: bytes, steps: steps, seedName: pool[parent].seedName)
            }
        }
        // Nothing applied (e.g. only empty seeds): grow from nothing.
        let byte = UInt8(truncatingIfNeeded: rng.next())
        return TestInput(bytes: [byte], mutations: ["random-byte"], seedName: seeds[0].name)
    }

    /// Writes the comparison's wanted value where the input holds its observed value (little- or
    /// big-endian, one of the places at random), or, when it holds it nowhere, at a random
    /// offset: input-to-state, as AFL++'s RedQueen and libFuzzer's comparison tables do.
    static func apply(_ comparison: Comparison, to bytes: inout [UInt8], maxLength: Int, using rng: inout FuzzRNG) -> MutationStep {
        let width = Int(comparison.size)
        func pattern(_ value: UInt64, bigEndian: Bool) -> [UInt8] {
            (0..<width).map { i in UInt8(truncatingIfNeeded: value >> (8 * UInt64(bigEndian ? width - 1 - i : i))) }
        }
        var places: [(at: Int, bigEndian: Bool)] = []
        if bytes.count >= width {
            let start = rng.below(bytes.count - width + 1)
            for bigEndian in [false, true] {
                let observed = pattern(comparison.observed, bigEndian: bigEndian)
                var offset = start
                // From a random place, at most 4,096 of them (a 64 KiB parent is not scanned whole).
                for _ in 0...min(bytes.count - width, 4095) where places.count < 32 {
                    if bytes[offset] == observed[0], bytes[offset..<(offset + width)].elementsEqual(observed) { places.append((offset, bigEndian)) }
                    offset = offset == bytes.count - width ? 0 : offset + 1
                }
            }
        }
        let place = places.isEmpty ? (at: rng.below(max(1, bytes.count - width + 1)), bigEndian: rng.oneIn(2)) : places[rng.below(places.count)]
        let wanted = pattern(comparison.wanted, bigEndian: place.bigEndian)
        if place.at + width > bytes.count {
            bytes += [UInt8](repeating: 0, count: max(0, min(place.at + width, maxLength) - bytes.count))
        }
        for i in 0..<width where place.at + i < bytes.count { bytes[place.at + i] = wanted[i] }
        return .comparison(width: width, bigEndian: place.bigEndian, at: place.at)
    }

    /// Takes back an input that has run, so that its buffers make the next input's (as
    /// libFuzzer mutates in one buffer): a buffer something else still holds (the pool, a
    /// finding) is not written, the next input copies it first. Buffers over 64 KiB are let go.
    /// An input of this many bytes or more is large: the catalogue makes such entries after
    /// every seed's small ones, and a campaign's jobs make and run one at a time.
    static let largeInputLength = 1 << 20

    /// Gives back the gate of large entries (``init(seeds:configuration:includeMissingFile:mutator:regressions:traps:largeEntries:waitsForLargeEntries:)``)
    /// when the last input ``next()`` returned was a large entry made under it: called when
    /// that input has been counted and let go, or before a slow step that keeps it (a new
    /// hang's check in a fresh process).
    public mutating func largeEntryRan() {
        guard catalogue?.holdsGate == true else { return }
        catalogue?.holdsGate = false
        catalogue?.gate?.unlock()
    }

    public mutating func recycle(_ input: consuming TestInput) {
        if let bytes = input.bytes, bytes.capacity <= Self.maxParentLength { spareBytes = bytes }
        if input.steps.capacity <= 64 { spareSteps = input.steps }
    }

    /// `steps` and then `step`, the last 24 at most (the first of them `…` when some were
    /// dropped).
    private static func trail(_ steps: [MutationStep], _ step: MutationStep) -> [MutationStep] {
        var trail = steps
        append(step, to: &trail)
        return trail
    }

    /// (`step` is consumed: a borrowed step was copied into the array, then destroyed.)
    private static func append(_ step: consuming MutationStep, to steps: inout [MutationStep]) {
        steps.append(step)
        if steps.count > 24 { steps = [.named("…")] + steps.suffix(23) }
    }
}

/// A structure-aware mutator, held by reference (``InputSchedule``).
private final class StructuredBox: Sendable {
    let mutator: any StructureAwareMutator
    init(_ mutator: any StructureAwareMutator) { self.mutator = mutator }
}
