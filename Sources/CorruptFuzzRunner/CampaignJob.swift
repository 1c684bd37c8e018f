import CorruptFuzzCore
import Foundation

// A campaign of N jobs runs as N independent fuzzers that share a corpus, as libFuzzer's
// `-jobs` and AFL++'s instances do: each job makes its own inputs (its own schedule, with its
// share of the deterministic stages and its own random stream), runs them in its own slot of
// the executor, judges them, and keeps what was new to it. What they share is touched only
// when something happens (a job's new finding, its new edge, a seed) or every few hundred
// inputs (its newly kept inputs offered to the others), never per input; each job's findings
// are merged after fuzzing as shards' are. One thread making every input and judging every
// outcome for all slots was the bound at 16 cores (#32).

extension Shard {
    /// Job `job` of `jobs` of this shard: every `jobs`-th of the shard's deterministic inputs,
    /// and a random stream of its own. The jobs of a shard together own exactly its inputs.
    func job(_ job: Int, of jobs: Int) -> Shard { Shard(index: index + count * job, count: count * jobs) }
}

extension Campaign {
    /// One job of a campaign: runs its inputs in its own slot until a stop condition holds,
    /// and keeps its own findings, behaviours and coverage novelty (so its inputs are a function
    /// of the seed, its index and what the others offered it).
    ///
    /// Used by one thread at a time (its own while it runs, the caller's before and after): the
    /// state it changes for every input is kept without the runtime's exclusivity checks.
    final class Job: @unchecked Sendable {
        /// Its index: its slot of the executor and the judge.
        let index: Int
        /// What this job found and ran (its executions, its findings, its input hash); the
        /// campaign's result is the jobs' merged (``Campaign/merge(_:into:)``).
        @exclusivity(unchecked) var result: CampaignResult
        @exclusivity(unchecked) var schedule: InputSchedule
        @exclusivity(unchecked) private var behaviours: Set<Int> = []
        @exclusivity(unchecked) private var normalized = NormalizedMessages()
        @exclusivity(unchecked) private var coverage = CoverageTable()
        @exclusivity(unchecked) private var records: [FindingKey: Int] = [:]
        /// Per finding (by index), the keys of its variants seen so far (``FindingVariant/key(of:)``).
        @exclusivity(unchecked) private var variantKeys: [[UInt64: Int]] = []
        /// The inputs this job kept since it last offered its new ones to the others.
        @exclusivity(unchecked) private var outbox: [CorpusExchange.Offer] = []
        private unowned let campaign: Campaign
        /// The plan ``run(_:)`` runs by.
        private var plan: Plan?
        private let shared: Shared
        /// How many inputs this job runs at most: its share of `--runs`.
        private let maxRuns: Int?

        init(index: Int, of jobs: Int, campaign: Campaign, shared: Shared, result: CampaignResult) {
            self.index = index
            self.campaign = campaign
            self.shared = shared
            self.result = result
            var configuration = campaign.configuration
            if jobs > 1 { configuration.shard = (configuration.shard ?? Shard(index: 0, count: 1)).job(index, of: jobs) }
            schedule = InputSchedule(
                seeds: campaign.seeds, configuration: configuration, includeMissingFile: campaign.takesPath, mutator: campaign.mutator,
                regressions: campaign.regressions, traps: campaign.judge.traps, largeEntries: shared.largeEntries,
                // Counted runs keep each job's inputs the same every run; a timed campaign's job
                // runs other inputs while another job's large entry (seconds, when slow) runs.
                waitsForLargeEntries: campaign.configuration.maxRuns != nil)
            maxRuns = campaign.configuration.maxRuns.map { $0 / jobs + (index < $0 % jobs ? 1 : 0) }
        }

        /// The campaign-wide number of this job's `local`-th input (1-based): the jobs' inputs
        /// interleaved, one of each job in turn, as if they ran at one rate. A pure function of
        /// the job's own count, so a finding's first execution does not depend on timing.
        private func executionNumber(_ local: Int) -> Int { (local - 1) * shared.jobs + index + 1 }

