import CorruptFuzzCore
import CorruptFuzzRunner
import Testing

/// A format whose catalogue is six entries of a megabyte each, for each seed.
private struct LargeCatalogueMutator: StructureAwareMutator {
    func catalogue(of bytes: [UInt8], context: CatalogueContext) -> [StructuredMutation] { [] }
    func catalogueEntries(of bytes: [UInt8], context: CatalogueContext) -> [CatalogueEntry] {
        (0..<6).map { index in
            CatalogueEntry(name: "large-\(index)", minimumLength: 1 << 20) { [UInt8](repeating: UInt8(index), count: (1 << 20) + bytes.count) }
        }
    }
    func mutate(_ bytes: [UInt8], using rng: inout FuzzRNG) -> StructuredMutation? { nil }
    func generate(using rng: inout FuzzRNG) -> [UInt8] { [1] }
}

@Suite("The campaign's own memory")
struct CatalogueMemoryTests {
    @Test("a batch (four inputs a job) never holds two catalogue entries of a megabyte or more, and every entry still runs")
    func largeEntriesApart() {
        for jobs in [1, 2, 4] {
            var configuration = FuzzConfiguration()
            configuration.jobs = jobs
            var schedule = InputSchedule(
                seeds: [Seed(name: "a", bytes: [1, 2, 3]), Seed(name: "b", bytes: [4, 5, 6, 7])], configuration: configuration, includeMissingFile: false,
                mutator: LargeCatalogueMutator())
            let lengths = (0..<500).map { _ in schedule.next().bytes?.count ?? 0 }
            let large = lengths.indices.filter { lengths[$0] >= 1 << 20 }
            #expect(large.count == 12, "jobs \(jobs)")
            for (first, second) in zip(large, large.dropFirst()) {
                #expect(second - first > 4 * jobs, "jobs \(jobs): inputs \(first) and \(second)")
            }
        }
    }

    @Test("a campaign leaves out catalogue entries over 16 MiB")
    func catalogueCap() {
        #expect(FuzzConfiguration().maxCatalogueInputLength == 16 << 20)
    }
}
