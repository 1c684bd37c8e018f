import CorruptFuzzCore
@testable import CorruptFuzzRunner
import Foundation
import Testing

@Suite("Jobs")
struct JobsTests {
    let seeds = [
        Seed(name: "a.ok", bytes: Array("OK".utf8) + Array(repeating: 0, count: 30)),
        Seed(name: "b.ok", bytes: Array("OK hello world".utf8)),
    ]

    /// The planted loader with one slot, or `slots`.
    struct Slots: Executor {
        let slots: Int
        func execute(_ input: TestInput, slot: Int) -> Execution { PlantedBugExecutor().execute(input, slot: slot) }
    }

    func run(slots: Int, seed: UInt64 = 3, runs: Int) throws -> CampaignResult {
        var configuration = FuzzConfiguration()
        configuration.seed = seed
        configuration.maxRuns = runs
        return try Campaign(
            executor: Slots(slots: slots), targetName: "planted", targetCommand: "planted @@", takesPath: true,
            validator: strictValidator, seeds: seeds, configuration: configuration
        ).run()
    }

    @Test("counted runs with several jobs, their corpus exchanged: the same inputs and findings for the same seed, each job its share")
    func deterministicWithExchange() throws {
        // 20,000 runs: each of 3 jobs trades with the others about 13 times.
        let a = try run(slots: 3, runs: 20_000)
        let b = try run(slots: 3, runs: 20_000)
        #expect(a.executions == 20_000 && b.executions == 20_000)
        #expect(a.inputSequenceHash == b.inputSequenceHash)
        #expect(a.findings.map(\.finding.key) == b.findings.map(\.finding.key))
        #expect(a.findings.map(\.firstExecution) == b.findings.map(\.firstExecution))
        #expect(a.findings.map(\.hits) == b.findings.map(\.hits))
        #expect(try run(slots: 3, seed: 4, runs: 20_000).inputSequenceHash != a.inputSequenceHash)
        // Findings merged across jobs: one record per key, the hits of all.
        #expect(Set(a.findings.map(\.finding.key)).count == a.findings.count)
        #expect(Set(a.findings.map(\.finding.kind)) == [.crash, .silentAcceptance, .wrongReason])
    }

    #if os(Linux)
        /// The planted loader, noting the name of each thread that runs an input.
        final class NamingSlots: Executor, @unchecked Sendable {
            let slots: Int
            private let lock = NSLock()
            private var seen: [Int: Set<String>] = [:]
            init(slots: Int) { self.slots = slots }
            func execute(_ input: TestInput, slot: Int) -> Execution {
                let name =
                    (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .newlines) ?? "?"
                lock.withLock { _ = seen[slot, default: []].insert(name) }
                return PlantedBugExecutor().execute(input, slot: slot)
            }
            var names: [Int: Set<String>] { lock.withLock { seen } }
        }

        @Test("each job runs on a thread named for it (top -H, perf and /proc tell the jobs apart)")
        func namedJobThreads() throws {
            let executor = NamingSlots(slots: 2)
            var configuration = FuzzConfiguration()
            configuration.maxRuns = 400
            configuration.minimize = false  // minimization runs on threads of its own
            _ = try Campaign(
                executor: executor, targetName: "planted", targetCommand: "planted @@", takesPath: true,
                validator: strictValidator, seeds: seeds, configuration: configuration
            ).run()
            #expect(executor.names == [0: ["cf-job 1"], 1: ["cf-job 2"]])
        }
    #endif

    @Test("two jobs split the deterministic stages, and find what one job finds")
    func twoJobsFindWhatOneFinds() throws {
        let two = try run(slots: 2, seed: 0, runs: 3000)
        let one = try run(slots: 1, seed: 0, runs: 3000)
        #expect(two.executions == 3000)
        #expect(Set(two.findings.map(\.finding.kind)) == Set(one.findings.map(\.finding.kind)))
        #expect(two.inputSequenceHash != one.inputSequenceHash)
    }