        /// Runs inputs in batches until a stop condition holds: the caller's stop, this job's
        /// share of the runs, the time (leaving minimization its share once any job has a
        /// finding), or a failure of any job. The caller's stop reaches it through
        /// ``Shared/requestStop()``, from the calling thread, which polls it while the jobs run.
        func run(_ plan: Plan) {
            defer { shared.exchange?.finish(job: index) }
            self.plan = plan
            let executor = campaign.executor
            let judge = campaign.judge
            let clock = campaign.configuration.clock
            var lastTrade = clock.now
            var trades = 0
            var lastBatch: FuzzInstant?
            while true {
                let status = shared.status(job: index, executions: result.executions)
                if status.failed { result.stopReason = .error; return }
                if status.stopRequested { result.stopReason = .interrupted; return }
                if let maxRuns, result.executions >= maxRuns { result.stopReason = .runs; return }
                let now = clock.now
                // Fuzzing ends here: with a finding (any job's, or this job's own since), it leaves
                // minimization its share, the fresh-process checks of the findings their time,
                // and the report a moment.
                let endOnceFound = plan.fuzzingEnd(anyFinding: true, checks: status.checks)
                let fuzzingEnd = plan.fuzzingEnd(anyFinding: status.anyFinding, checks: status.checks)
                if let fuzzingEnd, now >= fuzzingEnd {
                    result.stopReason = .duration
                    return
                }
                if let exchange = shared.exchange {
                    // Counted in inputs when the runs are counted, so that each job's inputs are
                    // the same every time; else every quarter second, never waiting.
                    let due = exchange.waits ? result.executions >= (trades + 1) * CorpusExchange.inputsPerEpoch : now - lastTrade >= .milliseconds(250)
                    if due {
                        trade(exchange, epoch: trades)
                        trades += 1
                        lastTrade = now
                    }
                }
                let count = min(plan.batchSize, maxRuns.map { $0 - result.executions } ?? plan.batchSize)
                let findingsBefore = result.findings.count
                // The clock is read within a batch too, before each input when the last batch
                // took 10 ms or more, and after an input that took a millisecond or more: four
                // slow inputs (a hang and its confirmation cost seconds) ran fuzzing seconds past
                // its end. Not for fast inputs: a read costs a few percent of a fast in-process
                // call, which is not timed.
                let everyInput = lastBatch.map { now - $0 >= .milliseconds(10) } ?? true
                lastBatch = now
                var lastWasSlow = false
                for ran in 0..<count {
                    if ran > 0, everyInput || lastWasSlow, let fuzzingEnd, let endOnceFound,
                        clock.now >= (result.findings.count > findingsBefore ? endOnceFound : fuzzingEnd)
                    {
                        break
                    }
                    let input = schedule.next()
                    let judged: Judge.Judgement
                    defer { schedule.largeEntryRan() }
                    do throws(CorruptFuzzError) {
                        judged = try judge.run(input, on: executor, slot: index)
                        lastWasSlow = judged.execution.microseconds >= 1000
                    } catch {
                        shared.fail(error, thrown: false)
                        result.stopReason = .error
                        return
                    }
                    // The gate of large entries is given back (`defer`) once the input is counted
                    // and dropped, so that no other job makes one while this one still holds its
                    // own (`take` hashes it: milliseconds for 12 MiB). A new hang's check in
                    // `take`, which takes seconds, gives it back first.
                    do throws(CorruptFuzzError) {
                        try take(input, judged)
                    } catch {
                        shared.fail(error, thrown: true)
                        result.stopReason = .error
                        return
                    }
                    schedule.recycle(input)
                }
            }
        }

        /// Whether `hang` shows in a fresh process as the printed replay runs the target, at twice
        /// the deadline the replay confirms a hang at (as the check after fuzzing runs it).
        private func checkHang(_ hang: Finding) -> Bool {
            guard let fresh = campaign.replayExecutor,
                let judged = try? campaign.judge.run(hang.input, on: fresh, slot: index, confirming: .every, hangMargin: 2)
            else { return false }
            return judged.finding?.key == hang.key
        }

