import CorruptFuzzCore

/// The deterministic sequence of inputs a campaign runs: the hostile catalogue, the seeds,
/// every truncation, then havoc (stacked byte mutations) over the growing pool.
///
/// It is a pure function of the seeds, the configuration and the inputs added to the pool, so
/// the same `--seed` and corpus give the same inputs.
public struct InputSchedule: Sendable {
    private var rng: FuzzRNG
    private let seeds: [Seed]
    private var pool: [TestInput]
    private var fixed: [TestInput]
    private var fixedIndex = 0
    private let configuration: FuzzConfiguration
    private let structure: (any StructureAwareMutator)?
    private let maxPool = 512

    /// How many inputs come before havoc starts.
    public var deterministicCount: Int { fixed.count }

    /// Creates the schedule.
    /// - Parameters:
    ///   - seeds: The corpus; at least one.
    ///   - configuration: Seed, limits and mutators.
    ///   - includeMissingFile: Whether to try a missing file (only when the target takes a path).
    ///   - structure: The format's structure-aware mutations, if it has them.
    ///   - regressions: Inputs that failed before, run first (a regression store).
    ///   - traps: The campaign's canary and listener, for catalogues that use them.
    public init(
        seeds: [Seed], configuration: FuzzConfiguration, includeMissingFile: Bool, structure: (any StructureAwareMutator)? = nil,
        regressions: [TestInput] = [], traps: OutsideTraps? = nil
    ) {
        precondition(!seeds.isEmpty, "a schedule needs at least one seed")
        self.seeds = seeds
        self.configuration = configuration
        self.structure = structure
        rng = FuzzRNG(seed: configuration.seed)
        pool = seeds.map { TestInput(bytes: $0.bytes, seedName: $0.name) }
        var fixed: [TestInput] = regressions
        if includeMissingFile {
            fixed.append(TestInput(bytes: nil, mutations: ["missing-file"], seedName: "(none)", expectation: .notFound))
        }
        fixed.append(TestInput(bytes: [], mutations: ["empty-file"], seedName: "(none)", expectation: .empty))
        fixed += pool
        var seenZeros: Set<Int> = []
        for seed in seeds where !seed.bytes.isEmpty {
            if seenZeros.insert(seed.bytes.count).inserted {
                fixed.append(TestInput(bytes: Array(repeating: 0, count: seed.bytes.count), mutations: ["all-zeros"], seedName: seed.name))
            }
        }
        // The format's catalogue reaches what byte-level truncation cannot: lying lengths and
        // counts, future versions, wrong checksums. It goes first: it is the cheapest way to
        // the deep bugs.
        if let structure {
            // Seeds often share catalogue entries (the hostile XML documents depend only on the
            // root element): each distinct input runs, and is held, once.
            var seen: Set<Int> = []
            for seed in seeds {
                let catalogue = traps.map { structure.catalogue(of: seed.bytes, traps: $0) } ?? structure.catalogue(of: seed.bytes)
                for mutation in catalogue where mutation.bytes.count <= configuration.maxCatalogueInputLength
                    && seen.insert(mutation.bytes.hashValue).inserted {
                    fixed.append(TestInput(bytes: mutation.bytes, mutations: [mutation.name], seedName: seed.name, expectation: mutation.expectation))
                }
            }
        }
        for seed in seeds {
            for length in Self.truncationLengths(count: seed.bytes.count, everyUpTo: configuration.truncateEveryLengthUpTo) {
                let name = length == 1 ? "single-byte" : "truncate@\(length)"
                fixed.append(TestInput(bytes: Array(seed.bytes.prefix(length)), mutations: [name], seedName: seed.name))
            }
        }
        self.fixed = fixed
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

    /// Adds an input whose behaviour was new, so havoc mutates it further. Inputs over
    /// `maxInputLength` (a 100 MB catalogue entry, a structured mutation's 1 MB string) run but
    /// are not kept: mutations stacked on them would grow the pool without bound.
    public mutating func addToPool(_ input: TestInput) {
        guard let bytes = input.bytes, bytes.count <= configuration.maxInputLength else { return }
        if pool.count < maxPool {
            pool.append(input)
        } else {
            pool[seeds.count + rng.below(maxPool - seeds.count)] = input
        }
    }

    /// The next input to run.
    public mutating func next() -> TestInput {
        if fixedIndex < fixed.count {
            defer { fixedIndex += 1 }
            return fixed[fixedIndex]
        }
        return havoc()
    }

    private mutating func havoc() -> TestInput {
        if let structure, rng.oneIn(2) {
            let parent = pool[rng.below(pool.count)]
            if let bytes = parent.bytes, let mutation = structure.mutate(bytes, using: &rng),
               mutation.bytes.count <= 4 * configuration.maxInputLength {
                var mutations = parent.mutations + [mutation.name]
                if mutations.count > 24 { mutations = ["…"] + mutations.suffix(23) }
                return TestInput(bytes: mutation.bytes, mutations: mutations, seedName: parent.seedName, expectation: mutation.expectation)
            }
        }
        for _ in 0..<16 {
            let parent = pool[rng.below(pool.count)]
            var bytes = parent.bytes ?? []
            let stack = 1 << rng.below(max(1, configuration.maxStackedMutations.trailingZeroBitCount + 1))
            var done: [String] = []
            for _ in 0..<stack {
                let mutator = configuration.mutators[rng.below(configuration.mutators.count)]
                let partner = seeds[rng.below(seeds.count)].bytes
                let context = MutationContext(partner: partner, maxLength: configuration.maxInputLength)
                if let what = mutator.mutate(&bytes, using: &rng, context: context) { done.append(what) }
            }
            if !done.isEmpty, bytes != parent.bytes {
                // Expectations belong to the mutation that made an input, so children drop them.
                var mutations = parent.mutations + done
                if mutations.count > 24 { mutations = ["…"] + mutations.suffix(23) }
                return TestInput(bytes: bytes, mutations: mutations, seedName: parent.seedName)
            }
        }
        // Nothing applied (e.g. only empty seeds): grow from nothing.
        let byte = UInt8(truncatingIfNeeded: rng.next())
        return TestInput(bytes: [byte], mutations: ["random-byte"], seedName: seeds[0].name)
    }
}