    @Test("the jobs of a shard own exactly the shard's deterministic inputs, each one job's")
    func shardJobs() {
        for shard in [Shard(index: 0, count: 1), Shard(index: 1, count: 3)] {
            for jobs in 1...4 {
                for position in 0..<60 {
                    let owners = (0..<jobs).filter { shard.job($0, of: jobs).owns(position) }
                    #expect(owners.count == (shard.owns(position) ? 1 : 0))
                }
            }
            #expect(shard.job(0, of: 1) == shard)
        }
    }

    @Test("the corpus exchange: counted, a job takes the others' earlier epochs and waits for one not yet published; timed, whatever is there")
    func exchange() async throws {
        func offer(_ byte: UInt8) -> CorpusExchange.Offer { .init(input: TestInput(bytes: [byte], seedName: "s"), reachedNewCode: false, comparisons: []) }
        let counted = CorpusExchange(jobs: 2, waits: true)
        counted.publish([offer(1)], job: 0)
        counted.publish([offer(2)], job: 0)
        #expect(counted.collect(for: 1, through: 0).map(\.input.bytes) == [[1]])
        #expect(counted.collect(for: 1, through: 1).map(\.input.bytes) == [[2]])
        // Job 0 waits for job 1's first epoch until job 1 publishes it.
        let waiting = Task.detached { counted.collect(for: 0, through: 0).map(\.input.bytes) }
        try await Task.sleep(for: .milliseconds(50))
        counted.publish([offer(3)], job: 1)
        #expect(await waiting.value == [[3]])
        // An ended job is not waited for.
        counted.finish(job: 1)
        #expect(counted.collect(for: 0, through: 5).isEmpty)

        let timed = CorpusExchange(jobs: 3, waits: false)
        timed.publish([offer(4)], job: 1)
        #expect(timed.collect(for: 0, through: nil).map(\.input.bytes) == [[4]])
        #expect(timed.collect(for: 0, through: nil).isEmpty)
        #expect(timed.collect(for: 2, through: nil).map(\.input.bytes) == [[4]])
    }