        /// Offers the inputs this job kept since its last trade to the others, and adds theirs
        /// to its pool: when the exchange waits, those of their epochs before this one (each job
        /// may run one epoch ahead of the slowest before it waits), else all they offered.
        private func trade(_ exchange: CorpusExchange, epoch: Int) {
            exchange.publish(outbox, job: index)
            outbox.removeAll()
            for offer in exchange.collect(for: index, through: exchange.waits ? epoch - 1 : nil) {
                schedule.addToPool(offer.input, reachedNewCode: offer.reachedNewCode, comparisons: offer.comparisons)
            }
        }

        /// Counts one judged input: its finding, or its behaviour (new behaviour joins the pool).
        /// - Throws: The error that the target rejected every seed on standard input.
        private func take(_ input: TestInput, _ outcome: borrowing Judge.Judgement) throws(CorruptFuzzError) {
            result.executions += 1
            if outcome.slow {
                result.slowInputs += 1
                // Kept, not dropped: the report saves it for a look (a hang elsewhere?).
                if let bytes = input.bytes, (result.slowInputsKept?.count ?? 0) < CampaignResult.maxSlowInputsKept {
                    SlowInput.keep(SlowInput(bytes: bytes, origin: input.origin, outcome: outcome.execution.outcome.summary), in: &result.slowInputsKept)
                }
            }
            result.inputSequenceHash = Campaign.fnv(result.inputSequenceHash, input, byName: campaign.judge.traps != nil)
            if case .rejected(let reason?, _, _) = outcome.execution.outcome, !reason.rawValue.isEmpty {
                result.targetGivesReasons = true
            }
            if case .undecided(let why)? = outcome.verdict {
                let key = Normalize.message(why)
                if result.undecided[key] != nil || result.undecided.count < CampaignResult.maxUndecidedReasons {
                    result.undecided[key, default: 0] += 1
                }
            }
            if input.steps.isEmpty, !campaign.takesPath, shared.allSeedsRejected(rejected: outcome.execution.outcome.isRejected) {
                throw CorruptFuzzError(
                    .invalidArgument,
                    "the target rejected every seed given on standard input; if it reads a file path, put @@ where the path goes (--target '\(campaign.targetCommand) @@'). First seed's stderr: \(Campaign.firstLine(outcome.execution.stderr))"
                )
            }
            // Every run's coverage counts, a finding's too: a slot reports an edge only the
            // first time it sees it, so the job must not miss that time.
            var novelty = CoverageTable.Novelty.none
            if let sample = outcome.execution.coverage {
                novelty = coverage.add(sample)
                if result.coverage == nil { result.coverage = CoverageSummary() }
                // What is new to the campaign is new to this job (its table is part of it).
                if novelty != .none { result.coverage?.edges = shared.addCoverage(sample) }
                if !sample.comparisons.isEmpty { schedule.noteComparisons(sample.comparisons, of: input) }
            }
            if let finding = outcome.finding {
                if let index = records[finding.key] {
                    result.findings[index].count(finding, keys: &variantKeys[index])
                } else {
                    // Keyed by the detail as judged (the record's may add the reference
                    // validator's words), so that later hits like it count as its variant.
                    variantKeys.append([FindingVariant.key(of: finding.detail): 0])
                    records[finding.key] = result.findings.count
                    var record = FindingRecord(
                        finding: campaign.judge.withReference(finding), hits: 1, firstExecution: executionNumber(result.executions),
                        firstSeconds: (campaign.configuration.clock.now - shared.start).seconds)
                    // A worker's new hang is checked in a fresh process now, when that fits
                    // before fuzzing ends, so that fuzzing need not end early for its check.
                    let checkNow =
                        finding.kind == .hang
                        && plan?.hangCheckFits(at: campaign.configuration.clock.now, stretch: finding.execution.hangConfirmationStretch) == true
                    let newToCampaign = shared.noteFinding(finding.key, checkCost: checkNow ? .zero : plan?.checkCost(of: finding) ?? .zero)
                    // On disk before the next input runs (once per finding of the campaign, not
                    // per input): a run killed from now on still has it.
                    if newToCampaign { campaign.found?(record) }
                    if newToCampaign, checkNow {
                        // Seconds: the other jobs' large entries run meanwhile (this input stays
                        // in memory as the finding's).
                        schedule.largeEntryRan()
                        record.finding.execution.hangConfirmedAsReplayed = checkHang(finding)
                        // Not shown: the check after fuzzing runs it again, and needs its time.
                        if !record.finding.execution.hangConfirmedAsReplayed, let plan { shared.addCheckCost(plan.checkCost(of: finding)) }
                    }
                    result.findings.append(record)
                }
            } else {
                let behaviour = Campaign.behaviour(of: outcome.execution.outcome, verdict: outcome.verdict, normalized: &normalized)
                if behaviours.insert(behaviour).inserted || novelty != .none {
                    // Bounded: a loader whose messages quote the data would grow it forever.
                    if behaviours.count > Campaign.maxBehaviours { behaviours.removeAll() }
                    if novelty != .none { result.coverage?.inputsKept += 1 }
                    // Only a new edge makes it a favoured parent: another hit count of a loop
                    // is most often a longer input, slower to run.
                    let comparisons = outcome.execution.coverage?.comparisons ?? []
                    schedule.addToPool(input, reachedNewCode: novelty == .edge, comparisons: comparisons)
                    // Only what the others' pools would keep: an offer is held until every job
                    // has collected it, and a 12 MiB catalogue entry offered was in memory beside
                    // the next one.
                    if shared.exchange != nil, schedule.mayJoinPool(input) {
                        outbox.append(CorpusExchange.Offer(input: input, reachedNewCode: novelty == .edge, comparisons: comparisons))
                    }
                }
            }
        }
    }

