import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation
import Testing

@Suite("Campaign.found: each finding handed over the moment it is first hit, once")
struct FoundCallbackTests {
    /// The planted loader in `slots` slots.
    struct Slots: Executor {
        let slots: Int
        func execute(_ input: TestInput, slot: Int) -> Execution { PlantedBugExecutor().execute(input, slot: slot) }
    }

    final class Calls: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [FindingRecord] = []
        func add(_ record: FindingRecord) { lock.withLock { stored.append(record) } }
        var records: [FindingRecord] { lock.withLock { stored } }
    }

    @Test("called once per finding of the campaign (not per hit, not per job), with the input that hit it", arguments: [1, 3])
    func oncePerFinding(slots: Int) throws {
        var configuration = FuzzConfiguration()
        configuration.seed = 3
        configuration.maxRuns = 6000
        configuration.minimize = false
        let campaign = Campaign(
            executor: Slots(slots: slots), targetName: "planted", targetCommand: "planted @@", takesPath: true,
            validator: strictValidator,
            seeds: [Seed(name: "a.ok", bytes: Array("OK".utf8) + Array(repeating: 0, count: 30)), Seed(name: "b.ok", bytes: Array("OK hello world".utf8))],
            configuration: configuration)
        let calls = Calls()
        campaign.found = { calls.add($0) }
        let result = try campaign.run()
        let keys = calls.records.map(\.finding.key)
        #expect(!keys.isEmpty)
        #expect(keys.count == Set(keys).count)
        #expect(Set(keys) == Set(result.findings.map(\.finding.key)))
        // Hit many times, handed over once each.
        #expect(result.findings.reduce(0) { $0 + $1.hits } > keys.count)
        for record in calls.records {
            #expect(record.hits == 1)
            #expect(record.finding.input.bytes != nil || record.finding.input.mutations == ["missing-file"])
            // The input handed over shows the finding.
            if let bytes = record.finding.input.bytes, record.finding.kind == .crash {
                guard case .crashed = PlantedBugExecutor().execute(TestInput(bytes: bytes, seedName: "x"), slot: 0).outcome else {
                    Issue.record("\(record.finding.signature): its input does not crash")
                    continue
                }
            }
        }
    }
}
