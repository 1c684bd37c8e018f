import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation
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
    /// Counts the inputs of a megabyte or more in flight at once, over all slots.
    private final class LargeInFlight: Executor, @unchecked Sendable {
        let slots: Int
        private let lock = NSLock()
        private var now = 0
        private(set) var most = 0
        private(set) var ran = 0
        init(slots: Int) { self.slots = slots }

        func execute(_ input: TestInput, slot: Int) throws(CorruptFuzzError) -> Execution {
            if input.bytes?.count ?? 0 >= 1 << 20 {
                lock.withLock {
                    now += 1
                    ran += 1
                    most = max(most, now)
                }
                usleep(20_000)  // long enough for the other jobs to reach their own
                lock.withLock { now -= 1 }
            }
            return Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: nil))
        }
    }

    @Test("a campaign's jobs run inputs of a megabyte or more one at a time, and every such entry still runs")
    func largeInputsOneAtATime() throws {
        for jobs in [1, 2, 4] {
            var configuration = FuzzConfiguration()
            configuration.jobs = jobs
            configuration.maxRuns = 600
            configuration.minimize = false
            let executor = LargeInFlight(slots: jobs)
            let campaign = Campaign(
                executor: executor, targetName: "large", targetCommand: "large @@", takesPath: true, validator: nil,
                seeds: [Seed(name: "a", bytes: [1, 2, 3]), Seed(name: "b", bytes: [4, 5, 6, 7])], configuration: configuration,
                mutator: LargeCatalogueMutator())
            _ = try campaign.run()
            #expect(executor.ran == 12, "jobs \(jobs)")
            #expect(executor.most == 1, "jobs \(jobs)")
        }
    }

    @Test("a campaign leaves out catalogue entries over 16 MiB")
    func catalogueCap() {
        #expect(FuzzConfiguration().maxCatalogueInputLength == 16 << 20)
    }
}
