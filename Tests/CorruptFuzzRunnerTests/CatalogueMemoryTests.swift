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
    /// smaller inputs run while one is. With `beside`, a large input is held until that many
    /// smaller ones ran beside it (other jobs that are not held up run them), or until a minute
    /// passed without them (counted in ``waitedInVain``: the other jobs did not run); without,
    /// for 20 ms, so that the other jobs reach theirs meanwhile (were they let). Each input takes
    /// a millisecond on `clock`, a large one 100.
    private final class LargeInFlight: Executor, @unchecked Sendable {
        let slots: Int
        let beside: Int
        let clock: ManualClock?
        private let condition = NSCondition()
        private var now = 0
        private(set) var most = 0
        private(set) var ran = 0
        private(set) var small = 0
        private(set) var smallDuringLarge = 0
        private(set) var waitedInVain = 0
        init(slots: Int, beside: Int = 0, clock: ManualClock? = nil) {
            self.slots = slots
            self.beside = beside
            self.clock = clock
        }

        func execute(_ input: TestInput, slot: Int) throws(CorruptFuzzError) -> Execution {
            if input.bytes?.count ?? 0 >= 1 << 20 {
                clock?.advance(by: .milliseconds(100))
                condition.withLock {
                    now += 1
                    ran += 1
                    most = max(most, now)
                }
                if beside == 0 { usleep(20_000) }
                condition.withLock {
                    let wanted = smallDuringLarge + beside
                    let giveUp = Date(timeIntervalSinceNow: 60)
                    while smallDuringLarge < wanted {
                        if !condition.wait(until: giveUp) {
                            waitedInVain += 1
                            break
                        }
                    }
                    now -= 1
                }
            } else {
                clock?.advance(by: .milliseconds(1))
                condition.withLock {
                    small += 1
                    if now > 0 { smallDuringLarge += 1 }
                    condition.broadcast()
                }
            }
            return Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: nil))
        }
    }

    /// A campaign of `executor` (a job per slot) over two small seeds, whose catalogue is
    /// `entries` large entries a seed.
    private func largeCampaign(
        _ executor: any Executor, seconds: Double? = nil, runs: Int? = nil, entries: Int = 6, timeoutMilliseconds: Int? = nil,
        clock: ManualClock? = nil
    ) -> Campaign {
        var configuration = FuzzConfiguration()
        configuration.jobs = executor.slots
        configuration.maxSeconds = seconds
        if let clock { configuration.clock = clock }
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
        // Each large entry is held until the other job ran 20 smaller inputs beside it. A job
        // that waited for the gate when its own entry was due ran none meanwhile: the entry was
        // held in vain (a minute), and the jobs' six entries each are interleaved, so that
        // happens. The 12 entries and their 20 × 12 inputs beside take 1.44 s of the 10.
        let clock = ManualClock()
        let executor = LargeInFlight(slots: 2, beside: 20, clock: clock)
        _ = try largeCampaign(executor, seconds: 10, clock: clock).run()
        #expect(executor.ran == 12)
        #expect(executor.most == 1)
        #expect(executor.waitedInVain == 0, "\(executor.waitedInVain) of 12 large entries had no smaller inputs run beside them")
        #expect(executor.smallDuringLarge >= 12 * 20)
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
            // Timed: a second on a manual clock, a millisecond an input.
            let clock = ManualClock()
            let executor = timed ? Ticking(base: NewBehaviourForLarge(), clock: clock) : NewBehaviourForLarge() as any Executor
            let campaign = largeCampaign(executor, seconds: timed ? 1 : nil, runs: timed ? nil : 2_000, clock: clock)
            let result = try campaign.run()
            #expect(result.executions > 12)
            #expect(campaign.exchangeMostHeldBytes < 1 << 20, "timed: \(timed)")
        }
    }

    /// What ``HangOnFirstLarge``'s worker and fresh process share: how many large entries ran,
    /// and per check of the hang, how many ran while it lasted.
    private final class LargeRuns: @unchecked Sendable {
        let condition = NSCondition()
        var count = 0
        var checks: [Int] = []
    }

    /// A worker whose first large entry (all zeros) hangs: the others are rejected, taking 20 ms
    /// on `clock` (a smaller input 1 ms), and counted. As the fresh process (`fresh`), its
    /// confirmation of the hang lasts until `during` more large entries ran (the other job runs
    /// them, unless it is held up), or a minute; it records how many ran meanwhile.
    private final class HangOnFirstLarge: Executor, @unchecked Sendable {
        let slots = 2
        let clock: ManualClock
        let fresh: Bool
        let during = 10
        let runs: LargeRuns
        init(clock: ManualClock, fresh: Bool, runs: LargeRuns) {
            self.clock = clock
            self.fresh = fresh
            self.runs = runs
        }

        func execute(_ input: TestInput, slot: Int) throws(CorruptFuzzError) -> Execution {
            guard let bytes = input.bytes, bytes.count >= 1 << 20 else {
                clock.advance(by: .milliseconds(1))
                return Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: nil))
            }
            if bytes[0] == 0 { return Execution(outcome: .hung(milliseconds: 100), microseconds: 100_000) }
            clock.advance(by: .milliseconds(20))
            runs.condition.withLock {
                runs.count += 1
                runs.condition.broadcast()
            }
            return Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: nil))
        }

        func confirmHang(_ input: TestInput, slot: Int, margin: Int) throws(CorruptFuzzError) -> Execution {
            guard fresh else { return try execute(input, slot: slot) }
            runs.condition.withLock {
                let before = runs.count
                let giveUp = Date(timeIntervalSinceNow: 60)
                while runs.count < before + during, runs.condition.wait(until: giveUp) {}
                runs.checks.append(runs.count - before)
            }
            clock.advance(by: .seconds(1))
            return Execution(outcome: .hung(milliseconds: 100), microseconds: 100_000)
        }
    }

    @Test("while one job checks a new hang in a fresh process (seconds), the other job's large entries still run")
    func largeEntriesRunDuringAHangCheck() throws {
        let clock = ManualClock()
        let runs = LargeRuns()
        let worker = HangOnFirstLarge(clock: clock, fresh: false, runs: runs)
        let campaign = largeCampaign(worker, seconds: 5, entries: 60, timeoutMilliseconds: 100, clock: clock)
        campaign.replayExecutor = HangOnFirstLarge(clock: clock, fresh: true, runs: runs)
        let result = try campaign.run()
        let hang = try #require(result.findings.first { $0.finding.kind == .hang })
        #expect(hang.finding.execution.hangConfirmedAsReplayed)
        // 118 large entries besides the hang, one at a time, over two jobs: some are left for
        // the other job when the check starts, and the check lasts until ten of them ran. A job
        // that held the large-entry gate through its check held them all back: none ran.
        let checks = runs.condition.withLock { runs.checks }
        #expect(checks.first.map { $0 >= 10 } == true, "large entries run during the hang's checks: \(checks)")
    }

    @Test("a campaign leaves out catalogue entries over 16 MiB")
    func catalogueCap() {
        #expect(FuzzConfiguration().maxCatalogueInputLength == 16 << 20)
    }
}