    /// When a campaign's fuzzing ends, and how its jobs draw inputs.
    struct Plan: Sendable {
        /// When the campaign's time is up, if it has a duration.
        let end: FuzzInstant?
        /// The time left to minimization at the end, once there is a finding.
        let minimizeShare: Duration
        /// The time left to the report at the end.
        let reportMargin: Duration
        /// Inputs a job runs between looks at the clock and the others.
        let batchSize: Int
        /// The deadline of the fresh-process check of each finding (``checkCost(of:)``), when
        /// the campaign's findings are checked in a fresh process after fuzzing (a worker's);
        /// nil when they are not.
        var checkTimeout: Int? = nil
        /// How many findings are checked at once.
        var checkSlots = 1
        /// The time kept for the checks when they take more (``checkReserve(_:)``).
        var maxCheckReserve: Duration = .zero
        /// The time kept for one check that takes more than ``maxCheckReserve``, so that a hang's
        /// check (seconds) fits a short campaign (``checkReserve(_:)``).
        var maxOneCheckReserve: Duration = .zero

        /// What one finding's check in a fresh process can take: a hang's is its first deadline
        /// and its confirmation at twice the confirmation's deadline (seconds); a crash's or a
        /// memory blow-up's the deadline (a fresh process writes a full crash report); anything
        /// else's a quarter of it (a process's start, twice when the minimized input does not
        /// show the finding).
        /// - Parameter stretch: How much longer than its CPU time a hang's confirmation took
        ///   (``Execution/hangConfirmationStretch``): the check's confirmation, its deadline CPU
        ///   time too, is expected to take as much longer.
        func checkCost(of kind: FindingKind, stretch: Double = 1) -> Duration {
            guard let timeout = checkTimeout else { return .zero }
            switch kind {
            case .hang: return .milliseconds(timeout) + .milliseconds(2 * hangConfirmationMilliseconds(for: timeout)) * max(1, stretch)
            case .crash, .oom: return .milliseconds(timeout)
            default: return .milliseconds(timeout / 4)
            }
        }

