import CorruptFuzzCore
import CorruptFuzzRunner
import Testing

/// An in-process loader with planted bugs, so campaign logic is tested fast and exactly.
struct PlantedBugExecutor: Executor {
    let slots = 2

    func execute(_ input: TestInput, slot: Int) -> Execution {
        guard let bytes = input.bytes else {
            return Execution(outcome: .rejected(reason: "not-found", exitCode: 1, message: nil))
        }
        if bytes.isEmpty {  // planted: the wrong reason for an empty file
            return Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: nil))
        }
        if bytes.count >= 2, zip(bytes, bytes.dropFirst()).contains(where: { $0 == 0xFF && $1 == 0xFF }) {
            return Execution(outcome: .crashed(signal: 11, frames: ["parse"], message: nil))
        }
        if bytes.starts(with: Array("OK".utf8)) {  // planted: never looks past the magic
            return Execution(outcome: .accepted(digest: "\(bytes.count)"))
        }
        return Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: nil))
    }
}

let strictValidator = ClosureValidator(name: "strict") { bytes in
    guard let bytes else { return .invalid(reason: "not-found", message: "missing") }
    guard bytes.starts(with: Array("OK".utf8)) else { return .invalid(reason: "corrupt", message: "magic: expected OK") }
    if let bad = bytes.firstIndex(where: { $0 > 0x7F }) {
        return .invalid(reason: "corrupt", message: "byte \(bad): \(bytes[bad]) is not ASCII")
    }
    return .valid
}

@Suite("Campaign")
struct CampaignTests {
    let seeds = [
        Seed(name: "a.ok", bytes: Array("OK".utf8) + Array(repeating: 0, count: 30)),
        Seed(name: "b.ok", bytes: Array("OK hello world".utf8)),
    ]

    func campaign(seed: UInt64, runs: Int = 3000) -> Campaign {
        var configuration = FuzzConfiguration()
        configuration.seed = seed
        configuration.maxRuns = runs
        return Campaign(
            executor: PlantedBugExecutor(), targetName: "planted", targetCommand: "planted @@", takesPath: true,
            validator: strictValidator, seeds: seeds, configuration: configuration)
    }

    @Test("finds every planted bug, deduplicated, and minimizes the crash")
    func findsPlantedBugs() throws {
        let result = try campaign(seed: 1).run()
        let kinds = Set(result.findings.map(\.finding.kind))
        #expect(kinds == [.crash, .silentAcceptance, .wrongReason])
        #expect(result.executions == 3000)
        let crash = try #require(result.findings.first { $0.finding.kind == .crash })
        #expect(crash.minimized == [0xFF, 0xFF])
        #expect(crash.hits >= 1)
        let wrong = try #require(result.findings.first { $0.finding.kind == .wrongReason })
        #expect(wrong.finding.signature == "expected empty, got corrupt")
        #expect(wrong.finding.input.bytes == [])
        // Each signature appears once however often it was hit.
        #expect(Set(result.findings.map(\.finding.key)).count == result.findings.count)
    }

    @Test("the same seed and corpus give the same inputs and findings")
    func deterministic() throws {
        let a = try campaign(seed: 7).run()
        let b = try campaign(seed: 7).run()
        let c = try campaign(seed: 8).run()
        #expect(a.inputSequenceHash == b.inputSequenceHash)
        #expect(a.findings.map(\.finding.key) == b.findings.map(\.finding.key))
        #expect(a.findings.map(\.firstExecution) == b.findings.map(\.firstExecution))
        #expect(a.inputSequenceHash != c.inputSequenceHash)
    }

    @Test("the schedule starts with the hostile catalogue, the seeds and every truncation")
    func scheduleOrder() {
        var schedule = InputSchedule(seeds: seeds, configuration: FuzzConfiguration(), includeMissingFile: true)
        let first = (0..<schedule.deterministicCount).map { _ in schedule.next() }
        #expect(first[0].bytes == nil && first[0].expectation == .notFound)
        #expect(first[1].bytes == [] && first[1].expectation == .empty)
        #expect(first[2].bytes == seeds[0].bytes && first[2].mutations.isEmpty)
        #expect(first.contains { $0.mutations == ["all-zeros"] && $0.bytes == Array(repeating: 0, count: 32) })
        #expect(first.contains { $0.mutations == ["single-byte"] && $0.bytes == [UInt8(ascii: "O")] })
        let truncations = first.filter { $0.seedName == "a.ok" && $0.mutations.first?.hasPrefix("truncate@") == true }
        #expect(truncations.count == seeds[0].bytes.count - 2)
        let next = schedule.next()
        #expect(!next.mutations.isEmpty)
    }

    @Test("large files are truncated at sampled lengths, small ones at every length")
    func truncationSampling() {
        #expect(InputSchedule.truncationLengths(count: 10, everyUpTo: 1024) == Array(1..<10))
        let sampled = InputSchedule.truncationLengths(count: 100_000, everyUpTo: 1024)
        #expect(sampled.count < 600)
        #expect(sampled.contains(1) && sampled.contains(99_999))
    }

    @Test("a stop request ends the campaign with what it found so far")
    func stops() throws {
        var configuration = FuzzConfiguration()
        configuration.maxSeconds = 600
        let campaign = Campaign(
            executor: PlantedBugExecutor(), targetName: "planted", targetCommand: "planted @@", takesPath: true,
            validator: strictValidator, seeds: seeds, configuration: configuration)
        let box = StopAfter(executions: 500)
        let result = try campaign.run(progress: { box.seen = $0.executions }, shouldStop: { box.shouldStop })
        #expect(result.stopReason == "interrupted")
        #expect(result.executions < 1000)
        #expect(!result.findings.isEmpty)
    }
}

final class StopAfter: @unchecked Sendable {
    let limit: Int
    var seen = 0
    init(executions: Int) { limit = executions }
    var shouldStop: Bool { seen >= limit }
}
