import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation
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
    guard let bytes else { return .invalid(Violation(.notFound, "missing")) }
    guard bytes.starts(with: Array("OK".utf8)) else { return .invalid(Violation(.corrupt, "magic: expected OK")) }
    if let bad = bytes.firstIndex(where: { $0 > 0x7F }) {
        return .invalid(Violation(.corrupt, "byte \(bad): \(bytes[bad]) is not ASCII"))
    }
    return .valid
}

/// An executor whose every input takes `step` on `clock` (a test's ``ManualClock``): a timed
/// campaign of it runs the same inputs at any load. A hang's confirmation takes `step` too.
struct Ticking: Executor {
    let base: any Executor
    let clock: ManualClock
    var step: Duration = .milliseconds(1)
    var slots: Int { base.slots }

    func execute(_ input: TestInput, slot: Int) throws(CorruptFuzzError) -> Execution {
        clock.advance(by: step)
        return try base.execute(input, slot: slot)
    }

    func confirmHang(_ input: TestInput, slot: Int, margin: Int) throws(CorruptFuzzError) -> Execution {
        clock.advance(by: step)
        return try base.confirmHang(input, slot: slot, margin: margin)
    }
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

    /// Crashes on any input of 500 bytes or more: a reproducer is 1-minimal at 500 bytes, and
    /// showing it (each of its bytes tried away) takes more than 500 executions.
    struct LongInputCrash: Executor {
        let slots = 1
        func execute(_ input: TestInput, slot: Int) -> Execution {
            guard let bytes = input.bytes, bytes.count >= 500 else { return Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: nil)) }
            return Execution(outcome: .crashed(signal: 11, frames: ["parse"], message: nil))
        }
    }

    func longInputCampaign(minimizeRuns: Int?) throws -> FindingRecord {
        var configuration = FuzzConfiguration()
        configuration.maxRuns = 5
        if let minimizeRuns { configuration.minimizeMaxTests = minimizeRuns }
        var rng = FuzzRNG(seed: 3)
        let seed = Seed(name: "long", bytes: (0..<1500).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        let result = try Campaign(
            executor: LongInputCrash(), targetName: "long", targetCommand: "long @@", takesPath: true, validator: nil, seeds: [seed],
            configuration: configuration
        ).run()
        return try #require(result.findings.first { $0.finding.kind == .crash })
    }

    @Test("minimization runs as long as the time left allows, not a fixed 400 executions; --minimize-runs sets a count")
    func minimizationBudget() throws {
        let unbounded = try longInputCampaign(minimizeRuns: nil)
        #expect(unbounded.minimized?.count == 500, "\(unbounded.minimized?.count ?? -1) bytes")
        #expect(unbounded.minimizationEnd == .oneMinimal)
        #expect(unbounded.minimizationTests > 400)
        let counted = try longInputCampaign(minimizeRuns: 40)
        #expect(counted.minimizationEnd == .outOfTests)
        #expect(counted.minimizationTests == 40)
    }

    @Test("one broken rule at two places is one finding with two variants, each counted and kept; a minimization that ends says how")
    func variantsCounted() throws {
        // The same rule ("not ASCII") quoted with where it broke: one signature, two details.
        let placed = ClosureValidator(name: "placed") { bytes in
            guard let bytes, bytes.starts(with: Array("OK".utf8)) else { return .invalid(Violation(.corrupt, "magic: expected OK")) }
            guard let bad = bytes.firstIndex(where: { $0 > 0x7F }) else { return .valid }
            return .invalid(Violation(.corrupt, "a byte in '\(bad < 8 ? "header" : "body")' is not ASCII"))
        }
        var configuration = FuzzConfiguration()
        configuration.seed = 1
        configuration.maxRuns = 3000
        let result = try Campaign(
            executor: PlantedBugExecutor(), targetName: "planted", targetCommand: "planted @@", takesPath: true,
            validator: placed, seeds: seeds, configuration: configuration
        ).run()
        let accepted = result.findings.filter { $0.finding.kind == .silentAcceptance && $0.finding.signature.contains("is not ASCII") }
        #expect(accepted.count == 1, "\(accepted.map(\.finding.signature))")
        let record = try #require(accepted.first)
        let variants = try #require(record.variants)
        #expect(Set(variants.map { $0.detail.contains("'header'") ? "header" : $0.detail.contains("'body'") ? "body" : "?" }) == ["header", "body"])
        #expect(variants.count == 2)
        #expect(variants.reduce(0) { $0 + $1.hits } == record.hits)
        #expect(variants[0].input == nil && variants[1].input != nil)
        #expect(variants[1].input.map { placed.validate($0).description.contains(variants[1].detail.contains("'header'") ? "'header'" : "'body'") } == true)
        // The crash minimizes to its two bytes, and no byte of them can go.
        let crash = try #require(result.findings.first { $0.finding.kind == .crash })
        #expect(crash.minimized == [0xFF, 0xFF] && crash.minimizationEnd == .oneMinimal)

        // Two shards' records of it: their variants add up by detail.
        var merged = record
        merged.mergeVariants(of: record)
        #expect(merged.variants?.count == 2)
        #expect(merged.variants?.reduce(0) { $0 + $1.hits } == 2 * record.hits)
    }

    /// A loader whose every input takes `milliseconds` on `clock`, rejecting it as the strict
    /// validator does, an empty file as empty (no finding).
    struct SlowExecutor: Executor {
        let slots = 1
        let milliseconds: Int
        let clock: ManualClock

        func execute(_ input: TestInput, slot: Int) -> Execution {
            clock.advance(by: .milliseconds(milliseconds))
            guard let bytes = input.bytes else { return Execution(outcome: .rejected(reason: "not-found", exitCode: 1, message: nil)) }
            if bytes.isEmpty { return Execution(outcome: .rejected(reason: "empty", exitCode: 1, message: nil)) }
            if case .invalid(let violation) = strictValidator.validate(bytes) {
                return Execution(outcome: .rejected(reason: violation.reason, exitCode: 1, message: nil))
            }
            return Execution(outcome: .accepted(digest: "\(bytes.count)"))
        }
    }

    @Test("fuzzing ends on time when inputs are slow: the clock is read before every input, not only every batch")
    func slowInputsEndOnTime() throws {
        let clock = ManualClock()
        var configuration = FuzzConfiguration()
        configuration.seed = 1
        configuration.maxSeconds = 1.1
        configuration.minimize = false
        configuration.clock = clock
        let campaign = Campaign(
            executor: SlowExecutor(milliseconds: 250, clock: clock), targetName: "slow", targetCommand: "slow @@", takesPath: true,
            validator: strictValidator, seeds: seeds, configuration: configuration)
        let result = try campaign.run()
        // A batch is four inputs (one slot): read only between batches, the clock let a batch
        // that began at 1.0 s run to 2.0 s (eight inputs). Read before each input, fuzzing ends
        // after the fifth, at 1.25 s, the first look past the 1.078 s fuzzing has (the report
        // keeps 0.022 s).
        #expect(result.stopReason == .duration)
        #expect(result.executions == 5, "\(result.executions) inputs of 250 ms for a duration of 1.1 s")
        #expect(result.fuzzSeconds == 1.25 && result.totalSeconds == 1.25, "\(result.fuzzSeconds) s, \(result.totalSeconds) s")
        #expect(result.findings.isEmpty, "\(result.findings.map(\.finding.detail))")
    }

    /// A campaign of `seconds` on `clock` without minimization, whose findings are checked in
    /// `fresh` (when given) as a worker campaign's are. `executor` (the planted loader unless
    /// given) takes a millisecond an input on `clock`.
    func checkedCampaign(
        _ executor: any Executor = PlantedBugExecutor(), fresh: (any Executor)?, seconds: Double, timeoutMilliseconds: Int, clock: ManualClock
    ) -> Campaign {
        var configuration = FuzzConfiguration()
        configuration.seed = 1
        configuration.maxSeconds = seconds
        configuration.minimize = false
        configuration.limits.timeoutMilliseconds = timeoutMilliseconds
        configuration.clock = clock
        let campaign = Campaign(
            executor: Ticking(base: executor, clock: clock), targetName: "planted", targetCommand: "planted @@", takesPath: true,
            validator: strictValidator, seeds: seeds, configuration: configuration)
        campaign.replayExecutor = fresh
        return campaign
    }

    /// A campaign of the planted loader whose findings are checked in `fresh` after fuzzing, with
    /// a 20 s deadline: each finding's check can take a quarter of it or all of it, more than two
    /// fifths of the 3 s campaign.
    func slowChecksCampaign(fresh: (any Executor)?, clock: ManualClock) -> Campaign {
        checkedCampaign(fresh: fresh, seconds: 3, timeoutMilliseconds: 20_000, clock: clock)
    }

    /// Where fuzzing may end past its planned end on a manual clock: a few inputs of each of the
    /// two jobs (each reads the clock once a batch of four when its inputs are fast).
    static let overrun = 0.02

    @Test("a campaign whose findings are checked in a fresh process stops fuzzing early enough for the checks")
    func freshChecksHaveTheirTime() throws {
        // The report's moment is 0.06 s of 3 s; the checks keep a fifth of the time, 0.6 s.
        let unchecked = try slowChecksCampaign(fresh: nil, clock: ManualClock()).run()
        let checked = try slowChecksCampaign(fresh: PlantedBugExecutor(), clock: ManualClock()).run()
        #expect(!unchecked.findings.isEmpty && !checked.findings.isEmpty)
        #expect(unchecked.fuzzSeconds >= 2.94 && unchecked.fuzzSeconds < 2.94 + Self.overrun, "\(unchecked.fuzzSeconds) s")
        #expect(checked.fuzzSeconds >= 2.34 && checked.fuzzSeconds < 2.34 + Self.overrun, "\(checked.fuzzSeconds) s")
    }

    /// The planted loader, which takes a second on `clock` for each input: a fresh process whose
    /// checks would end a short campaign late.
    struct SlowFresh: Executor {
        let slots = 2
        let clock: ManualClock

        func execute(_ input: TestInput, slot: Int) -> Execution {
            clock.advance(by: .seconds(1))
            return PlantedBugExecutor().execute(input, slot: slot)
        }
    }

    @Test("a check in a fresh process that could end past the duration is not started, and its finding says so")
    func uncheckedWithinTheDuration() throws {
        let clock = ManualClock()
        let result = try slowChecksCampaign(fresh: SlowFresh(clock: clock), clock: clock).run()
        // Each check can take 5 s or more and 0.6 s is left: started, a check would have ended
        // the campaign a second late.
        #expect(result.totalSeconds <= 3, "\(result.totalSeconds) s for a duration of 3 s")
        #expect(!result.findings.isEmpty)
        for record in result.findings {
            guard case .notChecked(let needed, let left)? = record.freshProcess else {
                Issue.record("\(record.finding.kind) was marked \(String(describing: record.freshProcess))")
                continue
            }
            #expect(needed >= 5 && left < 1, "needed \(needed) s, left \(left) s")
            #expect(record.freshProcess?.description.hasPrefix("NOT CHECKED in a fresh process: the check can take ") == true)
        }
    }

    /// The fresh process of the planted loader, taking half a second a run on `clock`.
    struct HalfSecondFresh: Executor {
        let slots = 2
        let clock: ManualClock

        func execute(_ input: TestInput, slot: Int) -> Execution {
            clock.advance(by: .milliseconds(500))
            return PlantedBugExecutor().execute(input, slot: slot)
        }
    }

    @Test("the report written after fuzzing is timed, and twice its time is kept at the end for the last one")
    func reportTimeIsKept() throws {
        // 10 s with a 2 s deadline: fuzzing keeps 2 s for the checks (the crash's; the others
        // take 0.5 s each) and 0.2 s for the report, and ends 7.8 s in. The report then takes
        // 0.8 s, so 1.6 s is kept at the end: at 8.6 s no check fits what is left (until 8.4 s),
        // and the campaign ends. With the 0.2 s kept before, the 0.5 s checks would run to about 9.1 s.
        let clock = ManualClock()
        let campaign = checkedCampaign(fresh: HalfSecondFresh(clock: clock), seconds: 10, timeoutMilliseconds: 2000, clock: clock)
        let result = try campaign.run(fuzzed: { _ in clock.advance(by: .milliseconds(800)) })
        #expect(!result.findings.isEmpty)
        #expect(result.fuzzSeconds >= 7.8 && result.fuzzSeconds < 7.8 + Self.overrun, "fuzzing \(result.fuzzSeconds) s")
        // The report's 0.8 s, and no check: none fits what is left.
        #expect(abs(result.totalSeconds - (result.fuzzSeconds + 0.8)) < 1e-9, "\(result.totalSeconds) s, fuzzing \(result.fuzzSeconds) s")
        for record in result.findings {
            guard case .notChecked? = record.freshProcess else {
                Issue.record("\(record.finding.kind) was marked \(String(describing: record.freshProcess))")
                continue
            }
        }
    }

    /// A fresh process that hangs on every input.
    struct AlwaysHangs: Executor {
        let slots = 2
        func execute(_ input: TestInput, slot: Int) -> Execution { Execution(outcome: .hung(milliseconds: 100), microseconds: 100_000) }
    }

    @Test("a check whose fresh process hangs, with no time left to confirm the hang, is not done, not a finding not reproduced")
    func hangInACheckWithoutTime() throws {
        let result = try checkedCampaign(fresh: AlwaysHangs(), seconds: 2, timeoutMilliseconds: 100, clock: ManualClock()).run()
        #expect(!result.findings.isEmpty)
        var needs: [Double] = []
        for record in result.findings {
            guard case .notChecked(let needed, _)? = record.freshProcess else {
                Issue.record("\(record.finding.kind) was marked \(String(describing: record.freshProcess))")
                continue
            }
            needs.append(needed)
        }
        // Started, a check found the hang, whose confirmation (the deadline and 2.1 s) had no time.
        #expect(needs.contains { abs($0 - 2.2) < 0.001 }, "\(needs)")
    }

    /// A loader that hangs on an empty file (a hang finding from the first inputs on) and
    /// otherwise behaves as the planted one.
    struct HangsOnEmpty: Executor {
        let slots = 2

        func execute(_ input: TestInput, slot: Int) -> Execution {
            if input.bytes?.isEmpty == true { return Execution(outcome: .hung(milliseconds: 100), microseconds: 100_000) }
            return PlantedBugExecutor().execute(input, slot: slot)
        }
    }

    /// The fresh process of ``HangsOnEmpty``: a hang's confirmation takes half a second on
    /// `clock`, and is recorded (its margin, and when it ended).
    final class CountedFresh: Executor, @unchecked Sendable {
        let slots = 2
        let clock: ManualClock
        private let lock = NSLock()
        private var confirmations: [(margin: Int, end: FuzzInstant)] = []

        init(clock: ManualClock) { self.clock = clock }

        func execute(_ input: TestInput, slot: Int) -> Execution { HangsOnEmpty().execute(input, slot: slot) }

        func confirmHang(_ input: TestInput, slot: Int, margin: Int) -> Execution {
            clock.advance(by: .milliseconds(500))
            lock.withLock { confirmations.append((margin, clock.now)) }
            return execute(input, slot: slot)
        }

        var recorded: [(margin: Int, end: FuzzInstant)] { lock.withLock { confirmations } }
    }

    @Test("a worker campaign checks a new hang in a fresh process as the replay runs it while it fuzzes, at twice the replay's deadline")
    func hangCheckedWhileFuzzing() throws {
        let clock = ManualClock()
        let fresh = CountedFresh(clock: clock)
        let start = clock.now
        let result = try checkedCampaign(HangsOnEmpty(), fresh: fresh, seconds: 5, timeoutMilliseconds: 100, clock: clock).run()
        let hang = try #require(result.findings.first { $0.finding.kind == .hang })
        #expect(hang.finding.execution.hangConfirmedAsReplayed)
        #expect(hang.freshProcess == nil)
        // Checked once (by the job that found it first), while fuzzing, at twice the deadline,
        // and not run again after fuzzing.
        let confirmations = fresh.recorded
        #expect(confirmations.map(\.margin) == [2])
        #expect(confirmations.allSatisfy { ($0.end - start).seconds < result.fuzzSeconds }, "fuzzing ended at \(result.fuzzSeconds) s")
        // Nothing is kept for its check (4.3 s): fuzzing ran to the end, less the report's 0.1 s
        // and the other findings' checks' 0.1 s.
        #expect(result.fuzzSeconds >= 4.8 && result.fuzzSeconds < 4.8 + Self.overrun, "\(result.fuzzSeconds) s")
        #expect(result.totalSeconds <= 5, "\(result.totalSeconds) s")
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

    @Test("the schedule starts with the inputs every loader must handle, then alternates the deterministic stages with havoc")
    func scheduleOrder() {
        var schedule = InputSchedule(seeds: seeds, configuration: FuzzConfiguration(), includeMissingFile: true)
        let inputs = (0..<(2 * (schedule.frontCount + schedule.stageCount) + 10)).map { _ in schedule.next() }
        #expect(inputs[0].bytes == nil && inputs[0].expectation == .notFound)
        #expect(inputs[1].bytes == [] && inputs[1].expectation == .empty)
        #expect(inputs[2].bytes == seeds[0].bytes && inputs[2].mutations.isEmpty)
        #expect(inputs[3].bytes == seeds[1].bytes && inputs[3].mutations.isEmpty)
        #expect(inputs[4].mutations == ["all-zeros"] && inputs[4].bytes == Array(repeating: 0, count: 32))
        // The front is done after the second seed's zeros: from there, a stage, then havoc.
        let stage = { (input: TestInput) in
            input.mutations.count == 1 && ["append-", "truncate@", "single-byte"].contains { input.mutations[0].hasPrefix($0) }
        }
        #expect(stage(inputs[6]) && !stage(inputs[7]) && stage(inputs[8]) && !stage(inputs[9]))
        #expect(inputs.contains { $0.mutations == ["single-byte"] && $0.bytes == [UInt8(ascii: "O")] })
        let truncated = Set(
            inputs.compactMap { input -> Int? in
                guard input.seedName == "a.ok", let bytes = input.bytes, input.mutations == ["truncate@\(bytes.count)"] else { return nil }
                return bytes == Array(seeds[0].bytes.prefix(bytes.count)) ? bytes.count : nil
            })
        #expect(truncated == Set(2..<seeds[0].bytes.count))
        // Bytes after the end: 1, 16 and 4,096, zeros and random, for every seed.
        for seed in seeds {
            for length in InputSchedule.appendedLengths {
                let zeros = inputs.first { $0.seedName == seed.name && $0.mutations == ["append-zeros@\(length)"] }
                #expect(zeros?.bytes == seed.bytes + Array(repeating: 0, count: length))
                let random = inputs.first { $0.seedName == seed.name && $0.mutations == ["append-random@\(length)"] }
                #expect(random?.bytes?.starts(with: seed.bytes) == true && random?.bytes?.count == seed.bytes.count + length)
            }
        }
    }

    @Test("a shallow crash that any random change reaches is found before the deterministic stages end")
    func shallowCrashEarly() throws {
        // A loader that crashes on any same-length change behind its magic, seeds of 4 KiB:
        // every truncation first would take thousands of executions.
        struct Fragile: Executor {
            let slots = 1
            let seed: [UInt8]
            func execute(_ input: TestInput, slot: Int) -> Execution {
                guard let bytes = input.bytes, bytes.count == seed.count, bytes.starts(with: Array("OK".utf8)) else {
                    return Execution(outcome: .rejected(reason: "corrupt", exitCode: 1, message: nil))
                }
                return Execution(outcome: bytes == seed ? .accepted(digest: "ok") : .crashed(signal: 6, frames: ["parse"], message: nil))
            }
        }
        let seed = Array("OK".utf8) + (0..<4094).map { UInt8(truncatingIfNeeded: $0 % 50 + 32) }
        var configuration = FuzzConfiguration()
        configuration.maxRuns = 400
        configuration.minimize = false
        let campaign = Campaign(
            executor: Fragile(seed: seed), targetName: "fragile", targetCommand: "fragile @@", takesPath: true,
            validator: nil, seeds: [Seed(name: "s", bytes: seed)], configuration: configuration)
        let result = try campaign.run()
        let crash = try #require(result.findings.first { $0.finding.kind == .crash })
        #expect(crash.firstExecution < 100)
    }

    @Test("a corpus of more seeds than the pool's room, no mutators, or no seeds at all: the schedule never traps")
    func scheduleEdges() {
        let many = (0..<600).map { Seed(name: "s\($0)", bytes: [UInt8(truncatingIfNeeded: $0), 1, 2]) }
        var schedule = InputSchedule(seeds: many, configuration: FuzzConfiguration(), includeMissingFile: false)
        for i in 0..<3_000 {
            let input = schedule.next()
            if i % 2 == 0 { schedule.addToPool(input) }
        }
        var bare = FuzzConfiguration()
        bare.mutators = []
        var noMutators = InputSchedule(seeds: seeds, configuration: bare, includeMissingFile: true)
        for _ in 0..<500 { _ = noMutators.next() }
        var empty = InputSchedule(seeds: [], configuration: FuzzConfiguration(), includeMissingFile: true)
        for _ in 0..<200 { _ = empty.next() }
    }

    @Test("large files are truncated at sampled lengths, small ones at every length")
    func truncationSampling() {
        #expect(InputSchedule.truncationLengths(count: 10, everyUpTo: 1024) == Array(1..<10))
        let sampled = InputSchedule.truncationLengths(count: 100_000, everyUpTo: 1024)
        #expect(sampled.count < 600)
        #expect(sampled.contains(1) && sampled.contains(99_999))
    }

    @Test("a stop request ends the campaign with what it found so far, each job at its next batch")
    func stops() throws {
        var configuration = FuzzConfiguration()
        // Never reached: the manual clock does not move.
        configuration.maxSeconds = 600
        configuration.clock = ManualClock()
        let executor = CountingExecutor(base: PlantedBugExecutor())
        let campaign = Campaign(
            executor: executor, targetName: "planted", targetCommand: "planted @@", takesPath: true,
            validator: strictValidator, seeds: seeds, configuration: configuration)
        let box = StopAfter(executions: 500, count: { executor.count })
        let result = try campaign.run(progress: { box.seen = $0.executions }, shouldStop: { box.shouldStop })
        let ranAtStop = try #require(box.ranAtStop)
        #expect(result.stopReason == .interrupted)
        // Each of the two jobs ends the batch it is in (four inputs): nothing runs after that.
        #expect(result.executions <= ranAtStop + 2 * 4, "\(result.executions) inputs run, \(ranAtStop) when the stop was asked")
        #expect(!result.findings.isEmpty)
    }
}

/// Counts the inputs `base` ran, from any slot.
final class CountingExecutor: Executor, @unchecked Sendable {
    let base: any Executor
    private let lock = NSLock()
    private var ran = 0
    init(base: any Executor) { self.base = base }
    var slots: Int { base.slots }
    var count: Int { lock.withLock { ran } }

    func execute(_ input: TestInput, slot: Int) throws(CorruptFuzzError) -> Execution {
        lock.withLock { ran += 1 }
        return try base.execute(input, slot: slot)
    }
}

final class StopAfter: @unchecked Sendable {
    let limit: Int
    let count: @Sendable () -> Int
    var seen = 0
    /// How many inputs had run when ``shouldStop`` first said yes.
    private(set) var ranAtStop: Int?
    init(executions: Int, count: @escaping @Sendable () -> Int) {
        limit = executions
        self.count = count
    }
    var shouldStop: Bool {
        guard seen >= limit else { return false }
        if ranAtStop == nil { ranAtStop = count() }
        return true
    }
}

@Suite("Validators asked once per distinct input, or every time")
struct RememberedVerdictTests {
    /// Counts the validations of each input, by its bytes.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var counts: [[UInt8]: Int] = [:]
        func add(_ bytes: [UInt8]) { lock.withLock { counts[bytes, default: 0] += 1 } }
        func count(_ bytes: [UInt8]) -> Int { lock.withLock { counts[bytes] ?? 0 } }
    }

    /// One slot and two seeds with the same bytes, both run unchanged before any mutation.
    func validations(remembering: Bool) throws -> Int {
        let counter = Counter()
        var validator = ClosureValidator(name: "counting") { bytes in
            counter.add(bytes ?? [])
            return .invalid(Violation(.corrupt, "never valid"))
        }
        validator.remembersVerdicts = remembering
        struct OneSlot: Executor {
            let slots = 1
            func execute(_ input: TestInput, slot: Int) -> Execution {
                Execution(outcome: .accepted(digest: ""))
            }
        }
        let twin = Array("twin seed".utf8)
        var configuration = FuzzConfiguration()
        configuration.maxRuns = 20
        configuration.minimize = false
        let campaign = Campaign(
            executor: OneSlot(), targetName: "accepts", targetCommand: "accepts @@", takesPath: false, validator: validator,
            seeds: [Seed(name: "a", bytes: twin), Seed(name: "b", bytes: twin)], configuration: configuration)
        _ = try campaign.run()
        return counter.count(twin)
    }

    @Test("remembered by default; a validator that says it is cheaper than remembering is asked every time")
    func remembering() throws {
        #expect(try validations(remembering: true) == 1)
        #expect(try validations(remembering: false) == 2)
    }

    @Test("a worker's finding is run again in a fresh process, as its replay runs it, and says when it shows only in the worker")
    func workerFindingsCheckedInFreshProcess() throws {
        // The leaky fixture rejects an input the first time and accepts it the second: twin
        // seeds make the worker accept one that the validator calls corrupt (a silent
        // acceptance that a fresh process, which has seen nothing, does not show). Its empty
        // file is rejected as corrupt every time: a wrong reason that replays anywhere.
        let fixture = BuiltProducts.path("WorkerFixture")
        let environment = ["WORKER_FIXTURE_MODE": "leaky"]
        let limits = ProcessExecutor.Limits(timeoutMilliseconds: 5000)
        let worker = try WorkerExecutor(path: fixture, arguments: [], environment: environment, limits: limits, slots: 1)
        let validator = ClosureValidator(name: "nothing is valid") { bytes in
            bytes?.isEmpty == true ? .invalid(Violation(.empty, "no bytes")) : .invalid(Violation(.corrupt, "never valid"))
        }
        var configuration = FuzzConfiguration()
        configuration.maxRuns = 40
        configuration.jobs = 1
        let twin = Array("twin seed".utf8)
        let campaign = Campaign(
            executor: worker, targetName: "leaky", targetCommand: "\(fixture) @@", takesPath: true, validator: validator,
            seeds: [Seed(name: "a", bytes: twin), Seed(name: "b", bytes: twin)], configuration: configuration)
        campaign.replayExecutor = try ProcessExecutor(command: try TargetCommand("\(fixture) @@"), limits: limits, environment: environment)
        let result = try campaign.run()
        let acceptance = try #require(result.findings.first { $0.finding.kind == .silentAcceptance }, "\(result.findings.map(\.finding.kind))")
        guard case .notReproduced(let finding, let outcome)? = acceptance.freshProcess else {
            Issue.record("the worker-only acceptance was not marked: \(String(describing: acceptance.freshProcess))")
            return
        }
        #expect(finding == nil && outcome.contains("rejected"), "\(String(describing: finding)), \(outcome)")
        let wrongReason = try #require(result.findings.first { $0.finding.kind == .wrongReason })
        #expect(wrongReason.freshProcess == nil)
    }

    /// A campaign whose worker crashes with SIGSEGV in `parse_header` on every input but its
    /// seed, and whose fresh processes crash on it at the sites given, one per run, in turn:
    /// what the fresh-process check made of the crash finding.
    func freshCheck(ofSites sites: [String]) throws -> (check: FreshProcessCheck?, signature: String) {
        let seed = Array("a seed".utf8)
        final class Turns: @unchecked Sendable {
            let lock = NSLock()
            var next = 0
            let sites: [String]
            init(_ sites: [String]) { self.sites = sites }
            func take() -> String {
                lock.withLock {
                    defer { next += 1 }; return sites[next % sites.count]
                }
            }
        }
        struct Faulting: Executor {
            let slots = 1
            let seed: [UInt8]
            let site: @Sendable () -> String
            func execute(_ input: TestInput, slot: Int) -> Execution {
                input.bytes == seed ? Execution(outcome: .accepted(digest: "")) : Execution(outcome: .crashed(signal: SIGSEGV, frames: [site()], message: nil))
            }
        }
        let turns = Turns(sites)
        var configuration = FuzzConfiguration()
        configuration.maxRuns = 20
        configuration.jobs = 1
        let campaign = Campaign(
            executor: Faulting(seed: seed, site: { "parse_header" }), targetName: "faulting", targetCommand: "faulting @@", takesPath: true,
            validator: ClosureValidator(name: "all valid") { _ in .valid }, seeds: [Seed(name: "a", bytes: seed)], configuration: configuration)
        campaign.replayExecutor = Faulting(seed: seed, site: { turns.take() })
        let crashes = try campaign.run().findings.filter { $0.finding.kind == .crash }
        try #require(crashes.count == 1, "\(crashes.map(\.finding.signature))")
        return (crashes[0].freshProcess, crashes[0].finding.signature)
    }

    @Test(
        "a finding a worker's process showed only after it lived through a trap, and a fresh process does not show, is left out and counted; one from a process that did not stays, marked"
    )
    func findingOnlyAfterATrap() throws {
        let seed = Array("a seed".utf8)
        // Inputs of an even length crash a process that lived through a trap; of an odd length,
        // one that did not. A fresh process accepts them all.
        struct Worker: Executor {
            let slots = 1
            let seed: [UInt8]
            func execute(_ input: TestInput, slot: Int) -> Execution {
                let bytes = input.bytes ?? []
                if bytes == seed { return Execution(outcome: .accepted(digest: "")) }
                var execution = Execution(outcome: .crashed(signal: SIGSEGV, frames: [bytes.count % 2 == 0 ? "left_by_a_trap" : "state_kept"], message: nil))
                execution.afterRecoveredTrap = bytes.count % 2 == 0
                return execution
            }
        }
        struct Fresh: Executor {
            let slots = 1
            func execute(_ input: TestInput, slot: Int) -> Execution { Execution(outcome: .accepted(digest: "")) }
        }
        var configuration = FuzzConfiguration()
        configuration.maxRuns = 200
        configuration.jobs = 1
        let campaign = Campaign(
            executor: Worker(seed: seed), targetName: "trapped", targetCommand: "trapped @@", takesPath: true,
            validator: ClosureValidator(name: "all valid") { _ in .valid }, seeds: [Seed(name: "a", bytes: seed)], configuration: configuration)
        campaign.replayExecutor = Fresh()
        let result = try campaign.run()
        let signatures = result.findings.map(\.finding.signature)
        #expect(result.findingsOnlyAfterTrap == 1, "\(signatures)")
        #expect(!signatures.contains { $0.contains("left_by_a_trap") }, "\(signatures)")
        let kept = try #require(result.findings.first { $0.finding.signature.contains("state_kept") }, "\(signatures)")
        guard case .notReproduced? = kept.freshProcess else {
            Issue.record("not marked as not reproduced: \(String(describing: kept.freshProcess))")
            return
        }
    }

    @Test("a memory fault whose site moves between fresh processes is 'site varies', with the sites seen; one that stays put is not marked")
    func memoryFaultSiteVaries() throws {
        // The first fresh run agrees, the two more runs a memory fault gets show two other sites.
        let moving = try freshCheck(ofSites: ["parse_header", "free_list_insert", "parse_body"])
        guard case .siteVaries(let sites)? = moving.check else {
            Issue.record("not marked as varying: \(String(describing: moving.check))")
            return
        }
        #expect(sites.count == 3 && sites.first == moving.signature && Set(sites).count == 3, "\(sites)")
        #expect(sites.contains { $0.contains("free_list_insert") } && sites.contains { $0.contains("parse_body") }, "\(sites)")
        // The first fresh run already shows another site: still the same bug, at another place.
        let elsewhere = try freshCheck(ofSites: ["free_list_insert"])
        guard case .siteVaries(let seen)? = elsewhere.check else {
            Issue.record("a fault elsewhere in a fresh process was not marked as varying: \(String(describing: elsewhere.check))")
            return
        }
        #expect(seen.first == elsewhere.signature && seen.count == 2 && seen[1].contains("free_list_insert"), "\(seen)")
        // Always at the same site: the printed signature is the replay's, nothing to say.
        #expect(try freshCheck(ofSites: ["parse_header"]).check == nil)
    }

    @Test(
        "a fresh process starved of CPU before it shows anything leaves a worker's finding undecided, never NOT REPRODUCED, and never drops it"
    )
    func starvedFreshCheckIsUndecided() throws {
        let seed = Array("a seed".utf8)
        // Every other input crashes; inputs of an even length in a process that had lived
        // through a trap. The fresh process is starved: still running at the confirmation's
        // wall-clock cap with less than half its CPU time.
        struct Worker: Executor {
            let slots = 1
            let seed: [UInt8]
            func execute(_ input: TestInput, slot: Int) -> Execution {
                let bytes = input.bytes ?? []
                if bytes == seed { return Execution(outcome: .accepted(digest: "")) }
                var execution = Execution(outcome: .crashed(signal: SIGILL, frames: ["lex(_:) at Lexer.swift:\(bytes.count % 2)"], message: nil))
                execution.afterRecoveredTrap = bytes.count % 2 == 0
                return execution
            }
        }
        struct Starved: Executor {
            let slots = 1
            func execute(_ input: TestInput, slot: Int) -> Execution {
                var execution = Execution(outcome: .hung(milliseconds: 1000))
                execution.starved = true
                return execution
            }
        }
        var configuration = FuzzConfiguration()
        configuration.maxRuns = 200
        configuration.jobs = 1
        let campaign = Campaign(
            executor: Worker(seed: seed), targetName: "lexer", targetCommand: "lexer @@", takesPath: true,
            validator: ClosureValidator(name: "all valid") { _ in .valid }, seeds: [Seed(name: "a", bytes: seed)], configuration: configuration)
        campaign.replayExecutor = Starved()
        let result = try campaign.run()
        #expect(result.findingsOnlyAfterTrap == 0)
        #expect(result.findings.count == 2, "\(result.findings.map(\.finding.signature))")
        for record in result.findings {
            guard case .undecided(let reason)? = record.freshProcess else {
                Issue.record("\(record.finding.signature): \(String(describing: record.freshProcess))")
                continue
            }
            #expect(reason == Judge.starvedReason)
            #expect(record.freshProcess?.description.hasPrefix("UNDECIDED") == true)
        }
    }
}
