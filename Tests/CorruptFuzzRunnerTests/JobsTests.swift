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
}
