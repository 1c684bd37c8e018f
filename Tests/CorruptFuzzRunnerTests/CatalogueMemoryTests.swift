import CorruptFuzzCore
import Foundation
import Testing

@testable import CorruptFuzzRunner

/// A format whose catalogue is `count` entries of a megabyte each (six unless said), for each
/// seed; the `index`-th entry's bytes are all `index`.
private struct LargeCatalogueMutator: StructureAwareMutator {
    var count = 6
    func catalogue(of bytes: [UInt8], context: CatalogueContext) -> [StructuredMutation] { [] }
    func catalogueEntries(of bytes: [UInt8], context: CatalogueContext) -> [CatalogueEntry] {
        (0..<count).map { index in
            CatalogueEntry(name: "large-\(index)", minimumLength: 1 << 20) { [UInt8](repeating: UInt8(index), count: (1 << 20) + bytes.count) }
        }
    }
    func mutate(_ bytes: [UInt8], using rng: inout FuzzRNG) -> StructuredMutation? { nil }
    func generate(using rng: inout FuzzRNG) -> [UInt8] { [1] }
}

@Suite("The campaign's own memory")
struct CatalogueMemoryTests {
    /// Counts the inputs of a megabyte or more in flight at once, over all slots, and the
    /// smaller inputs run while one is.
    private final class LargeInFlight: Executor, @unchecked Sendable {
        let slots: Int
        private let lock = NSLock()
        private var now = 0
        private(set) var most = 0
        private(set) var ran = 0
        private(set) var small = 0
        private(set) var smallDuringLarge = 0
        let largeMicroseconds: UInt32
        init(slots: Int, largeMicroseconds: UInt32 = 20_000) {
            self.slots = slots
            self.largeMicroseconds = largeMicroseconds
        }

