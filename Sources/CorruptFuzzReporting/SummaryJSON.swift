import CorruptFuzzCore
import CorruptFuzzRunner
import Foundation

/// The machine-readable summary written beside junit.xml as summary.json.
public struct SummaryJSON: Codable, Sendable {
    public struct Target: Codable, Sendable {
        public var name: String
        public var command: String
        public var validator: String?
        public var seed: UInt64
        public var executions: Int
        public var executionsPerSecond: Double
        public var fuzzSeconds: Double
        public var durationSeconds: Double
        public var stopReason: String
        /// A failure of corrupt-fuzz itself that ended the campaign early, if any.
        public var toolError: String?
        /// Processes the target left running outside its process group, killed by the campaign.
        public var escapedProcessesKilled: Int
        /// Inputs the validator could not decide, by reason: they were not labeled.
        public var undecided: [String: Int]
        /// Inputs that missed the deadline once and finished when run again with a longer one:
        /// slow, not hangs.
        public var slowInputs: Int
        /// With a persistent worker: findings a worker's process showed only after it had lived
        /// through a trap, which a fresh process did not show; left out of the findings.
        public var findingsOnlyAfterTrap: Int?
        /// With a persistent worker (`--worker`): inputs run again, how many differed, an example.
        public var stability: Stability?
        /// An instrumented target's coverage: edges reached, inputs kept for new ones (absent:
        /// the target showed none, or `--no-coverage`).
        public var coverage: CoverageSummary?
        /// A hash of every input run, in order: equal for equal seeds and corpora.
        public var inputSequenceHash: String
        public var counts: [String: Int]
        /// Findings that are not expected (see ``Entry/expected``).
        public var newFindings: Int
        public var findings: [Entry]
    }

    public struct Entry: Codable, Sendable {
        public var kind: String
        public var signature: String
        public var detail: String
        public var hits: Int
        public var firstExecution: Int
        public var firstSeconds: Double
        public var reproducer: String?
        public var original: String?
        public var replay: String
        public var input: String
        public var originalBytes: Int?
        public var minimizedBytes: Int?
        /// Why the finding is expected (a known-findings file lists it, or the regression
        /// store reproduced it); nil for a new finding.
        public var expected: String?
        /// The line of the schema that declares the broken rule, `FILE:LINE`.
        public var location: String?
        /// How minimization ended: `1-minimal`, `out of executions` or `out of time`.
        public var minimization: String?
        /// The distinct details of the finding, when it had more than one.
        public var variants: [Variant]?
        /// Hits whose detail was new after the counted variants.
        public var uncountedVariantHits: Int?
        /// Found in a persistent worker and not shown the same way by a fresh process (what
        /// the replay runs): `original only` (the original shows it there, and is the
        /// reproducer) or `not reproduced`; nil otherwise.
        public var freshProcess: String?
        /// With `not reproduced`: what the replay shows instead, `KIND: SIGNATURE` or `none`.
        public var freshProcessFinding: String?
    }

    /// One distinct detail of a finding: how often, and the file of its first input.
    public struct Variant: Codable, Sendable {
        public var detail: String
        public var hits: Int
        public var input: String?
    }

    public var tool = "corrupt-fuzz"
    public var runID: String
    public var reportFolder: String
    public var timestamp: String
    public var executions: Int
    public var executionsPerSecond: Double
    public var durationSeconds: Double
    public var counts: [String: Int]
    /// Findings that are not expected: what a nightly job fails on.
    public var newFindings: Int
    public var targets: [Target]

    /// Builds the summary of `report`.
    public init(_ report: RunReport) {
        runID = report.runID
        reportFolder = report.folder
        timestamp = report.timestamp
        targets = report.suites.map { suite in
            let r = suite.result
            return Target(
                name: r.targetName, command: r.targetCommand, validator: r.validatorName, seed: r.configuration.seed,
                executions: r.executions, executionsPerSecond: Self.round(r.executionsPerSecond),
                fuzzSeconds: Self.round(r.fuzzSeconds), durationSeconds: Self.round(r.totalSeconds),
                stopReason: r.stopReason.description, toolError: r.toolError, escapedProcessesKilled: r.escapedProcessesKilled, undecided: r.undecided,
                slowInputs: r.slowInputs, findingsOnlyAfterTrap: r.findingsOnlyAfterTrap > 0 ? r.findingsOnlyAfterTrap : nil, stability: r.stability,
                coverage: r.coverage,
                inputSequenceHash: String(r.inputSequenceHash, radix: 16), counts: Self.counts(r.findings.map(\.finding.kind)),
                newFindings: suite.newFindings.count,
                findings: r.findings.enumerated().map { index, record in
                    let saved = index < suite.reproducers.count ? suite.reproducers[index] : nil
                    return Entry(
                        kind: record.finding.kind.rawValue, signature: record.finding.signature,
                        detail: record.finding.detail, hits: record.hits, firstExecution: record.firstExecution,
                        firstSeconds: Self.round(record.firstSeconds), reproducer: saved?.minimized,
                        original: saved?.original, replay: saved?.replayCommand ?? "",
                        input: record.finding.input.origin, originalBytes: record.finding.input.bytes?.count,
                        minimizedBytes: record.minimized?.count, expected: suite.expectation(for: record.finding.key),
                        location: saved?.location, minimization: record.minimizationEnd?.rawValue,
                        variants: record.variants?.enumerated().map { index, variant in
                            Variant(detail: variant.detail, hits: variant.hits, input: index == 0 ? saved?.original : saved?.variantInputs?[index])
                        }, uncountedVariantHits: record.uncountedVariantHits, freshProcess: record.freshProcess?.label,
                        freshProcessFinding: record.freshProcess?.replayedFinding)
                })
        }
        executions = targets.reduce(0) { $0 + $1.executions }
        let fuzzSeconds = targets.reduce(0) { $0 + $1.fuzzSeconds }
        executionsPerSecond = Self.round(fuzzSeconds > 0 ? Double(executions) / fuzzSeconds : 0)
        durationSeconds = Self.round(targets.reduce(0) { $0 + $1.durationSeconds })
        counts = Self.counts(report.suites.flatMap { $0.result.findings.map(\.finding.kind) })
        newFindings = report.newFindingCount
    }

    /// The summary as pretty-printed JSON with sorted keys.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    private static func counts(_ kinds: [FindingKind]) -> [String: Int] {
        var counts = Dictionary(uniqueKeysWithValues: FindingKind.allCases.map { ($0.rawValue, 0) })
        for kind in kinds { counts[kind.rawValue, default: 0] += 1 }
        return counts
    }

    private static func round(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
}