        /// What fuzzing keeps for `finding`'s check: nothing when its input was checked as it
        /// was confirmed (``Execution/hangConfirmedAsReplayed``), else ``checkCost(of:stretch:)``
        /// at the load its hang's confirmation saw. Not what a slow input's check takes
        /// (``freshCheckCost(of:)``, seconds): kept, that ended fuzzing seconds early in a 15 s
        /// campaign, for a check that still did not fit.
        func checkCost(of finding: Finding) -> Duration {
            finding.execution.hangConfirmedAsReplayed ? .zero : checkCost(of: finding.kind, stretch: finding.execution.hangConfirmationStretch)
        }

        /// What checking `finding`'s input (and its minimized one) in a fresh process can take,
        /// to tell whether a check fits the time left: ``checkCost(of:stretch:)`` at the load its
        /// hang's confirmation saw; for any other finding at least two runs as long as the one
        /// that found it (the minimized input and the original; a crash's, as long as its full
        /// report took, ``Execution/fullReportMicroseconds``), and an input that was slow (it
        /// finished only when run again with the confirmation's deadline) misses the fresh
        /// process's deadline first.
        func freshCheckCost(of finding: Finding) -> Duration {
            let kindCost = checkCost(of: finding.kind, stretch: finding.execution.hangConfirmationStretch)
            guard let timeout = checkTimeout, finding.kind != .hang else { return kindCost }
            let ran = Duration.microseconds(max(finding.execution.microseconds, finding.execution.fullReportMicroseconds))
            let deadline = Duration.milliseconds(timeout)
            let slow = ran > deadline && finding.kind != .crash && finding.kind != .oom
            return max(kindCost, (slow ? deadline + ran : ran) * 2)
        }

        /// The time fuzzing and minimization leave the checks of findings: their cost shared
        /// among the slots, or the largest one's (a check runs on one slot); at most
        /// ``maxCheckReserve``, or the largest one's when that fits ``maxOneCheckReserve``.
        /// A check that does not fit what is left when it is due is not started
        /// (``FreshProcessCheck/notChecked(neededSeconds:leftSeconds:)``).
        func checkReserve(_ checks: CheckCost) -> Duration {
            let most = checks.largest <= maxOneCheckReserve ? max(maxCheckReserve, checks.largest) : maxCheckReserve
            return min(most, max(checks.largest, checks.total / max(1, checkSlots)))
        }

        /// Whether a hang's check in a fresh process, started at `now`, ends before fuzzing must
        /// (with a finding), when the campaign's findings are checked so. Not into minimization's
        /// share: the check's deadlines are CPU time, and on a loaded machine it takes longer
        /// (with two busy processes beside a demo's 15 s campaigns, a check allowed into that
        /// share ran 3.4 s past the duration and left 17 other findings no time for theirs).
        /// - Parameter stretch: ``Execution/hangConfirmationStretch`` of the hang.
        func hangCheckFits(at now: FuzzInstant, stretch: Double = 1) -> Bool {
            guard checkTimeout != nil else { return false }
            return end.map { now + checkCost(of: .hang, stretch: stretch) <= $0 - minimizeShare - reportMargin } ?? true
        }

        /// When fuzzing ends: at the end, or with a finding, early enough for its minimization,
        /// the checks of the findings so far and the report.
        func fuzzingEnd(anyFinding: Bool, checks: CheckCost) -> FuzzInstant? {
            guard anyFinding else { return end }
            return end.map { $0 - minimizeShare - reportMargin - checkReserve(checks) }
        }
    }

    /// What checking findings in a fresh process will cost: all of them, and the largest one.
    struct CheckCost: Sendable {
        var total: Duration = .zero
        var largest: Duration = .zero

        mutating func add(_ cost: Duration) {
            total += cost
            largest = max(largest, cost)
        }
    }