    @Test("the time fuzzing keeps for the checks in a fresh process: a fifth of the duration, or one check's up to two fifths")
    func checkReserve() {
        let start = ManualClock().now
        func plan(seconds: Int) -> Campaign.Plan {
            var plan = Campaign.Plan(end: start + .seconds(seconds), minimizeShare: .zero, reportMargin: .zero, batchSize: 1)
            plan.checkTimeout = 500
            plan.checkSlots = 2
            plan.maxCheckReserve = .seconds(seconds) / 5
            plan.maxOneCheckReserve = .seconds(seconds) * 2 / 5
            return plan
        }
        let demo = plan(seconds: 15)
        // A hang's check: 500 ms, then twice the 2.5 s confirmation.
        #expect(demo.checkCost(of: .hang) == .milliseconds(5500))
        #expect(demo.checkCost(of: .crash) == .milliseconds(500))
        #expect(demo.checkCost(of: .silentAcceptance) == .milliseconds(125))
        var oneHang = Campaign.CheckCost()
        oneHang.add(demo.checkCost(of: .hang))
        #expect(demo.checkReserve(oneHang) == .milliseconds(5500))
        // Two hangs on two slots: still one check each, at once.
        var twoHangs = oneHang
        twoHangs.add(demo.checkCost(of: .hang))
        #expect(demo.checkReserve(twoHangs) == .milliseconds(5500))
        // Five need 16.5 s on two slots: one check's time is kept (more than the fifth, within
        // two fifths), and the checks that do not fit what is left are not run.
        var fiveHangs = twoHangs
        for _ in 0..<3 { fiveHangs.add(demo.checkCost(of: .hang)) }
        #expect(demo.checkReserve(fiveHangs) == .milliseconds(5500))
        // In 10 s a hang's check does not fit two fifths: a fifth is kept, and the check is not run.
        #expect(plan(seconds: 10).checkReserve(oneHang) == .seconds(2))
        // A new hang's check runs while fuzzing when it ends before fuzzing must (15 s less
        // minimization's 3 s and the report's 0.3 s).
        let minimizing = Campaign.Plan(end: start + .seconds(15), minimizeShare: .seconds(3), reportMargin: .milliseconds(300), batchSize: 1)
        var checked = minimizing
        checked.checkTimeout = 500
        #expect(checked.hangCheckFits(at: start + .seconds(6)))
        #expect(!checked.hangCheckFits(at: start + .milliseconds(6300)))
        #expect(!minimizing.hangCheckFits(at: start))
        // On a machine whose hang confirmation took twice its CPU time, the check's confirmation
        // is expected to as well: 0.5 s and 2 × 2.5 s × 2; it no longer fits from 6 s on.
        #expect(demo.checkCost(of: .hang, stretch: 2) == .milliseconds(10_500))
        #expect(demo.checkCost(of: .crash, stretch: 2) == .milliseconds(500))
        #expect(!checked.hangCheckFits(at: start + .seconds(6), stretch: 2))
        #expect(checked.hangCheckFits(at: start + .seconds(1), stretch: 2))
        var loaded = Execution(outcome: .hung(milliseconds: 500))
        loaded.hangConfirmationStretch = 2
        func hang(_ execution: Execution) -> Finding {
            Finding(kind: .hang, signature: "", detail: "", input: TestInput(bytes: [1], seedName: "s"), execution: execution, verdict: nil)
        }
        #expect(demo.checkCost(of: hang(loaded)) == .milliseconds(10_500))
        loaded.hangConfirmedAsReplayed = true
        #expect(demo.checkCost(of: hang(loaded)) == .zero)
        // The stretch as measured: wall-clock time over the CPU deadline, from 1 to the cap (4).
        #expect(Judge.stretch(wallMicroseconds: 5_000_000, cpuMilliseconds: 2500) == 2)
        #expect(Judge.stretch(wallMicroseconds: 1_000_000, cpuMilliseconds: 2500) == 1)
        #expect(Judge.stretch(wallMicroseconds: 50_000_000, cpuMilliseconds: 2500) == 4)
        // Cheap checks keep what they need: their time shared among the slots.
        var cheap = Campaign.CheckCost()
        for _ in 0..<4 { cheap.add(demo.checkCost(of: .silentAcceptance)) }
        #expect(demo.checkReserve(cheap) == .milliseconds(250))
    }

    @Test("merging the jobs' findings, a hang confirmed as the replay runs it is the one reported, with the first hit's numbers")
    func mergePrefersTheConfirmedHang() {
        func job(_ bytes: [UInt8], confirmed: Bool, first: Int) -> CampaignResult {
            var execution = Execution(outcome: .hung(milliseconds: 500))
            execution.hangConfirmedAsReplayed = confirmed
            let finding = Finding(
                kind: .hang, signature: "no exit within the timeout", detail: "no exit within 500 ms",
                input: TestInput(bytes: bytes, seedName: "a.ok"), execution: execution, verdict: nil)
            var result = CampaignResult(targetName: "t", targetCommand: "t @@", validatorName: nil, configuration: FuzzConfiguration(), seedNames: [])
            result.findings = [FindingRecord(finding: finding, hits: 3, firstExecution: first, firstSeconds: Double(first))]
            return result
        }
        var merged = CampaignResult(targetName: "t", targetCommand: "t @@", validatorName: nil, configuration: FuzzConfiguration(), seedNames: [])
        Campaign.merge([job([1], confirmed: false, first: 1), job([2], confirmed: true, first: 2)], into: &merged)
        #expect(merged.findings.count == 1)
        #expect(merged.findings[0].finding.input.bytes == [2] && merged.findings[0].finding.execution.hangConfirmedAsReplayed)
        #expect(merged.findings[0].firstExecution == 1 && merged.findings[0].hits == 6)
        // Neither confirmed, or both: the first hit's.
        var plain = CampaignResult(targetName: "t", targetCommand: "t @@", validatorName: nil, configuration: FuzzConfiguration(), seedNames: [])
        Campaign.merge([job([1], confirmed: true, first: 1), job([2], confirmed: true, first: 2)], into: &plain)
        #expect(plain.findings[0].finding.input.bytes == [1])
    }
}