        func execute(_ input: TestInput, slot: Int) throws(CorruptFuzzError) -> Execution {
            if input.bytes?.count ?? 0 >= 1 << 20 {
                lock.withLock {
                    now += 1
                    ran += 1
                    most = max(most, now)
                }
                usleep(largeMicroseconds)  // long enough for the other jobs to reach their own
                lock.withLock { now -= 1 }
            } else {
                lock.withLock {
                    small += 1
                    if now > 0 { smallDuringLarge += 1 }
                }
            }
            return Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: nil))
        }
    }

    /// A campaign of `executor` (a job per slot) over two small seeds, whose catalogue is
    /// `entries` large entries a seed.
    private func largeCampaign(
        _ executor: any Executor, seconds: Double? = nil, runs: Int? = nil, entries: Int = 6, timeoutMilliseconds: Int? = nil
    ) -> Campaign {
        var configuration = FuzzConfiguration()
        configuration.jobs = executor.slots
        configuration.maxSeconds = seconds
        configuration.maxRuns = runs
        configuration.minimize = false
        if let timeoutMilliseconds { configuration.limits.timeoutMilliseconds = timeoutMilliseconds }
        return Campaign(
            executor: executor, targetName: "large", targetCommand: "large @@", takesPath: true, validator: nil,
            seeds: [Seed(name: "a", bytes: [1, 2, 3]), Seed(name: "b", bytes: [4, 5, 6, 7])], configuration: configuration,
            mutator: LargeCatalogueMutator(count: entries))
    }

    @Test("in a timed campaign, a job whose large entry is due while another job's runs runs other inputs meanwhile; still one at a time, and every one runs")
    func othersRunDuringALargeEntry() throws {
        let executor = LargeInFlight(slots: 2, largeMicroseconds: 100_000)
        _ = try largeCampaign(executor, seconds: 2).run()
        #expect(executor.ran == 12)
        #expect(executor.most == 1)
        // Twelve entries of 100 ms, six per job, 1.2 s of the 2: the other job runs smaller
        // inputs beside each (46% of them ran so, measured). A job that waited for the gate
        // ran them only beside the last entries, once its own were done (8%).
        let share = Double(executor.smallDuringLarge) / Double(max(1, executor.small))
        #expect(share > 0.25, "\(executor.smallDuringLarge) of \(executor.small) smaller inputs ran beside a large one")
    }

    @Test("a campaign's jobs run inputs of a megabyte or more one at a time, and every such entry still runs")
    func largeInputsOneAtATime() throws {
        for jobs in [1, 2, 4] {
            let executor = LargeInFlight(slots: jobs)
            _ = try largeCampaign(executor, runs: 600).run()
            #expect(executor.ran == 12, "jobs \(jobs)")
            #expect(executor.most == 1, "jobs \(jobs)")
        }
    }

    /// Rejects each input of a megabyte or more with words of its own, so that each is new
    /// behaviour, the kind a job keeps and offers the others.
    private struct NewBehaviourForLarge: Executor {
        let slots = 2
        static let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
        func execute(_ input: TestInput, slot: Int) throws(CorruptFuzzError) -> Execution {
            guard let bytes = input.bytes, bytes.count >= 1 << 20 else { return Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: nil)) }
            return Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: "bad \(Self.words[Int(bytes[0]) % Self.words.count])"))
        }
    }

    @Test("the jobs do not pass each other a large entry with new behaviour (held until every job read it, it was in memory beside the next one)")
    func largeEntriesAreNotExchanged() throws {
        for timed in [true, false] {
            let campaign = largeCampaign(NewBehaviourForLarge(), seconds: timed ? 1 : nil, runs: timed ? nil : 2_000)
            let result = try campaign.run()
            #expect(result.executions > 12)
            #expect(campaign.exchangeMostHeldBytes < 1 << 20, "timed: \(timed)")
        }
    }

    /// A worker whose first large entry (all zeros) hangs: the others are rejected after 20 ms,
    /// and when each ran is recorded. Its fresh process's confirmation of the hang takes a
    /// second, and when it started and ended is recorded.
    private final class HangOnFirstLarge: Executor, @unchecked Sendable {
        let slots = 2
        let fresh: Bool
        private let lock = NSLock()
        private var largeRuns: [ContinuousClock.Instant] = []
        private var checks: [(start: ContinuousClock.Instant, end: ContinuousClock.Instant)] = []
        init(fresh: Bool) { self.fresh = fresh }

        func execute(_ input: TestInput, slot: Int) throws(CorruptFuzzError) -> Execution {
            guard let bytes = input.bytes, bytes.count >= 1 << 20 else { return Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: nil)) }
            if bytes[0] == 0 { return Execution(outcome: .hung(milliseconds: 100), microseconds: 100_000) }
            if !fresh {
                usleep(20_000)
                lock.withLock { largeRuns.append(.now) }
            }
            return Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: nil))
        }

        func confirmHang(_ input: TestInput, slot: Int, margin: Int) throws(CorruptFuzzError) -> Execution {
            guard fresh else { return try execute(input, slot: slot) }
            let start = ContinuousClock.now
            Thread.sleep(forTimeInterval: 1)
            lock.withLock { checks.append((start, .now)) }
            return try execute(input, slot: slot)
        }

        var recorded: (largeRuns: [ContinuousClock.Instant], checks: [(start: ContinuousClock.Instant, end: ContinuousClock.Instant)]) {
            lock.withLock { (largeRuns, checks) }
        }
    }

    @Test("while one job checks a new hang in a fresh process (seconds), the other job's large entries still run")
    func largeEntriesRunDuringAHangCheck() throws {
        let worker = HangOnFirstLarge(fresh: false)
        let fresh = HangOnFirstLarge(fresh: true)
        let campaign = largeCampaign(worker, seconds: 5, entries: 60, timeoutMilliseconds: 100)
        campaign.replayExecutor = fresh
        let result = try campaign.run()
        let hang = try #require(result.findings.first { $0.finding.kind == .hang })
        #expect(hang.finding.execution.hangConfirmedAsReplayed)
        let check = try #require(fresh.recorded.checks.first, "the hang was not checked while fuzzing")
        // About 118 large entries of 20 ms each, one at a time, over two jobs: some are left for
        // the other job when the check starts. A job that held the large-entry gate through its
        // check held them all back for its second.
        let during = worker.recorded.largeRuns.filter { $0 > check.start && $0 < check.end }
        #expect(during.count >= 10, "\(during.count) large entries ran during the 1 s check")
    }

    @Test("a campaign leaves out catalogue entries over 16 MiB")
    func catalogueCap() {
        #expect(FuzzConfiguration().maxCatalogueInputLength == 16 << 20)
    }
}