    /// What the jobs of a campaign share: the first failure, which findings any job has (for
    /// progress and the end's minimization share), the seeds run on standard input, the
    /// campaign's coverage, each job's executions as of its last batch, and the corpus
    /// exchange. Each is touched when a job has a new finding, edge or seed, or once per batch,
    /// never per input.
    final class Shared: @unchecked Sendable {
        let jobs: Int
        let start: FuzzInstant
        /// The jobs' kept inputs, offered to each other; nil for one job.
        let exchange: CorpusExchange?
        /// Held by a job from making a catalogue entry of a megabyte or more (up to 16 MB, read
        /// again by the validator) until it is judged: one at a time in the campaign, so that
        /// its memory does not grow with the jobs.
        let largeEntries = NSLock()
        private let lock = NSLock()
        private var executions: [Int]
        private var findings: Set<FindingKey> = []
        /// What checking `findings` in a fresh process will cost (``Plan/checkCost(of:)``).
        private var checks = CheckCost()
        private var coverage = CoverageTable()
        private var seedsRun = 0
        private var seedsRejected = 0
        private let seedCount: Int
        private var firstFailure: Failure?
        private var stopRequested = false

        /// What ended a campaign early.
        struct Failure {
            let error: CorruptFuzzError
            /// Whether the campaign throws it whatever ran before (the target rejected every
            /// seed on standard input), rather than report what it found with the error.
            let thrown: Bool
        }

        init(jobs: Int, start: FuzzInstant, seedCount: Int, exchangeWaits: Bool) {
            self.jobs = jobs
            self.start = start
            self.seedCount = seedCount
            executions = Array(repeating: 0, count: jobs)
            exchange = jobs > 1 ? CorpusExchange(jobs: jobs, waits: exchangeWaits) : nil
        }

        /// Records `job`'s executions; whether any job failed, the caller asked to stop, or any
        /// job has a finding, and what checking the findings in a fresh process will cost.
        func status(job: Int, executions count: Int) -> (failed: Bool, stopRequested: Bool, anyFinding: Bool, checks: CheckCost) {
            lock.withLock {
                executions[job] = count
                return (firstFailure != nil, stopRequested, !findings.isEmpty, checks)
            }
        }

        /// Ends every job at its next batch: the caller asked to stop.
        func requestStop() { lock.withLock { stopRequested = true } }

        /// Ends every job at its next batch (the first failure is the one reported).
        func fail(_ error: CorruptFuzzError, thrown: Bool) {
            lock.withLock { firstFailure = firstFailure ?? Failure(error: error, thrown: thrown) }
        }

        /// The first failure of any job.
        var failure: Failure? { lock.withLock { firstFailure } }

        /// Counts a seed run unchanged: whether it was the last of the campaign's seeds and
        /// every one was rejected.
        func allSeedsRejected(rejected: Bool) -> Bool {
            lock.withLock {
                seedsRun += 1
                if rejected { seedsRejected += 1 }
                return seedsRun == seedCount && seedsRejected == seedCount
            }
        }

        /// Adds a sample that showed a job something new: the campaign's edges.
        func addCoverage(_ sample: CoverageSample) -> Int {
            lock.withLock {
                coverage.add(sample)
                return coverage.edges
            }
        }

        /// Counts a finding new to a job, with what its check in a fresh process will cost
        /// (once per finding of the campaign).
        /// Returns whether no job had it.
        @discardableResult
        func noteFinding(_ key: FindingKey, checkCost: Duration) -> Bool {
            lock.withLock {
                guard findings.insert(key).inserted else { return false }
                checks.add(checkCost)
                return true
            }
        }

        /// Adds the cost of a finding's check after fuzzing that was not counted when it was noted.
        func addCheckCost(_ cost: Duration) {
            lock.withLock { checks.add(cost) }
        }

        /// The campaign's executions, distinct findings by kind and edges so far.
        func snapshot() -> (executions: Int, findingsByKind: [FindingKind: Int], edges: Int) {
            lock.withLock {
                var byKind: [FindingKind: Int] = [:]
                for key in findings { byKind[key.kind, default: 0] += 1 }
                return (executions.reduce(0, +), byKind, coverage.edges)
            }
        }

        /// The campaign's edges.
        var edges: Int { lock.withLock { coverage.edges } }
    }
}

/// The inputs each job of a campaign kept for new behaviour, offered to the others, as
/// libFuzzer's jobs share a corpus folder: a job publishes what it kept since its last trade as
/// one epoch, and reads the epochs the others published, every few hundred inputs.
///
/// When the campaign's runs are counted, a job trades every ``inputsPerEpoch`` inputs and takes
/// the others' epochs before its own last one, waiting for a job that has not finished one (it
/// may run one epoch ahead of the slowest before it waits): so each job's inputs, and the
/// campaign's, are the same for the same seed. With a duration, a job takes whatever the others
/// published and never waits.
final class CorpusExchange: @unchecked Sendable {
    /// One kept input, with what its parent selection needs.
    struct Offer: Sendable {
        let input: TestInput
        let reachedNewCode: Bool
        let comparisons: [Comparison]
    }

    /// The inputs a job runs between trades when the exchange waits.
    static let inputsPerEpoch = 512

    /// Whether a job waits for the epochs it takes (the campaign's runs are counted).
    let waits: Bool
    private let condition = NSCondition()
    /// Per job, the epochs it published and the others have not all read yet.
    private var epochs: [[[Offer]]]
    /// Per job, how many of its epochs were let go from the front of ``epochs``.
    private var released: [Int]
    /// Per job, whether it has ended (it publishes no more).
    private var finished: [Bool]
    /// Per reading job and publishing job, the next epoch to read.
    private var read: [[Int]]
    /// The bytes of the inputs held now, and the most held at once.
    private var heldBytes = 0
    private var mostHeld = 0
    var mostHeldBytes: Int { condition.withLock { mostHeld } }

    init(jobs: Int, waits: Bool) {
        self.waits = waits
        epochs = Array(repeating: [], count: jobs)
        released = Array(repeating: 0, count: jobs)
        finished = Array(repeating: false, count: jobs)
        read = Array(repeating: Array(repeating: 0, count: jobs), count: jobs)
    }

    /// Publishes `offers` as `job`'s next epoch.
    func publish(_ offers: [Offer], job: Int) {
        condition.withLock {
            epochs[job].append(offers)
            heldBytes += Self.bytes(of: offers)
            mostHeld = max(mostHeld, heldBytes)
            condition.broadcast()
        }
    }

    /// Marks `job` as ended: no one waits for its epochs any more.
    func finish(job: Int) {
        condition.withLock {
            finished[job] = true
            condition.broadcast()
        }
    }

    /// The others' offers `job` has not read, in job order: those of epochs up to `epoch`
    /// (waiting for a job that is still running and has not published it), or all published
    /// when `epoch` is nil.
    func collect(for job: Int, through epoch: Int?) -> [Offer] {
        condition.lock()
        defer { condition.unlock() }
        var offers: [Offer] = []
        for other in epochs.indices where other != job {
            if let epoch {
                while released[other] + epochs[other].count <= epoch, !finished[other] { condition.wait() }
            }
            let available = released[other] + epochs[other].count
            let end = epoch.map { min(available, $0 + 1) } ?? available
            while read[job][other] < end {
                offers += epochs[other][read[job][other] - released[other]]
                read[job][other] += 1
            }
            // Epochs every other job has read are let go.
            let readByAll = epochs.indices.filter { $0 != other }.map { read[$0][other] }.min() ?? 0
            if readByAll > released[other] {
                heldBytes -= epochs[other].prefix(readByAll - released[other]).reduce(0) { $0 + Self.bytes(of: $1) }
                epochs[other].removeFirst(readByAll - released[other])
                released[other] = readByAll
            }
        }
        return offers
    }

    private static func bytes(of offers: [Offer]) -> Int { offers.reduce(0) { $0 + ($1.input.bytes?.count ?? 0) } }
}

extension Outcome {
    /// Whether the loader rejected the input.
    var isRejected: Bool {
        if case .rejected = self { true } else { false }
    }
}
